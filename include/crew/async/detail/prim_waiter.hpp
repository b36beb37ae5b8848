// crew/async/detail/prim_waiter.hpp -- the primitives' view of the waiter protocol
// (crew/async/detail/waiter.hpp): PLACEHOLDER until waiter.hpp lands.
#pragma once

#include <coroutine>

namespace crew::detail {

class prim_waiter {
public:
    // In await_suspend, under the primitive's lock: bind to the running task. False: the task is
    // already cancelled (do not suspend).
    bool suspend(std::coroutine_handle<> h);
    // Wake exactly once, through the scheduler. False: cancellation claimed the waiter first.
    bool wake() noexcept;
    // In await_resume after a suspension: whether cancellation (not wake()) resumed the task.
    bool cancelled() const noexcept;
};

// Re-queue the running task at the back (a budget yield); await_suspend's result.
bool prim_yield(std::coroutine_handle<> h);

[[noreturn]] void throw_cancelled();

}  // namespace crew::detail
