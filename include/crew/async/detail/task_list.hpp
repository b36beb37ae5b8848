// crew/async/detail/task_list.hpp -- the live coroutine tasks of one pool (the registry's hook).
//
// Every spawned coroutine task is linked here from spawn until it completes (the list holds one of
// the task's references: the "registry" reference of task_state.hpp). The pool's shutdown, after
// its workers stopped, drains the list: every task still alive is suspended (nothing can run it
// any more), so the drain claims it, destroys its coroutine frames and completes it as cancelled.
// Defined in src/async/async_task.cpp.
#pragma once

#include <mutex>

namespace crew::detail {

class async_task;

class async_task_list {
public:
    async_task_list() = default;
    async_task_list(const async_task_list&) = delete;
    async_task_list& operator=(const async_task_list&) = delete;

    // Link `t`. False once the list was drained (the pool is shutting down): not linked.
    bool add(async_task* t) noexcept;
    // Unlink `t` (a no-op when the drain took it already).
    void remove(async_task* t) noexcept;
    // Close the list and shut every task left down (registry::shutdown, after the workers joined).
    void drain() noexcept;

private:
    std::mutex mutex_;
    async_task* head_ = nullptr;  // guarded by mutex_
    bool closed_ = false;         // guarded by mutex_
};

}  // namespace crew::detail
