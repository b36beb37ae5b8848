// The worker's busy half: finding work, stealing, the coroutine queues, and waiting while helping.
// The idle half (spinning, lingering, parking) is src/worker_idle.cpp.
#include "crew/detail/worker.hpp"

#include "crew/detail/async_schedule.hpp"
#include "crew/detail/registry.hpp"
#include "worker_tuning.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace crew::detail {

constinit thread_local worker* current_worker = nullptr;

namespace {

using namespace tuning;

std::uint64_t splitmix64(std::uint64_t x) noexcept {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

}  // namespace

worker::worker(registry& owner, unsigned index, parking& lot)
    : owner_(owner), lot_(lot), index_(index),
      rng_(splitmix64(index + 1 + reinterpret_cast<std::uintptr_t>(&owner))), cache_(&owner.task_blocks()) {}

void worker::run_loop() {
    // Start asleep (announce, re-check, park): a new pool has no work, and n workers that each
    // began with a search would sweep all n deques 25 times each (quadratic start-up).
    counters_.enter(worker_state::search);
    // Every worker exists by now (the start gate): with none beside this one, nothing steals here.
    alone_ = owner_.size() == 1;
    park_cold(nullptr);
    for (;;) {
        if (task* t = find_task()) {
            if (searching_) found_work_cold();
            if (metrics_enabled && counters_.state() != worker_state::busy) note_busy_cold();
            spins_ = 0;
            floor_ = deque_.owner_bottom();  // what t pushes lands at or above this index
            execute(t);
        } else if (!idle_cold(nullptr)) {
            counters_.enter(worker_state::off);
            return;
        }
    }
}

// A thief or a sleeper asked: the oldest private fork goes to the deque, whose push notifies a
// sleeper when the lot wants one.
void worker::answer_request_cold() { forks_.promote_oldest(*this); }

// Before a wait (or a raised floor): every private fork becomes stealable, so thieves can run the
// work of the waiting frames, and forks made from now on are the only private ones (they belong to
// the tasks run on top of the wait, whose floor they land above when promoted).
void worker::publish_forks_cold() {
    while (forks_.has_private()) forks_.promote_oldest(*this);
}

void worker::wait_until(completion& done) {
    if (forks_.has_private()) publish_forks_cold();
    // The waiting frame may be a coroutine task (crew::join inside it): every task found here gets
    // a fresh budget (find_task) and a coroutine run leaves its thread-locals behind
    // (async_schedule.hpp), so the waiting task's are put back after each nested run.
    const nested_async_run saved_run;
    while (!done.is_set()) {
        bool related = false;
        if (task* t = find_help(related)) {
            if (searching_) found_work_cold();
            if (metrics_enabled && counters_.state() != worker_state::busy) note_busy_cold();
            spins_ = 0;
            run_helped(t, related);
            saved_run.restore();
        } else if (may_help_unrelated()) {
            idle_cold(&done);
        } else {
            // Only related work may run here and none is left: it is all with other workers (or
            // it is the awaited job itself). Sleep on the flag, outside the pool's parking lot,
            // so that wakes meant for workers that can take any task never come here.
            if (searching_) {
                searching_ = false;
                lot_.end_search();
            }
            note_park_begin();
            trace::park(trace_, trace::park_kind::join_wait);
            done.block();
            trace::unpark(trace_, trace::park_kind::join_wait);
            note_park_end();
        }
    }
    if (metrics_enabled && counters_.state() != worker_state::busy) note_busy_cold();
    if (searching_) {
        searching_ = false;
        lot_.end_search();
    }
    spins_ = 0;
}

// A task for a waiting worker: related work first (own deque above floor_), then, if allowed,
// anything find_task() finds.
task* worker::find_help(bool& related) {
    if (deque_.owner_bottom() > floor_) {
        if (task* t = pop()) {
            related = true;
            return t;
        }
    }
    related = false;
    return may_help_unrelated() ? find_task() : nullptr;
}

// Run a task on top of a waiting frame. Related work (the waiting task's own descendant) is
// run_related's; unrelated work also counts toward the depth bound and must not see the waiting
// task's cancellation (it does not belong to its group).
void worker::run_helped(task* t, bool related) {
    if (related) return run_related(t);
    ++help_depth_;
    cancel_context* const saved_context = std::exchange(current_context, nullptr);
    run_related(t);  // the floor and nesting bookkeeping
    current_context = saved_context;
    --help_depth_;
}

// The search order: the injector on its interval; this worker's deque (fork-join, LIFO: its
// cost is what it was); this worker's coroutine tasks (the LIFO slot within its run limit, then
// the ring); a steal round (deques, then rings, LIFO slots only on the last pass); the injector.
task* worker::find_task() {
    if (--driver_countdown_ == 0) [[unlikely]] poll_driver_cold();
    if (--injector_countdown_ == 0) [[unlikely]] {
        if (task* t = injector_tick_cold()) return t;
    }
    // The fence-free empty check first (size_hint: top only grows, so a top at or past our own
    // bottom means empty now): a worker running coroutine tasks skips pop()'s seq_cst fence.
    if (deque_.size_hint() > 0) {
        if (task* t = pop()) return t;
    }
    if (task* t = find_async_local()) return t;
    return find_remote_cold();
}

// Nothing local: a steal round, then the injector. Out of line (session 17): inlined, the
// injector's lock made find_task (once per task run) save five registers on every call.
task* worker::find_remote_cold() {
    if (task* t = steal_round()) return t;
    return pop_injector_batch();
}

// The injector in batches. Nothing was local and nothing could be stolen, so our ring is empty
// (only this thread pushes; a steal round that took anything returned it). Take the injector's
// oldest task to run now and, in the same lock acquisition, the overflowed coroutine tasks right
// behind it into our ring: this worker's share of the queue (its length / the worker count + 1),
// at most half a ring, as Tokio pulls its inject queue. A ring that overflows later sends its
// NEWEST half back, and these, the oldest, are never in it, so no task bounces between the two
// (async_ring.hpp, "Overflow"). Tasks a thread outside the pool spawned carry the injection stamp
// (the schedule-latency histogram measures them to their start) and come one at a time, as do
// fork-join jobs. Stale entries are dropped as they are moved (each holds its frame until then).
// The ring's push cannot overflow here (half a ring of room at least: a steal in
// progress claims at most half), and would hand the task back to the injector if it did.
task* worker::pop_injector_batch() {
    constexpr std::size_t most = decltype(ring_)::capacity() / 2;
    auto& injector = owner_.injector();
    const std::size_t share = std::min(injector.size_hint() / owner_.size() + 1, most);
    task* batch[most];
    const std::size_t n =
        injector.pop_batch(batch, share, [](const task* t) { return t->queued_at == 0 && is_async_task(t); });
    if (n == 0) return nullptr;
    for (std::size_t i = 1; i < n; ++i)  // a stale entry (its awaiter ran it inline) is dropped, not queued
        if (!drop_stale_entry(batch[i])) push_async_quiet(batch[i]);
    worker_counters::bump(counters_.injector_pops, n - 1);  // note_injected counts batch[0]
    begin_async_run();  // batch[0] may be a coroutine task: a fresh budget
    lifo_runs_ = 0;
    return note_injected(batch[0]);
}

// The interval is up: retune it, then look at the injector first, then at a stuck worker's ring.
task* worker::injector_tick_cold() {
    const std::int64_t now = retune_interval_cold();
    injector_countdown_ = injector_interval_;
    auto& injector = owner_.injector();
    if (!injector.empty_hint()) {
        if (task* t = injector.pop()) {
            begin_async_run();
            lifo_runs_ = 0;
            return note_injected(t);
        }
    }
    return alone_ ? nullptr : steal_stuck_cold(now);
}

// One clock read per interval: the time since the last one over the calls in between is a sample
// of the time per call (task runs included); a window that spans a park is discarded.
std::int64_t worker::retune_interval_cold() noexcept {
    const std::int64_t now = now_ns();
    if (window_start_ns_ != 0 && now > window_start_ns_) {
        const double sample = static_cast<double>(now - window_start_ns_) / injector_interval_;
        mean_tick_ns_ = mean_tick_ns_ == 0 ? sample : ewma_alpha * sample + (1 - ewma_alpha) * mean_tick_ns_;
        const double wanted = target_interval_ns / std::max(mean_tick_ns_, 1.0);
        injector_interval_ = static_cast<std::uint32_t>(
            std::clamp(wanted, static_cast<double>(min_interval), static_cast<double>(max_interval)));
    }
    window_start_ns_ = now;
    return now;
}

// This worker's own coroutine tasks: the LIFO slot (at most max_lifo_runs in a row; past that its
// occupant goes to the back of the ring, so a ping-pong pair cannot starve the ring; with the ring
// empty it runs at once, as the ring's next task), then the ring's oldest task.
// A pool of one worker has no thieves: the slot and the ring are then taken without an RMW.
[[gnu::always_inline]] inline task* worker::find_async_local() {
    const bool alone = alone_;
    if (task* t = lifo_.load(std::memory_order_relaxed)) {  // relaxed: only this thread puts
        if (alone) {
            lifo_.store(nullptr, std::memory_order_relaxed);  // no thief can take it meanwhile
        } else {
            // acquire: pairs with wake_async's release store or exchange (the task's state is visible).
            t = lifo_.exchange(nullptr, std::memory_order_acquire);
        }
        if (t != nullptr && lifo_runs_ < max_lifo_runs) {
            ++lifo_runs_;
            worker_counters::bump(counters_.lifo_hits);
            start_async(true);
            return t;
        }
        if (t != nullptr) {
            if (task* next = past_lifo_limit_cold(t)) return next;
        }
    }
    if (task* t = alone ? ring_.pop_unshared() : ring_.pop()) {
        start_async(false);
        return t;
    }
    return nullptr;
}

// Inlined into its callers here (its only callers): out of line it was a call per coroutine run.
[[gnu::always_inline]] inline void worker::start_async(bool from_lifo) noexcept {
    if (!from_lifo) lifo_runs_ = 0;
    begin_async_run();
    worker_counters::bump(counters_.async_tasks_run);
}

// The LIFO slot's task past the run limit. An empty ring (exact for its owner: thieves only take)
// has nothing to starve: it runs now, as the ring's next task would, without the push and pop (a
// chain of spawns, session 12). Else it goes to the back of the ring (a stale entry is dropped).
task* worker::past_lifo_limit_cold(task* t) {
    if (ring_.empty_hint()) {
        start_async(false);
        return t;
    }
    if (!drop_stale_entry(t)) push_async(t);
    return nullptr;
}

void worker::push_async(task* t) {
    push_async_quiet(t);
    notify_async_running();
}

// The notify rule of a coroutine task queued by a task that goes on running (a spawn, a wake from
// a channel or a mutex): the full notify (with its fence), not push()'s hinted one: the task may
// sit behind a long run of the one now running (stranding), so a sleeper must not miss it. A pool
// of one worker skips it: that worker is this one, and it is awake (nobody else could run it).
void worker::notify_async_running() noexcept {
    if (!alone_) lot_.notify_one();
}

// The ring push alone (the caller notifies).
void worker::push_async_quiet(task* t) {
    const ring_push how =
        ring_.push_back(t, [this](task* const* items, std::size_t n) { overflow_async_cold(items, n); });
    if (how != ring_push::pushed) [[unlikely]] {
        worker_counters::bump(counters_.ring_overflows);
    } else if (std::size_t depth = ring_.size_hint(); depth > max_ring_seen_) [[unlikely]] {
        note_ring_depth_cold(depth);
    }
}

// `run_over`: the waking task's run has ended (async_wake::wake_at_end: it completed). Then, when
// this worker goes straight back to its queues after it (not a run nested in a wait, no fork-join
// item of its own ahead of the LIFO slot), the notify is a yield's: nothing can be stranded
// behind a run that is over. Otherwise the full notify of notify_async_running().
void worker::wake_async(task* t, bool run_over) {
    task* previous = lifo_.load(std::memory_order_relaxed);  // relaxed: only this thread puts
    if (previous == nullptr || alone_) {
        // Empty, and only this thread puts (thieves only take, leaving it empty), or a pool of one
        // worker (no thief at all): a plain store suffices, no locked instruction. release: pairs
        // with the acquire exchange of whoever takes it (this worker or a thief), as below.
        lifo_.store(t, std::memory_order_release);
    } else {
        // release: as above. acquire: the previous occupant was put by this thread; nothing to
        // order, kept symmetric.
        previous = lifo_.exchange(t, std::memory_order_acq_rel);
    }
    // A displaced entry whose run its awaiter took inline is dropped here, on its owner, instead of
    // waiting in the ring for a pop or a thief (task_state.hpp, "Displacement").
    if (previous != nullptr && !drop_stale_entry(previous)) push_async_quiet(previous);
    if (alone_) return;  // one worker: it is this one, and it is awake
    if (run_over && helped_nesting_ == 0 && deque_.size_hint() <= 0)
        lot_.notify_one_hinted();
    else
        notify_async_running();
}

// A yield (yield_now, an exhausted budget, a wake during the run): the run has ended, so this
// worker goes back to its queues right away and nothing can be stranded behind it; the hinted
// notify (no fence) only spreads work to a worker that is asleep while no one searches.
void worker::yield_async(task* t) {
    if (async_budget_left == 0) worker_counters::bump(counters_.budget_yields);
    push_async_quiet(t);
    if (!alone_) lot_.notify_one_hinted();  // one worker: it is this one
}

// The ring was full: its newest half and the new task go to the injector in one lock acquisition.
// Accepted even while the pool shuts down (the workers drain the injector before they leave).
void worker::overflow_async_cold(task* const* items, std::size_t n) {
    (void)owner_.injector().push_batch(items, n, /*from_worker=*/true);
}

void worker::note_ring_depth_cold(std::size_t depth) noexcept {
    max_ring_seen_ = depth;
    counters_.max_ring_depth.store(depth, std::memory_order_relaxed);
}

// A victim's lone coroutine task (the only one in its ring, or its LIFO slot) is left to the victim
// when the victim takes a task within lone_task_grace_ns (its ring head moves, or its LIFO slot
// changes): it is not stuck, it runs the task itself in a moment, and a thief that took it would
// move a spawn+await or a ping-pong pair to another core on every round (at 2 workers that cost
// more than the futex wakes). A victim that takes nothing for the grace is stuck in one run (or in
// fork-join work): the task is taken, so a task queued behind a long run still starts on an idle
// worker within the grace. The thief watches with pauses (it has nothing else to do); a watch of
// its own memory across backoff rounds was tried first and stranded for milliseconds on a loaded
// machine (a sched_yield round between two looks). True: leave it.
bool worker::leave_lone_task_cold(worker& v) noexcept {
    if constexpr (!lone_task_rule) return false;
    // relaxed: progress hints; what is taken is decided by the ring's CAS or the slot's exchange.
    const std::uint32_t head = v.ring_.head_hint();
    const task* const slot = v.lifo_.load(std::memory_order_relaxed);
    const std::int64_t start = now_ns();
    do {
        for (int i = 0; i < 16; ++i) std_atomics::pause();
        if (v.ring_.head_hint() != head || v.lifo_.load(std::memory_order_relaxed) != slot) return true;
    } while (now_ns() - start < lone_task_grace_ns);
    return false;
}

// Half of `victim`'s ring into ours; the last stolen task runs now.
task* worker::steal_async_cold(worker& victim, bool& lost) noexcept {
    const std::size_t queued = victim.ring_.size_hint();
    if (queued == 0) return nullptr;
    if (queued == 1 && leave_lone_task_cold(victim)) return nullptr;
    ring_steal_result<task> r = victim.ring_.steal_into(ring_);
    if (r.status == ring_steal::success) {
        worker_counters::bump(counters_.steals, r.count);
        worker_counters::bump(counters_.steal_operations);
        start_async(false);
        return r.task;
    }
    lost |= r.status == ring_steal::busy;
    return nullptr;
}

// The last pass of a steal round: other workers' LIFO slots (Go's compromise: a slot is taken only
// by a thief that found nothing else, so a ping-pong pair usually stays on its worker, yet a task
// woken behind a long run is not stranded; Tokio #4941).
task* worker::steal_lifo_cold() noexcept {
    const unsigned n = owner_.size();
    unsigned victim = static_cast<unsigned>(next_random() % n);
    for (unsigned i = 0; i < n; ++i, victim = victim + 1 == n ? 0 : victim + 1) {
        if (victim == index_) continue;
        if (task* t = steal_lifo_from(owner_.worker_at(victim))) return t;
    }
    return nullptr;
}

task* worker::steal_lifo_from(worker& v) noexcept {
    if (v.lifo_.load(std::memory_order_relaxed) == nullptr) return nullptr;  // relaxed: a hint
    if (v.ring_.empty_hint() && leave_lone_task_cold(v)) return nullptr;
    return take_lifo_of(v);
}

// Take `v`'s LIFO slot (a thief's last pass, or the stuck-worker watch) and start its task.
task* worker::take_lifo_of(worker& v) noexcept {
    // acquire: pairs with the owner's release store or exchange in wake_async.
    task* t = v.lifo_.exchange(nullptr, std::memory_order_acquire);
    if (t == nullptr) return nullptr;
    worker_counters::bump(counters_.steals);
    worker_counters::bump(counters_.steal_operations);
    start_async(false);
    return t;
}

// One sweep over every other worker from a random start; sweeps again while some steal lost a race
// (work is there, someone else just got to it first).
task* worker::steal_round() {
    const unsigned n = owner_.size();
    if (n <= 1) return nullptr;
    for (;;) {
        bool lost = false;
        unsigned victim = static_cast<unsigned>(next_random() % n);
        for (unsigned i = 0; i < n; ++i, victim = victim + 1 == n ? 0 : victim + 1) {
            if (victim == index_) continue;
            worker& v = owner_.worker_at(victim);
            steal_result<task> r = v.steal_from();
            if (r.status == steal_status::success) {
                worker_counters::bump(counters_.steals);
                worker_counters::bump(counters_.steal_operations);
                trace::steal(trace_, victim);
                return r.item;
            }
            const bool lost_race = r.status == steal_status::lost;
            if (!lost_race) v.request_work();  // empty: ask v to promote a private fork
            worker_counters::bump(lost_race ? counters_.failed_steals_lost : counters_.failed_steals_empty);
            lost |= lost_race;
            if (task* t = steal_async_cold(v, lost)) return t;
            if constexpr (lifo_always_stealable) {  // Tokio's shape (see async_schedule.hpp)
                if (task* t = steal_lifo_from(v)) return t;
            }
        }
        if (lost) continue;
        // The last pass: after a park was called off for visible work, or a few spin rounds in.
        if (lifo_pass_ || spins_ >= pause_rounds) {
            lifo_pass_ = false;
            return steal_lifo_cold();
        }
        return nullptr;
    }
}

// A busy worker never runs steal_round, so tasks queued on a worker that stops taking them (the OS
// descheduled its thread, or one run is long) would wait for it however long that takes, while
// this worker keeps finding work of its own (a readiness poll refills its ring). Asio's one shared
// queue has no such tail. So at every injector tick (about every 200 us of tasks, the clock
// read there reused: no clock read of its own) this worker looks at one other worker's ring: when
// its head has not moved since an earlier look, at least stuck_grace_ns ago, while tasks wait
// there, half of them move here (the ring's ordinary steal: no protocol change), the last one to
// run now. Otherwise the watch restarts on the next worker. Rings that are empty (fork-join work)
// cost two relaxed loads per look.
task* worker::steal_stuck_cold(std::int64_t now) noexcept {
    worker& v = owner_.worker_at(watch_victim_);
    const std::uint32_t head = v.ring_.head_hint();  // relaxed: a progress hint, as leave_lone_task_cold
    const task* const slot = v.lifo_.load(std::memory_order_relaxed);  // relaxed: a progress hint too
    const bool in_ring = !v.ring_.empty_hint();
    if (watch_since_ns_ != 0 && (in_ring || slot != nullptr) && head == watch_head_ && slot == watch_slot_ &&
        &v != this) {
        if (now - watch_since_ns_ < stuck_grace_ns) return nullptr;  // keep watching
        if (in_ring) {
            ring_steal_result<task> r = v.ring_.steal_into(ring_);
            if (r.status == ring_steal::success) {
                worker_counters::bump(counters_.steals, r.count);
                worker_counters::bump(counters_.steal_operations);
                watch_since_ns_ = 0;
                start_async(false);
                return r.task;
            }
            if (r.status == ring_steal::no_room) return nullptr;  // ours first; keep watching
        } else if (task* t = take_lifo_of(v)) {
            // Its LIFO slot alone (session 12: a task spawned by a run that went on, e.g. a spawn
            // from a task, waits there): the slot did not change for the grace either.
            watch_since_ns_ = 0;
            return t;
        }
    }
    const unsigned n = owner_.size();
    watch_victim_ = watch_victim_ + 1 == n ? 0 : watch_victim_ + 1;
    if (watch_victim_ == index_) watch_victim_ = watch_victim_ + 1 == n ? 0 : watch_victim_ + 1;
    // A watch starts only on tasks seen waiting: a task queued after an empty look may be popped
    // by its worker at once (that worker is running, it queued the task).
    worker& next = owner_.worker_at(watch_victim_);
    watch_head_ = next.ring_.head_hint();
    watch_slot_ = next.lifo_.load(std::memory_order_relaxed);  // relaxed: a hint (see above)
    watch_since_ns_ = next.ring_.empty_hint() && watch_slot_ == nullptr ? 0 : now;
    return nullptr;
}

void worker::note_depth_cold(std::int64_t depth) noexcept {
    max_depth_seen_ = depth;
    counters_.max_depth.store(static_cast<std::uint64_t>(depth), std::memory_order_relaxed);
}

// ---- metrics: time accounting at state changes, never per task ----

void worker::note_busy_cold() noexcept { counters_.enter(worker_state::busy); }

void worker::note_search_begin() noexcept {
    worker_counters::bump(counters_.searches);
    counters_.enter(worker_state::search);
}

void worker::note_park_begin() noexcept {
    worker_counters::bump(counters_.parks);
    counters_.enter(worker_state::park);
}

// Back from a sleep: the worker looks for work (or at its awaited flag) next.
void worker::note_park_end() noexcept {
    worker_counters::bump(counters_.unparks);
    counters_.enter(worker_state::search);
}

task* worker::note_injected(task* t) noexcept {
    worker_counters::bump(counters_.injector_pops);
    if (is_async_task(t)) worker_counters::bump(counters_.async_tasks_run);  // spawned from outside
    trace::injector_pop(trace_);
    note_started(*this, t);
    return t;
}

// steady_clock rather than a calibrated rdtsc: it is read only at state changes (a few per steal
// or park, never per task), where its cost (a vDSO call; docs/OBSERVABILITY.md has the figures) is
// small beside the futex or the steal it accompanies; it needs no calibration and never jumps.
std::uint64_t worker_counters::now_ns() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

// The schedule-latency stamps (stamp_queued on inject, note_started when a worker takes the task)
// are per task, and a steady_clock read costs 100-210 ns on this KVM guest: two reads per
// injected task were the largest item of an outside spawn storm's profile. A thread reuses its
// last reading while the TSC says fewer than stamp_reuse_ticks have passed since it took it (under
// 1 us at any TSC of 2 GHz or more; 0.79 us at this machine's 2.6 GHz). The TSC only decides when
// to read again: the value is always steady_clock's. A TSC that jumps backwards (a migration to a
// CPU with a lagging counter) makes the difference huge and forces a read. So a stamp is early by
// at most that bound and a latency is off by at most that bound either way (clamped at 0).
#if defined(__x86_64__) || defined(__i386__)
namespace {
constexpr std::uint64_t stamp_reuse_ticks = 2048;
struct stamp_clock {
    std::uint64_t tsc = 0;
    std::uint64_t ns = 0;
};
constinit thread_local stamp_clock stamp_cache __attribute__((tls_model("initial-exec")));
}  // namespace

std::uint64_t worker_counters::stamp_ns() noexcept {
    const std::uint64_t tsc = __rdtsc();
    if (tsc - stamp_cache.tsc < stamp_reuse_ticks) return stamp_cache.ns;
    stamp_cache.tsc = tsc;
    stamp_cache.ns = now_ns();
    return stamp_cache.ns;
}
#else
std::uint64_t worker_counters::stamp_ns() noexcept { return now_ns(); }
#endif

void worker_counters::enter_cold(worker_state s) noexcept {
    const std::uint32_t seq = seq_.load(std::memory_order_relaxed);
    seq_.store(seq + 1, std::memory_order_relaxed);  // odd: an update is under way
    // release fence: the odd sequence number is ordered before the field stores below; partner:
    // the acquire fence in read_times(), so a reader that saw any of them sees the odd number.
    std_atomics::fence(std::memory_order_release);
    // The clock is read after the odd number is out: a reader whose snapshot validated (it read
    // its own clock inside the snapshot) read it before this, so it never counts the old state
    // past `now` by more than the store's propagation delay (metrics() clamps that away).
    const std::uint64_t now = now_ns();
    const std::uint64_t since = since_ns_.load(std::memory_order_relaxed);
    const std::uint64_t spent = now > since ? now - since : 0;
    switch (state()) {
        case worker_state::busy: bump(busy_ns_, spent); break;
        case worker_state::search: bump(search_ns_, spent); break;
        case worker_state::park: bump(park_ns_, spent); break;
        case worker_state::off: break;
    }
    since_ns_.store(now, std::memory_order_relaxed);
    state_.store(static_cast<std::uint8_t>(s), std::memory_order_relaxed);
    // release: the fields above are published with the even number; partner: read_times()'s
    // first acquire load of seq_.
    seq_.store(seq + 2, std::memory_order_release);
}

worker_counters::times worker_counters::read_times() const noexcept {
    for (;;) {
        // acquire: pairs with enter_cold()'s final release store.
        const std::uint32_t before = seq_.load(std::memory_order_acquire);
        times t{busy_ns_.load(std::memory_order_relaxed), search_ns_.load(std::memory_order_relaxed),
                park_ns_.load(std::memory_order_relaxed)};
        const std::uint64_t since = since_ns_.load(std::memory_order_relaxed);
        const worker_state s = state();
        // Inside the snapshot: a worker that changes state after this validation reads its own
        // clock later (enter_cold), so the running interval below is never counted twice.
        const std::uint64_t now = now_ns();
        // acquire fence: the loads above happen before the re-read of seq_; partner: the release
        // fence in enter_cold() (an update that overlapped them changed seq_).
        std_atomics::fence(std::memory_order_acquire);
        if ((before & 1) != 0 || seq_.load(std::memory_order_relaxed) != before) {
            std_atomics::pause();
            continue;
        }
        const std::uint64_t running = now > since ? now - since : 0;
        if (s == worker_state::busy) t.busy_ns += running;
        if (s == worker_state::search) t.search_ns += running;
        if (s == worker_state::park) t.park_ns += running;
        return t;
    }
}

void record_schedule_latency(worker& w, std::chrono::nanoseconds latency) noexcept {
    if constexpr (metrics_enabled) {
        worker_counters& c = w.counters();
        const std::uint64_t ns = latency.count() > 0 ? static_cast<std::uint64_t>(latency.count()) : 0;
        const std::size_t bucket = ns == 0 ? 0 : static_cast<std::size_t>(std::bit_width(ns - 1));
        worker_counters::bump(c.latency_buckets[std::min(bucket, latency_histogram::bucket_count - 1)]);
        worker_counters::bump(c.latency_sum_ns, ns);
    } else {
        (void)w;
        (void)latency;
    }
}

void note_started(worker& w, task* t) noexcept {
    if constexpr (metrics_enabled) {
        if (t->queued_at == 0) return;
        const std::uint64_t now = worker_counters::stamp_ns();
        const std::uint64_t queued = std::exchange(t->queued_at, 0);
        record_schedule_latency(w, std::chrono::nanoseconds(now > queued ? now - queued : 0));
    } else {
        (void)w;
        (void)t;
    }
}

std::uint64_t worker::next_random() noexcept {
    // xorshift64*
    rng_ ^= rng_ >> 12;
    rng_ ^= rng_ << 25;
    rng_ ^= rng_ >> 27;
    return rng_ * 0x2545f4914f6cdd1dull;
}

}  // namespace crew::detail
