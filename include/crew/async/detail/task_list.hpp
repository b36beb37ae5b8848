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
    void unlink(shard& s, async_task* t) noexcept;

    shard shards_[shard_count];
};

}  // namespace crew::detail
