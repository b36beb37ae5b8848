// A pool's shared state: starting the workers, shutting them down, metrics, unhandled exceptions.
#include "crew/detail/registry.hpp"

#include <cstdio>
#include <exception>
#include <string>

namespace crew::detail {

namespace {
// Written only by the child fork handler, while the child has a single thread; read later by that
// thread and by threads it starts (thread creation orders the write before them): relaxed.
std_atomics::atomic<std::uint32_t> fork_generation_{0};
}  // namespace

std::uint32_t fork_generation() noexcept { return fork_generation_.load(std::memory_order_relaxed); }

void note_fork_in_child() noexcept { fork_generation_.fetch_add(1, std::memory_order_relaxed); }

registry::registry(registry_config config)
    : config_(std::move(config)), lot_(config_.threads), driver_(std::make_unique<io_driver>()),
      trace_(trace::open_session(config_.trace, config_.threads, config_.trace_events, config_.name)) {
    lot_.set_driver_wake(&io_driver::unpark_thunk, driver_.get());
    if (config_.pin_threads) pin_cpus_ = os::process_cpus();
    workers_.reserve(config_.threads);
    for (unsigned i = 0; i < config_.threads; ++i) {
        workers_.push_back(std::make_unique<worker>(*this, i, lot_));
        workers_.back()->attach_trace(trace::ring_for(trace_.get(), i));
    }
    threads_.reserve(config_.threads);
    try {
        for (unsigned i = 0; i < config_.threads; ++i) {
            threads_.push_back(std::make_unique<os::thread>());
            threads_.back()->start(&registry::thread_entry, workers_[i].get(), config_.stack_size);
        }
    } catch (...) {
        shutdown();
        throw;
    }
    open_start_gate();
}

registry::~registry() {
    if (forked_away()) return;  // the threads are the parent's: nothing here to stop or join
    for (auto& t : threads_) {
        if (t->is_current()) {
            std::fputs("crew: a pool was destroyed by one of its own tasks; it cannot wait for itself\n", stderr);
            std::terminate();
        }
    }
    shutdown();
}

void registry::open_start_gate() noexcept {
    // release: pairs with the acquire load in thread_entry(); a worker past the gate sees every
    // worker object (all were built before the first thread started; this keeps it explicit).
    start_gate_.store(1, std::memory_order_release);
    std_atomics::wake_all(start_gate_);
}

void registry::shutdown() noexcept {
    open_start_gate();  // after a failed start, the started workers still wait there
    injector_.close();
    // release: pairs with stopping()'s acquire; a worker that sees it also sees the closed injector
    // and every item pushed before the close.
    stopping_.store(true, std::memory_order_release);
    lot_.notify_all();
    for (auto& t : threads_) t->join();
    async_tasks_.drain();  // coroutine tasks still suspended: nothing can run them any more
}

void registry::thread_entry(void* arg) noexcept {
    auto* self = static_cast<worker*>(arg);
    registry& owner = self->owner();
    const unsigned index = self->index();
    os::set_current_thread_name(owner.config_.name + "-" + std::to_string(index));
    if (!owner.pin_cpus_.empty()) (void)os::pin_current_thread(owner.pin_cpus_[index % owner.pin_cpus_.size()]);
    // acquire: pairs with open_start_gate()'s release store.
    while (owner.start_gate_.load(std::memory_order_acquire) == 0) std_atomics::wait(owner.start_gate_, 0);
    set_current_worker(self);
    owner.run_hook(owner.config_.on_thread_start, index, "an on_thread_start hook");
    self->run_loop();
    // Out of the pool before the stop hook: work it submits here must not land on a deque that
    // nobody will run again.
    set_current_worker(nullptr);
    owner.run_hook(owner.config_.on_thread_stop, index, "an on_thread_stop hook");
}

void registry::run_hook(const thread_hook& hook, unsigned index, const char* source) noexcept {
    if (!hook) return;
    try {
        hook(index);
    } catch (...) {
        report_unhandled(std::current_exception(), source);
    }
}

void registry::throw_refused() const {
    if (forked_away())
        throw usage_error("crew: this pool was created before fork(); its threads exist only in the parent "
                          "process (a forked child may use crew::default_pool(), which starts afresh)");
    throw pool_closed_error();
}

void registry::report_unhandled(std::exception_ptr error, const char* source) noexcept {
    if (config_.on_unhandled_exception) {
        try {
            config_.on_unhandled_exception(error);
            return;
        } catch (...) {
            std::fputs("crew: the unhandled-exception handler itself threw; printing instead\n", stderr);
        }
    }
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "crew: exception escaped %s: %s\n", source, e.what());
    } catch (...) {
        std::fprintf(stderr, "crew: exception of unknown type escaped %s\n", source);
    }
}

namespace {

worker_metrics read_worker(const worker& w) {
    const worker_counters& c = w.counters();
    auto get = [](const worker_counters::counter& x) { return x.load(std::memory_order_relaxed); };
    worker_metrics m;
    // A join's inline half after a private take-back is counted in the fork array's depth word.
    m.tasks_run = get(c.tasks_run) + w.inline_runs();
    m.async_tasks_run = get(c.async_tasks_run);
    m.fork_join_tasks_run = m.tasks_run > m.async_tasks_run ? m.tasks_run - m.async_tasks_run : 0;
    m.steals = get(c.steals);
    m.steal_operations = get(c.steal_operations);
    m.failed_steals_empty = get(c.failed_steals_empty);
    m.failed_steals_lost = get(c.failed_steals_lost);
    m.failed_steals = m.failed_steals_empty + m.failed_steals_lost;
    m.injector_pops = get(c.injector_pops);
    m.ring_overflows = get(c.ring_overflows);
    m.lifo_hits = get(c.lifo_hits);
    m.budget_yields = get(c.budget_yields);
    m.parks = get(c.parks);
    m.unparks = get(c.unparks);
    m.searches = get(c.searches);
    const worker_counters::times t = c.read_times();
    m.busy_time = std::chrono::nanoseconds(t.busy_ns);
    m.search_time = std::chrono::nanoseconds(t.search_ns);
    m.park_time = std::chrono::nanoseconds(t.park_ns);
    for (std::size_t i = 0; i < latency_histogram::bucket_count; ++i)
        m.schedule_latency.buckets[i] = get(c.latency_buckets[i]);
    m.schedule_latency.sum = std::chrono::nanoseconds(get(c.latency_sum_ns));
    const std::int64_t depth = w.queued_hint();
    m.deque_depth = depth > 0 ? static_cast<std::uint64_t>(depth) : 0;
    m.max_deque_depth = get(c.max_depth);
    m.max_ring_depth = get(c.max_ring_depth);
    return m;
}

}  // namespace

// Each counter is read once (relaxed): the snapshot is per-counter consistent, not one instant.
void registry::dump_trace(const std::string& path) const {
    if (!trace_) throw usage_error("crew::pool::dump_trace: this pool does not trace (set pool_options::trace or CREW_TRACE)");
    trace_->write(path.empty() ? trace_->path() : path);
}

// A worker's times in a snapshot never fall below what an earlier snapshot reported (see
// reported_times_). Called under metrics_mutex_.
void registry::keep_monotonic(worker_metrics& m, std::size_t i) const {
    if (reported_times_.size() < workers_.size()) reported_times_.resize(workers_.size(), {0, 0, 0});
    worker_counters::times& last = reported_times_[i];
    auto clamp = [](std::chrono::nanoseconds& t, std::uint64_t& floor) {
        const auto ns = static_cast<std::uint64_t>(t.count());
        if (ns < floor) t = std::chrono::nanoseconds(floor);
        else floor = ns;
    };
    clamp(m.busy_time, last.busy_ns);
    clamp(m.search_time, last.search_ns);
    clamp(m.park_time, last.park_ns);
}

pool_metrics registry::metrics() const {
    pool_metrics m;
    std::lock_guard lock(metrics_mutex_);
    m.workers.reserve(workers_.size());
    std::uint64_t queued = 0;
    for (const auto& w : workers_) {
        m.workers.push_back(read_worker(*w));
        keep_monotonic(m.workers.back(), m.workers.size() - 1);
        m.total_spawned += m.workers.back().tasks_run;
        queued += m.workers.back().deque_depth + m.workers.back().ring_depth;
    }
    // Read after every worker (each read its own clock inside its snapshot): no worker's times
    // add up to more than the interval.
    const std::uint64_t now = worker_counters::now_ns();
    m.taken_at = std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::nanoseconds(now)));
    m.interval = std::chrono::nanoseconds(now > started_ns_ ? now - started_ns_ : 0);
    m.injector_length = injector_.size_hint();
    m.total_spawned += queued + m.injector_length;
    m.searching = lot_.searching();
    m.parked = lot_.sleepers();
    return m;
}

}  // namespace crew::detail

namespace crew::detail {
io_driver& driver_of(registry& r) noexcept { return r.driver(); }
}  // namespace crew::detail
