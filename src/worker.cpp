// The worker's cold paths: finding work, spinning, parking, and waiting while helping.
#include "crew/detail/worker.hpp"

#include "crew/detail/registry.hpp"

#include <utility>

namespace crew::detail {

constinit thread_local worker* current_worker = nullptr;

namespace {

// How long an idle worker looks for work before it parks: rounds of a full steal sweep followed by
// a backoff (2^round pause instructions for the first rounds, then a yield of the core).
constexpr std::uint32_t pause_rounds = 8;
constexpr std::uint32_t spin_rounds = 24;
// Every this many tasks a worker looks at the injector first, so outside submissions never starve
// behind a worker whose own deque never empties.
constexpr std::uint32_t injector_interval = 64;

void backoff(std::uint32_t round) noexcept {
    if (round < pause_rounds) {
        for (std::uint32_t i = 0; i < (1u << round); ++i) std_atomics::pause();
    } else {
        std_atomics::yield();
    }
}

std::uint64_t splitmix64(std::uint64_t x) noexcept {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

}  // namespace

worker::worker(registry& owner, unsigned index, parking& lot)
    : owner_(owner), lot_(lot), index_(index),
      rng_(splitmix64(index + 1 + reinterpret_cast<std::uintptr_t>(&owner))) {}

void worker::run_loop() {
    // Start asleep (announce, re-check, park): a new pool has no work, and n workers that each
    // began with a search would sweep all n deques 25 times each (quadratic start-up).
    park_cold(nullptr);
    for (;;) {
        if (task* t = find_task()) {
            if (searching_) found_work_cold();
            spins_ = 0;
            floor_ = deque_.owner_bottom();  // what t pushes lands at or above this index
            execute(t);
        } else if (!idle_cold(nullptr)) {
            return;
        }
    }
}

void worker::wait_until(completion& done) {
    while (!done.is_set()) {
        bool related = false;
        if (task* t = find_help(related)) {
            if (searching_) found_work_cold();
            spins_ = 0;
            run_helped(t, related);
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
            trace::park(trace_, trace::park_kind::join_wait);
            done.block();
            trace::unpark(trace_, trace::park_kind::join_wait);
        }
    }
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
        if (task* t = deque_.pop()) {
            related = true;
            return t;
        }
    }
    related = false;
    return may_help_unrelated() ? find_task() : nullptr;
}

// Run a task on top of a waiting frame; it gets its own floor, and counts toward the depth bound
// unless it descends from the waiting task.
void worker::run_helped(task* t, bool related) {
    const std::int64_t saved_floor = floor_;
    floor_ = deque_.owner_bottom();
    help_depth_ += related ? 0 : 1;
    ++helped_nesting_;
    // Unrelated work does not belong to the waiting task's group: it must not see its cancellation.
    cancel_context* const saved_context = std::exchange(current_context, related ? current_context : nullptr);
    execute(t);
    current_context = saved_context;
    --helped_nesting_;
    help_depth_ -= related ? 0 : 1;
    floor_ = saved_floor;
}

task* worker::find_task() {
    auto& injector = owner_.injector();
    if (++tick_ % injector_interval == 0 && !injector.empty_hint()) {
        if (task* t = injector.pop()) {
            worker_counters::bump(counters_.injector_pops);
            trace::injector_pop(trace_);
            return t;
        }
    }
    if (task* t = deque_.pop()) return t;
    if (task* t = steal_round()) return t;
    if (task* t = injector.pop()) {
        worker_counters::bump(counters_.injector_pops);
        trace::injector_pop(trace_);
        return t;
    }
    return nullptr;
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
            steal_result<task> r = owner_.worker_at(victim).steal_from();
            if (r.status == steal_status::success) {
                worker_counters::bump(counters_.steals);
                trace::steal(trace_, victim);
                return r.item;
            }
            worker_counters::bump(counters_.failed_steals);
            lost |= r.status == steal_status::lost;
        }
        if (!lost) return nullptr;
    }
}

// Nothing was found. Spin (as a searcher, if the half rule allows), then park. Returns false when
// the worker should leave its loop: the pool is stopping and no work is in sight.
bool worker::idle_cold(completion* done) {
    if (done == nullptr && owner_.stopping()) {
        if (work_visible()) return true;
        if (searching_) {
            searching_ = false;
            lot_.end_search();
        }
        return false;
    }
    if (spins_ == 0 && !searching_) searching_ = lot_.try_begin_search();
    if (searching_ && spins_ < spin_rounds) {
        backoff(spins_++);
        return true;
    }
    if (searching_) {
        searching_ = false;
        lot_.end_search();
    }
    park_cold(done);
    spins_ = 0;
    return true;
}

// Announce, re-check every queue (and the awaited flag or the stop flag), then sleep.
void worker::park_cold(completion* done) {
    if (done != nullptr && !done->announce_parked(&lot_)) return;
    std::uint32_t key = lot_.prepare_park();
    bool wake_reason = done != nullptr ? done->set_started() : owner_.stopping();
    if (wake_reason || work_visible()) {
        searching_ = lot_.cancel_park();
        return;
    }
    worker_counters::bump(counters_.parks);
    trace::park(trace_);
    searching_ = lot_.park(key);
    trace::unpark(trace_);
}

bool worker::work_visible() const noexcept {
    if (!owner_.injector().empty_hint()) return true;
    for (unsigned i = 0; i < owner_.size(); ++i)
        if (owner_.worker_at(i).queued_hint() > 0) return true;
    return false;
}

// A searcher found work. If it was the last searcher and more work is in sight, wake another
// worker so that someone keeps looking. (Waking unconditionally puts a futex call between finding
// a lone task and running it, which doubled the wake latency of a two-worker pool.)
void worker::found_work_cold() noexcept {
    searching_ = false;
    if (lot_.end_search() && work_visible()) {
        trace::wake(trace_);
        lot_.notify_one();
    }
}

void worker::note_depth_cold(std::int64_t depth) noexcept {
    max_depth_seen_ = depth;
    counters_.max_depth.store(static_cast<std::uint64_t>(depth), std::memory_order_relaxed);
}

std::uint64_t worker::next_random() noexcept {
    // xorshift64*
    rng_ ^= rng_ >> 12;
    rng_ ^= rng_ << 25;
    rng_ ^= rng_ >> 27;
    return rng_ * 0x2545f4914f6cdd1dull;
}

}  // namespace crew::detail
