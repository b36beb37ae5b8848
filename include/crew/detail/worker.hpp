// crew/detail/worker.hpp -- one worker thread: its deque, its caches, its counters, its loop.
//
// The fast paths a join needs (push, pop, execute) are inline here; everything that searches,
// spins, parks or waits lives in src/worker.cpp as *_cold functions.
//
// Who may call what: push/pop/execute/wait_until/cache are for the worker's own thread only
// (through current_worker); steal_from and counters may be used by any thread.
#pragma once

#include <cstdint>
#include <new>
#include <utility>

#include "crew/detail/atomics.hpp"
#include "crew/detail/chase_lev.hpp"
#include "crew/detail/completion.hpp"
#include "crew/detail/parking.hpp"
#include "crew/detail/task.hpp"

namespace crew::detail {

class registry;

// Written by the owning worker only (a relaxed load and store, no locked instruction), read by
// pool::metrics() from any thread.
struct worker_counters {
    using counter = std_atomics::atomic<std::uint64_t>;
    counter tasks_run{0};
    counter steals{0};
    counter failed_steals{0};
    counter parks{0};
    counter injector_pops{0};
    counter max_depth{0};

    static void bump(counter& c, std::uint64_t by = 1) noexcept {
        c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
    }
};

class alignas(cache_line) worker {
public:
    worker(registry& owner, unsigned index, parking& lot);
    worker(const worker&) = delete;
    worker& operator=(const worker&) = delete;

    registry& owner() const noexcept { return owner_; }
    unsigned index() const noexcept { return index_; }
    task_cache& cache() noexcept { return cache_; }
    const worker_counters& counters() const noexcept { return counters_; }

    // ---- fast paths: the worker's own thread only ----

    // Make `t` available to this worker (LIFO) and to thieves (FIFO).
    void push(task* t) {
        std::int64_t depth = deque_.push(t);
        if (depth > max_depth_seen_) [[unlikely]] note_depth_cold(depth);
        // No fence: this worker runs `t` itself if nobody comes (see parking.hpp).
        if (lot_.wake_wanted()) [[unlikely]] lot_.notify_one_hinted();
    }

    task* pop() noexcept { return deque_.pop(); }

    void execute(task* t) noexcept {
        count_task();
        t->execute(t);
    }

    void count_task() noexcept { worker_counters::bump(counters_.tasks_run); }

    // ---- cold paths ----

    // Runs other tasks until `done` is set; parks in between when there are none.
    void wait_until(completion& done);

    // The thread's main loop; returns when the pool shuts down and no work is left in sight.
    void run_loop();

    // Any thread: take the oldest task of this worker.
    steal_result<task> steal_from() noexcept { return deque_.steal(); }
    std::int64_t queued_hint() const noexcept { return deque_.size_hint(); }

private:
    task* find_task();
    task* steal_round();
    bool idle_cold(completion* done);
    void park_cold(completion* done);
    bool work_visible() const noexcept;
    void found_work_cold() noexcept;
    void note_depth_cold(std::int64_t depth) noexcept;
    std::uint64_t next_random() noexcept;

    // deque_: owner pushes/pops, thieves steal (its indices sit on their own cache lines).
    chase_lev_deque<task> deque_;
    // The rest is owner-only, except counters_ (read by metrics()).
    registry& owner_;
    parking& lot_;
    const unsigned index_;
    std::uint64_t rng_;
    std::uint32_t tick_ = 0;
    std::uint32_t spins_ = 0;
    bool searching_ = false;
    std::int64_t max_depth_seen_ = 0;
    task_cache cache_;
    alignas(cache_line) worker_counters counters_;
};

// The worker running on this thread, or nullptr outside every pool. initial-exec: a single
// %fs-relative load instead of a __tls_get_addr call on every join.
extern constinit thread_local worker* current_worker __attribute__((tls_model("initial-exec")));

// Memory for heap tasks of type T: the current worker's cache when T fits a block, else the heap.
template <class T>
void* task_memory() {
    if constexpr (fits_block<T>) {
        worker* w = current_worker;
        return w != nullptr ? w->cache().allocate() : ::operator new(task_cache::block_size);
    } else {
        return ::operator new(sizeof(T), std::align_val_t{alignof(T)});
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

template <class T, class... Args>
T* new_task(Args&&... args) {
    void* memory = task_memory<T>();
    try {
        return new (memory) T(std::forward<Args>(args)...);
    } catch (...) {
        free_task_memory<T>(memory);
        throw;
    }
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
