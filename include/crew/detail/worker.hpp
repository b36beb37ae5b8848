// crew/detail/worker.hpp -- one worker thread: its deque, its caches, its counters, its loop.
//
// The fast paths a join needs (push, pop, execute) are inline here; everything that searches,
// spins, parks or waits lives in src/worker.cpp as *_cold functions.
//
// Who may call what: push/pop/execute/wait_until/cache are for the worker's own thread only
// (through current_worker); steal_from and counters may be used by any thread.
#pragma once

#include <array>
#include <cstdint>
#include <new>
#include <utility>

#include "crew/detail/async_ring.hpp"
#include "crew/detail/atomics.hpp"
#include "crew/detail/chase_lev.hpp"
#include "crew/detail/completion.hpp"
#include "crew/detail/fork_stack.hpp"
#include "crew/detail/frame_cache.hpp"
#include "crew/detail/parking.hpp"
#include "crew/detail/task.hpp"
#include "crew/detail/thread_state.hpp"
#include "crew/metrics.hpp"
#include "crew/detail/trace.hpp"

namespace crew::detail {

class registry;

// How many *unrelated* tasks a waiting worker may nest on its stack (see worker::wait_until).
inline constexpr unsigned max_help_depth = 32;

// CREW_METRICS=0 (CMake option CREW_METRICS=OFF) compiles every counter bump and clock read out;
// pool::metrics() then reports zeros except the "now" values (depths, injector length, parked).
#ifndef CREW_METRICS
#define CREW_METRICS 1
#endif
inline constexpr bool metrics_enabled = CREW_METRICS != 0;

// What a worker's thread is doing, for the time accounting (docs/OBSERVABILITY.md).
enum class worker_state : std::uint8_t { off, busy, search, park };

// Written by the owning worker only (a relaxed load and store, no locked instruction), read by
// pool::metrics() from any thread. The async scheduler bumps async_tasks_run, ring_overflows,
// lifo_hits, budget_yields and max_ring_depth (raise()).
struct worker_counters {
    using counter = std_atomics::atomic<std::uint64_t>;
    counter tasks_run{0};  // every task started, coroutine runs included (+ worker::inline_runs())
    counter async_tasks_run{0};
    counter steals{0};
    counter steal_operations{0};
    counter failed_steals_empty{0};
    counter failed_steals_lost{0};
    counter injector_pops{0};
    counter ring_overflows{0};
    counter lifo_hits{0};
    counter budget_yields{0};
    counter max_ring_depth{0};
    counter parks{0};
    counter unparks{0};
    counter searches{0};
    counter max_depth{0};
    std::array<counter, latency_histogram::bucket_count> latency_buckets{};
    counter latency_sum_ns{0};

    static void bump(counter& c, std::uint64_t by = 1) noexcept {
        if constexpr (metrics_enabled) c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
    }
    static void raise(counter& c, std::uint64_t value) noexcept {
        if constexpr (metrics_enabled)
            if (value > c.load(std::memory_order_relaxed)) c.store(value, std::memory_order_relaxed);
    }

    // ---- time accounting: owner calls enter() at state changes only, never per task ----
    static std::uint64_t now_ns() noexcept;  // steady_clock (src/worker.cpp: why not rdtsc)
    // For the per-task schedule-latency stamps only: a steady_clock reading this thread took at
    // most stamp_reuse_ticks TSC ticks ago (src/worker.cpp), so a stream of injected tasks reads
    // the clock once per few tasks rather than twice per task.
    static std::uint64_t stamp_ns() noexcept;
    worker_state state() const noexcept { return static_cast<worker_state>(state_.load(std::memory_order_relaxed)); }
    // Owner only: charge the time since the last change to the current state, then switch to `s`.
    void enter(worker_state s) noexcept {
        if constexpr (metrics_enabled) enter_cold(s);
    }
    struct times {
        std::uint64_t busy_ns, search_ns, park_ns;
    };
    // Any thread: the times so far, the current state's running interval included up to now.
    times read_times() const noexcept;

private:
    void enter_cold(worker_state s) noexcept;
    // A seqlock over the four fields below: odd while the owner updates them.
    std_atomics::atomic<std::uint32_t> seq_{0};
    std_atomics::atomic<std::uint8_t> state_{static_cast<std::uint8_t>(worker_state::off)};
    counter since_ns_{0};
    counter busy_ns_{0};
    counter search_ns_{0};
    counter park_ns_{0};
};

class alignas(cache_line) worker {
public:
    worker(registry& owner, unsigned index, parking& lot);
    worker(const worker&) = delete;
    worker& operator=(const worker&) = delete;

    registry& owner() const noexcept { return owner_; }
    // The pool has no other worker (set when the loop starts; read on this worker's thread).
    bool alone() const noexcept { return alone_; }
    unsigned index() const noexcept { return index_; }
    task_cache& cache() noexcept { return cache_; }
    const worker_counters& counters() const noexcept { return counters_; }
    worker_counters& counters() noexcept { return counters_; }  // bumps: the owning thread only
    // The trace ring (null: tracing off). Set before the worker's thread starts.
    trace::ring* trace() const noexcept { return trace_; }
    void attach_trace(trace::ring* r) noexcept { trace_ = r; }

    // ---- fast paths: the worker's own thread only ----

    // Make `t` available to this worker (LIFO) and to thieves (FIFO).
    void push(task* t) {
        std::int64_t depth = deque_.push(t);
        if (depth > max_depth_seen_) [[unlikely]] note_depth_cold(depth);
        // No fence: this worker runs `t` itself if nobody comes (see parking.hpp).
        if (lot_.wake_wanted()) [[unlikely]] {
            trace::wake(trace_);
            lot_.notify_one_hinted();
        }
    }

    // A pool of one worker has no thief (nobody else calls steal_from): its pops skip the fence.
    task* pop() noexcept { return alone_ ? deque_.pop_unshared() : deque_.pop(); }

    // A join's or fork_join's job: private until a thief or a sleeper asks (then the
    // oldest private job moves to the deque; see fork_stack.hpp). No fence, no locked instruction.
    void fork(task* t) {
        // max_deque_depth counts private forks too: they are this worker's queued fork-join work.
        // fork_stack calls the lambda (cold) at each new high-water fork depth: one compare per fork.
        const bool asked = forks_.fork(t, [this](std::uint64_t depth) noexcept {
            if (static_cast<std::int64_t>(depth) > max_depth_seen_) note_depth_cold(static_cast<std::int64_t>(depth));
        });
        if (asked) [[unlikely]] answer_request_cold();  // a thief or a sleeper asked
    }

    // K forks at once, items[0] oldest (crew::fork_join): as K fork() calls, one request check.
    template <std::size_t K>
    void fork_many(task* const (&items)[K]) {
        const bool asked = forks_.fork_many(items, [this](std::uint64_t depth) noexcept {
            if (static_cast<std::int64_t>(depth) > max_depth_seen_) note_depth_cold(static_cast<std::int64_t>(depth));
        });
        if (asked) [[unlikely]] answer_request_cold();
    }

    // Takes the newest fork back: true when it was still private (the caller runs it inline); false
    // when it was promoted (the caller pops the deque, as for a pushed job). A private take-back is
    // counted in the fork array's depth word (tasks_run = counters' tasks_run + inline_runs()).
    bool unfork() noexcept { return forks_.take_back(); }
    // unfork() for a caller that counts its private take-backs itself, once, with
    // count_inline_runs (crew::fork_join: one add per call instead of one per job).
    bool unfork_uncounted() noexcept { return forks_.take_back_uncounted(); }
    void count_inline_runs(std::uint64_t n) noexcept { forks_.count_inline(n); }
    // The last of n uncounted take-backs: when private, counts all n in its own store.
    bool unfork_counting(std::uint64_t n) noexcept { return forks_.take_back_counting(n); }
    // Any thread: the joins' inline halves this worker ran after a private take-back.
    std::uint64_t inline_runs() const noexcept { return forks_.inline_runs(); }

    // Any thread whose steal found this worker's deque empty: ask the owner to promote a fork.
    void request_work() noexcept { forks_.request(); }
    // Any thread about to sleep (announced in the lot): ask for a promotion that wakes it.
    void request_wake() noexcept { forks_.request_wake(); }

    // Owner only, for demand splitting (algorithms/partition.hpp): should a running leaf split off
    // work? Yes when a thief would find none here (an empty deque and no private fork: what an
    // empty deque meant before forks were private) or when a thief has asked (the split's fork
    // then answers it). Private forks alone are no demand: splitting on them split every leaf down
    // to its minimum length (count_if at 2 workers ran 3.5x slower than at 1).
    bool offer_wanted() const noexcept {
        return forks_.requested() || (deque_.size_hint() == 0 && !forks_.has_private());
    }

    void execute(task* t) noexcept {
        count_task();
        execute_uncounted(t);
    }
    // execute() for a caller that counts the task itself (run_related_work: once per drain).
    void execute_uncounted(task* t) noexcept {
        trace::task_begin(trace_);
        t->execute(t);
        trace::task_end(trace_);
    }

    // One started task: execute(), and a join's inline half after a promoted take-back (a private
    // take-back counts itself: see unfork).
    void count_task() noexcept { worker_counters::bump(counters_.tasks_run); }

    // ---- cold paths ----

    // Runs other tasks until `done` is set; parks in between when there are none. Which tasks:
    //   * related ones: items on this worker's own deque at or above floor_, i.e. pushed by the
    //     task now running (or by tasks it runs) -- always allowed, they are its own descendants;
    //   * unrelated ones (older items of its own deque, stolen or injected tasks) -- only while
    //     fewer than max_help_depth of them are nested on this stack and no isolate() is active.
    // A waiter that may not take unrelated work and has no related work left blocks on `done`.
    void wait_until(completion& done);

    // task_group::wait()'s drain: runs the work the running task pushed (wait_until's related
    // work: items above floor_) until none is left.
    // tasks_run: the tasks this drain ran are counted in a register and added once at its end, not
    // bumped one by one (a load, add and store per child: issue 12's metrics cost). The counter
    // lags by the drain's tasks while it runs and is exact when it returns; tasks that thieves run,
    // and work nested inside a drained task (its own drains, joins, waits), count where they run.
    // The trace ring is fixed while the thread runs (attach_trace): tested once per drain, not twice
    // per task. noinline: inlined into task_group::drain, g++ ran out of callee-saved registers and
    // kept the saved floor on the stack (+3 instructions per child); one call per drain is cheaper.
    [[gnu::noinline]] void run_related_work() {
        if (forks_.has_private()) publish_forks_cold();
        const std::uint64_t ran = trace_ == nullptr ? drain_related<false>() : drain_related<true>();
        worker_counters::bump(counters_.tasks_run, ran);  // ran is dead with CREW_METRICS=0
    }

    // crew::isolate: while the returned scope lives, waits on this worker run only work pushed
    // after its start.
    struct isolation {
        worker& w;
        std::int64_t saved_floor;
        bool saved_isolated;
        explicit isolation(worker& owner) noexcept
            : w(owner), saved_floor(owner.floor_), saved_isolated(owner.isolated_) {
            // The forks already open belong below the floor: publish them before raising it.
            if (w.forks_.has_private()) w.publish_forks_cold();
            w.floor_ = w.deque_.owner_bottom();
            w.isolated_ = true;
        }
        ~isolation() {
            w.floor_ = saved_floor;
            w.isolated_ = saved_isolated;
        }
        isolation(const isolation&) = delete;
        isolation& operator=(const isolation&) = delete;
    };

    // How many tasks a waiting worker started on this stack are still running (0 in a task the
    // worker loop started). Lets a task tell whether a frame below it is the task it runs in.
    unsigned helped_nesting() const noexcept { return helped_nesting_; }

    // The thread's main loop; returns when the pool shuts down and no work is left in sight.
    void run_loop();

    // Any thread: take the oldest task of this worker.
    steal_result<task> steal_from() noexcept { return deque_.steal(); }
    std::int64_t queued_hint() const noexcept { return deque_.size_hint(); }

    // ---- coroutine tasks (see async_schedule.hpp and DESIGN.md "Coroutine scheduler") ----
    // The worker's own thread only: queue a coroutine task on this worker.
    void push_async(task* t);   // the back of the ring (a full ring overflows to the injector)
    void wake_async(task* t, bool run_over);  // the LIFO slot; its previous occupant goes to the ring
    void yield_async(task* t);  // the back of the ring; counts a budget-forced yield
    frame_cache& frames() noexcept { return frames_; }
    // The worker's own thread: the awaiter of `t` (async_task::run_inline) takes t's entry back
    // from this worker's LIFO slot, as the worker's own pop would. True: the caller holds the
    // entry; false: the slot holds something else (a thief took t, a newer task displaced it, or t
    // was never here). A spawn+await then leaves no stale entry in the slot (session 19).
    bool take_back_lifo(task* t) noexcept {
        if (lifo_.load(std::memory_order_relaxed) != t) return false;  // relaxed: only this thread puts
        if (alone_) {
            lifo_.store(nullptr, std::memory_order_relaxed);  // no thief can take it meanwhile
            return true;
        }
        // The CAS, not a store: a thief's exchange may take t first. acquire: as find_async_local's
        // exchange (pairs with wake_async's release put; here this thread's own).
        return lifo_.compare_exchange_strong(t, nullptr, std::memory_order_acquire, std::memory_order_relaxed);
    }
    // Any thread: is a coroutine task queued here (ring or LIFO slot)?
    bool async_queued_hint() const noexcept {
        // relaxed: a hint, ordered against the parking re-check by parking.hpp's seq_cst fences.
        return lifo_.load(std::memory_order_relaxed) != nullptr || !ring_.empty_hint();
    }

private:
    task* find_task();
    [[gnu::noinline]] task* find_remote_cold();
    task* find_help(bool& related);
    void run_helped(task* t, bool related);
    // Run `t` on top of the running frame with its own floor (published forks stay below it). As
    // is, for related work (the running task's own descendant: no depth charge, the waiter's
    // cancellation context); run_helped adds both for unrelated work.
    void run_related(task* t) {
        count_task();
        run_above_floor(t);
    }
    // run_related without counting `t` (the caller counts it: run_related_work). MayTrace false:
    // the caller saw trace_ null, so the trace hooks are left out.
    template <bool MayTrace = true>
    void run_above_floor(task* t) {
        if (forks_.has_private()) publish_forks_cold();  // they belong below the new floor
        const std::int64_t saved_floor = floor_;
        floor_ = deque_.owner_bottom();
        ++helped_nesting_;
        if constexpr (MayTrace) execute_uncounted(t);
        else t->execute(t);
        --helped_nesting_;
        floor_ = saved_floor;
    }
    // run_related_work's loop: returns how many tasks it ran.
    template <bool MayTrace>
    std::uint64_t drain_related() {
        std::uint64_t ran = 0;
        while (deque_.owner_bottom() > floor_) {
            task* t = pop();
            if (t == nullptr) break;
            run_above_floor<MayTrace>(t);
            ++ran;
        }
        return ran;
    }
    bool may_help_unrelated() const noexcept { return !isolated_ && help_depth_ < max_help_depth; }
    task* steal_round();
    bool idle_cold(completion* done);
    void park_cold(completion* done);
    bool park_in_driver_cold();
    void poll_driver_cold();
    task* steal_stuck_cold(std::int64_t now) noexcept;
    bool work_visible() const noexcept;
    void found_work_cold() noexcept;
    void request_wakes_cold() noexcept;
    void note_depth_cold(std::int64_t depth) noexcept;
    void answer_request_cold();
    void publish_forks_cold();
    // Time accounting at state changes (src/worker.cpp).
    void note_busy_cold() noexcept;
    void note_search_begin() noexcept;
    void note_park_begin() noexcept;
    void note_park_end() noexcept;
    task* note_injected(task* t) noexcept;
    std::uint64_t next_random() noexcept;
    task* injector_tick_cold();
    task* pop_injector_batch();
    std::int64_t retune_interval_cold() noexcept;  // returns the clock it read
    task* find_async_local();
    task* past_lifo_limit_cold(task* t);
    task* steal_async_cold(worker& victim, bool& lost) noexcept;
    task* steal_lifo_cold() noexcept;
    task* steal_lifo_from(worker& v) noexcept;
    task* take_lifo_of(worker& v) noexcept;
    void start_async(bool from_lifo) noexcept;
    void push_async_quiet(task* t);
    void notify_async_running() noexcept;
    bool leave_lone_task_cold(worker& v) noexcept;
    void overflow_async_cold(task* const* items, std::size_t n);
    void note_ring_depth_cold(std::size_t depth) noexcept;

    // forks_: the private forks (owner only), and the request flag thieves set (its own line). With
    // metrics on, its depth word also counts the private take-backs (fork_stack.hpp). First: its
    // address is the worker's, so a join keeps no second pointer live for fork_stack's cold calls.
    fork_stack<task, std_atomics, metrics_enabled> forks_;
    // deque_: owner pushes/pops, thieves steal (its indices sit on their own cache lines).
    chase_lev_deque<task> deque_;
    // The rest is owner-only, except counters_ (read by metrics()).
    registry& owner_;
    parking& lot_;
    const unsigned index_;
    std::uint64_t rng_;
    // Find_task calls left until the next look at the injector; the self-tuned interval (2..127,
    // see retune_interval_cold); the clock (ns) at the start of the current window (0: none, the
    // worker parked); the running mean of the time per tick (ns).
    std::uint32_t injector_countdown_ = 64;
    // find_task calls left until the next busy poll of the I/O driver (io_driver.hpp).
    std::uint32_t driver_countdown_ = 61;
    std::uint32_t injector_interval_ = 64;
    std::int64_t window_start_ns_ = 0;
    double mean_tick_ns_ = 0;
    // The stuck-victim watch (steal_stuck_cold): the worker watched, its ring's head and its LIFO
    // slot's occupant when the watch began (progress hints, never dereferenced), and when (0: no
    // watch yet).
    unsigned watch_victim_ = 0;
    std::uint32_t watch_head_ = 0;
    const task* watch_slot_ = nullptr;
    std::int64_t watch_since_ns_ = 0;
    // Coroutine tasks run from the LIFO slot in a row; the next steal_round may take LIFO slots.
    std::uint32_t lifo_runs_ = 0;
    bool lifo_pass_ = false;
    std::size_t max_ring_seen_ = 0;
    std::uint32_t spins_ = 0;
    // When this worker's linger began (idle_cold, linger_round in worker.cpp).
    std::int64_t linger_since_ns_ = 0;
    bool searching_ = false;
    std::int64_t max_depth_seen_ = 0;
    // Deque index where the running task's own pushes begin (see wait_until).
    std::int64_t floor_ = 0;
    // Unrelated tasks nested on this stack by waits; all tasks nested by waits; isolate() active.
    unsigned help_depth_ = 0;
    unsigned helped_nesting_ = 0;
    bool isolated_ = false;
    // A pool of one worker (set in run_loop, before this worker's first task): no thief exists.
    bool alone_ = false;
    trace::ring* trace_ = nullptr;
    task_cache cache_;
    frame_cache frames_;
    // ring_: coroutine tasks, FIFO; owner pushes/pops, thieves steal half (async_ring.hpp).
    async_ring<task> ring_;
    // lifo_: the LIFO slot. Written by the owner (put, take, take back) and thieves (take); every
    // write is an exchange or CAS (a plain store only into an empty slot, or with no thief at all),
    // every other read a relaxed hint before one; see wake_async.
    alignas(cache_line) std_atomics::atomic<task*> lifo_{nullptr};
    alignas(cache_line) worker_counters counters_;
};

// current_worker, the worker running on this thread (nullptr outside every pool), and fork_worker,
// the word fork points read: detail/thread_state.hpp. Written only through set_current_worker.

// Schedule latency (queued -> started) of a task `w` starts now: its worker's thread only. The
// injector path records it in the worker loop; the coroutine scheduler calls it for tasks it
// starts from a ring or the LIFO slot.
void record_schedule_latency(worker& w, std::chrono::nanoseconds latency) noexcept;

// Stamp `t` as queued now (registry::inject; the coroutine scheduler for its own queues), and, on
// the thread of the worker `w` that starts it, record its latency (and clear the stamp; a task
// without a stamp records nothing).
inline void stamp_queued(task* t) noexcept {
    if constexpr (metrics_enabled) t->queued_at = worker_counters::stamp_ns();
}
void note_started(worker& w, task* t) noexcept;

// A free task block for a thread that is no worker (an outside spawner): from this thread's chain
// taken from `depot` (the target pool's, which its workers refill with the blocks of the tasks
// they ran), else the heap (src/pool.cpp). Every such block is an ::operator new block, freed as
// free_task_memory's heap case.
void* outside_task_block(task_depot& depot);

// Memory for heap tasks of type T: the current worker's cache when T fits a block, else (no worker) the
// depot's blocks when one is named, else the heap.
template <class T>
void* task_memory(task_depot* outside_depot = nullptr) {
    if constexpr (fits_block<T>) {
        if (worker* w = current_worker) return w->cache().allocate();
        // A thread that is no worker: the target pool's depot when the caller names it (src/pool.cpp).
        return outside_depot != nullptr ? outside_task_block(*outside_depot) : ::operator new(task_cache::block_size);
    } else {
        return ::operator new(sizeof(T), std::align_val_t{alignof(T)});
    }
}

// As new_task below, on the calling thread's worker `w` (== current_worker): no TLS lookup.
template <class T, class... Args>
T* new_task_on(worker& w, Args&&... args) {
    void* memory;
    if constexpr (fits_block<T>)
        memory = w.cache().allocate();
    else
        memory = ::operator new(sizeof(T), std::align_val_t{alignof(T)});
    try {
        return new (memory) T(std::forward<Args>(args)...);
    } catch (...) {
        if constexpr (fits_block<T>)
            w.cache().deallocate(memory);
        else
            ::operator delete(memory, std::align_val_t{alignof(T)});
        throw;
    }
}

template <class T>
void free_task_memory(void* memory) noexcept {
    if constexpr (fits_block<T>) {
        worker* w = current_worker;
        if (w != nullptr)
            w->cache().deallocate(memory);
        else
            ::operator delete(memory);
    } else {
        ::operator delete(memory, std::align_val_t{alignof(T)});
    }
}

// `outside_depot`: the target pool's depot, for a caller that may be no worker (pool::spawn).
template <class T, class... Args>
T* new_task_in(task_depot* outside_depot, Args&&... args) {
    void* memory = task_memory<T>(outside_depot);
    try {
        return new (memory) T(std::forward<Args>(args)...);
    } catch (...) {
        free_task_memory<T>(memory);
        throw;
    }
}

template <class T, class... Args>
T* new_task(Args&&... args) {
    return new_task_in<T>(nullptr, std::forward<Args>(args)...);
}

template <class T>
void delete_task(T* t) noexcept {
    t->~T();
    free_task_memory<T>(t);
}

// Wait for `done`: help inside a pool, sleep outside.
inline void wait_for(completion& done) {
    if (done.is_set()) return;
    if (worker* w = current_worker) w->wait_until(done);
    else done.block();
}

}  // namespace crew::detail
