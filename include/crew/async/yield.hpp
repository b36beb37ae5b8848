// crew/async/yield.hpp -- crew::yield_now() and crew::schedule_on(pool).
#pragma once

#include <coroutine>

#include "crew/async/detail/waiter.hpp"
#include "crew/pool.hpp"

namespace crew {

namespace detail {

struct yield_awaiter {
    bool cancelled = false;
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h) noexcept {
        if (current_cancel_requested()) {
            cancelled = true;
            return false;
        }
        return yield_suspend(h);
    }
    void await_resume() const {
        if (cancelled) throw_cancelled();
    }
};

struct schedule_on_awaiter {
    registry& to;
    bool await_ready() const noexcept { return to.owns_current_thread() && current_async_task->owner == &to; }
    bool await_suspend(std::coroutine_handle<> h) {
        if (!current_async_task->migrate(to)) to.throw_refused();
        return yield_suspend(h);  // queued on `to` after this run
    }
    void await_resume() const noexcept {}
};

}  // namespace detail

// Suspend the current task and queue it at the back of its worker's queue, so other tasks run
// first. A cancellation point: throws crew::cancelled_error once the task was cancelled.
inline detail::yield_awaiter yield_now() noexcept { return {}; }

// Move the current task to pool `p`: the co_await resumes on one of p's workers (at once when it
// already runs there). The task belongs to `p` from then on (its later wakes queue it there, and
// p's shutdown frees it if it is suspended then). Throws crew::pool_closed_error (nothing
// changed) when `p` is shutting down. `p` must outlive the task's stay there.
inline detail::schedule_on_awaiter schedule_on(pool& p) noexcept { return {detail::registry_of(p)}; }

}  // namespace crew
