// crew/async/detail/task_list.hpp -- the live coroutine tasks of one pool (the registry's hook).
//
// Every spawned coroutine task is linked here from spawn until it completes (the list holds one of
// the task's references: the "registry" reference of task_state.hpp). The pool's shutdown, after
// its workers stopped, drains the list: every task still alive is suspended (nothing can run it
// any more), so the drain claims it, destroys its coroutine frames and completes it as cancelled.
//
// Sharded: shard_count intrusive lists, each under its own one-word spin lock, one cache line
// apart. A spawn links the task into the shard of the spawning worker (index mod shard_count;
// outside threads use shard 0) and the task remembers it, so its completion (on whatever worker)
// unlinks it there. With one shard per worker the lock is almost never contended, and costs one
// uncontended RMW per add and per remove (the former single std::mutex cost two RMWs each and
// bounced its line between every spawning and completing core).
//
// A pool of ONE worker (session 16): that worker links and unlinks its tasks in one more shard,
// the lone shard, without taking its lock (no RMW at all). Confinement: only the lone worker
// touches the lone shard's links while the pool runs. add() picks it only on the pool's own
// worker (a migrate() into this pool, from another pool's worker, takes a locked shard); remove()
// of a task in it runs where its completion or migrate() runs, and a task of this pool completes
// or migrates only inside a run of it, which happens on this pool's worker: the one exception, a
// run another pool's worker claimed inline (async_task::run_inline), gives the run back without
// running the coroutine, and can complete it only as cancelled, which the shutdown drain sets
// after it unlinked the task (that remove reads `listed` false, ordered by the state word's RMWs,
// and writes nothing). The drain runs after the worker thread was joined.
// Defined in src/async/async_task.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "crew/detail/atomics.hpp"

namespace crew::detail {

class async_task;

class async_task_list {
public:
    static constexpr unsigned shard_count = 16;
    static constexpr unsigned lone_shard = shard_count;  // the lone worker's (see above)

    async_task_list() = default;
    async_task_list(const async_task_list&) = delete;
    async_task_list& operator=(const async_task_list&) = delete;

    // Link `t` (into the calling worker's shard). False once the list was drained (the pool is
    // shutting down): not linked.
    bool add(async_task* t) noexcept;
    // Unlink `t` (a no-op when the drain took it already).
    void remove(async_task* t) noexcept;
    // Close the list and shut every task left down (registry::shutdown, after the workers joined).
    void drain() noexcept;

private:
    struct alignas(64) shard {
        std_atomics::atomic<bool> locked{false};
        async_task* head = nullptr;  // guarded by locked
        bool closed = false;         // guarded by locked
        void lock() noexcept;
        void unlock() noexcept;
    };
    static unsigned shard_of_caller() noexcept;
    bool lone_caller() const noexcept;
    static void link(shard& s, unsigned i, async_task* t) noexcept;
    void unlink(shard& s, async_task* t) noexcept;

    shard shards_[shard_count + 1];  // the last: the lone shard
};

}  // namespace crew::detail
