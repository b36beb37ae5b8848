// crew/async/event.hpp -- crew::event: a manual-reset event for coroutine tasks.
//
//   crew::event ready;
//   co_await ready.wait();   // suspends until set() (returns at once while set)
//   ready.set();             // wakes every waiter, through the scheduler
//   ready.reset();
//
// Semantics (docs/ASYNC.md, "Primitives"):
//   * set() wakes every task suspended in wait() (each goes through the scheduler: set() never
//     resumes a waiter on its own stack) and makes later waits complete at once until reset().
//     A waiter woken by set() returns even if reset() follows before it runs.
//   * A wait that completes without suspending spends one unit of the task's cooperative budget;
//     at zero the task yields before the co_await returns.
//   * Cancellation: a task cancelled while suspended in wait() leaves the list; its co_await
//     throws crew::cancelled_error.
//   * Destroying an event while tasks wait on it wakes them; their co_await throws
//     crew::usage_error (they never touch the event again).
//   * All members may be called from any thread; wait() only from a crew coroutine task.
#pragma once

#include <atomic>
#include <coroutine>
#include <cstddef>

#include "crew/async/detail/wait_list.hpp"

namespace crew {

class event {
    struct state : detail::wait_state {
        std::atomic<bool> is_set{false};  // written under the lock; read without it by is_set()/await_ready
        detail::wait_list waiters;
    };

public:
    explicit event(bool initially_set = false);
    ~event();
    event(const event&) = delete;
    event& operator=(const event&) = delete;

    // Set, and wake every waiter. Idempotent.
    void set() noexcept;
    // Clear (later waits suspend). Does not affect waiters already woken.
    void reset() noexcept;
    // acquire: pairs with set()'s release store, so what the setter wrote before set() is visible.
    bool is_set() const noexcept { return s_->is_set.load(std::memory_order_acquire); }

    // A snapshot: how many tasks are suspended in wait().
    std::size_t waiters() const;

    class [[nodiscard]] wait_awaiter {
    public:
        bool await_ready() const noexcept {
            // acquire: pairs with set()'s release store (see is_set()).
            return s_->is_set.load(std::memory_order_acquire) && detail::spend_budget();
        }
        bool await_suspend(std::coroutine_handle<> h);
        // A pool shutdown destroys a suspended frame: leave the list (waiter.hpp, "Lifetime").
        ~wait_awaiter();
        wait_awaiter(const wait_awaiter&) = delete;
        wait_awaiter& operator=(const wait_awaiter&) = delete;
        void await_resume();

    private:
        friend class event;
        explicit wait_awaiter(state* s) noexcept : s_(s) {}
        state* s_;
        detail::wait_node node_;
        detail::wait_mode mode_ = detail::wait_mode::ready;
    };

    // co_await: returns once the event is set.
    wait_awaiter wait() noexcept { return wait_awaiter(s_); }

private:
    state* s_;
};

}  // namespace crew
