// crew/async/time.hpp -- timers for coroutine tasks: sleep_for, sleep_until, timeout.
//
//   co_await crew::sleep_for(1ms);                    // never returns before the deadline
//   co_await crew::sleep_until(steady_clock::now() + 5ms);
//   int v = co_await crew::timeout(10ms, fetch());    // or throws crew::timeout_error
//
// Semantics (docs/ASYNC.md, "Timers"):
//   * A sleep suspends the task until its deadline on the steady clock; the pool's I/O driver
//     (crew/detail/io_driver.hpp) wakes it through the scheduler. Resolution: 1.024 us ticks,
//     rounded up (never early).
//   * A sleep whose deadline is not in the future completes at once and spends one unit of the
//     task's cooperative budget (at zero the task yields first).
//   * A cancelled sleep wakes at once: its co_await throws crew::cancelled_error.
//   * timeout(d, t) runs t as a child task; if d passes first, the child is cancelled and awaited,
//     then crew::timeout_error is thrown. A child that finishes anyway (it ignored the
//     cancellation) gives its result; its exception propagates. Cancelling the awaiting task
//     cancels the child (and the co_await throws crew::cancelled_error).
//   * Only inside a crew coroutine task (block_on from an outside thread runs it on a pool).
#pragma once

#include <atomic>
#include <chrono>
#include <coroutine>
#include <cstdint>
#include <exception>
#include <optional>
#include <variant>

#include "crew/async/detail/waiter.hpp"
#include "crew/async/join_handle.hpp"
#include "crew/async/task.hpp"
#include "crew/async/when_all.hpp"
#include "crew/detail/async_schedule.hpp"
#include "crew/detail/io_driver.hpp"
#include "crew/errors.hpp"

namespace crew {

namespace detail {

class [[nodiscard]] sleep_awaiter {
public:
    explicit sleep_awaiter(std::uint64_t deadline_ns) noexcept { entry_.deadline_ns = deadline_ns; }
    sleep_awaiter(const sleep_awaiter&) = delete;
    sleep_awaiter& operator=(const sleep_awaiter&) = delete;
    ~sleep_awaiter() { disarm(); }  // a pool shutdown destroys a suspended frame

    bool await_ready() const noexcept { return entry_.deadline_ns <= driver_now_ns() && spend_budget(); }
    bool await_suspend(std::coroutine_handle<> h) {
        if (entry_.deadline_ns <= driver_now_ns()) return yield_suspend(h);  // the budget is spent
        driver_ = &driver_of(*this_async_task().owner);
        entry_.w = prepare_suspend(h);
        if (!entry_.w) {
            cancelled_ = true;
            return false;
        }
        armed_ = true;
        driver_->add_timer(entry_);
        return true;
    }
    void await_resume() {
        if (cancelled_ || (armed_ && resume_reason() == wake_reason::cancelled)) {
            disarm();
            throw_cancelled();
        }
        armed_ = false;  // fired: the driver took the entry out
    }

private:
    void disarm() noexcept {
        if (!armed_) return;
        armed_ = false;
        driver_->cancel_timer(entry_);
    }
    timer_entry entry_;
    io_driver* driver_ = nullptr;
    bool armed_ = false;
    bool cancelled_ = false;
};

inline std::uint64_t deadline_of(std::chrono::steady_clock::time_point t) noexcept {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
    return ns > 0 ? static_cast<std::uint64_t>(ns) : 0;
}

template <class Rep, class Period>
std::uint64_t deadline_after(std::chrono::duration<Rep, Period> d) noexcept {
    const auto now = std::chrono::steady_clock::now();
    if (d <= d.zero()) return 0;
    const auto max_ahead = std::chrono::hours(24 * 365 * 100);  // saturate absurd durations
    if (d >= max_ahead) return deadline_of(now + max_ahead);
    return deadline_of(now + std::chrono::ceil<std::chrono::steady_clock::duration>(d));
}

// Sleeps, then cancels the watched child (the `fired` flag says so). Holds a child reference.
inline crew::task<void> timeout_watch(std::uint64_t deadline_ns, async_task* child, std::atomic<bool>& fired) {
    struct reference {
        async_task* c;
        ~reference() { c->release(); }
    } ref{child};
    co_await sleep_awaiter(deadline_ns);
    fired.store(true, std::memory_order_relaxed);  // read after the watcher was awaited (ordered)
    child->request_cancel();
}

template <class T>
crew::task<T> co_timeout(std::uint64_t deadline_ns, crew::task<T> t) {
    join_handle<T> h = crew::spawn(std::move(t));
    async_task* child = handle_access::task_of(h);
    std::atomic<bool> fired{false};
    child->state.ref_inc();  // the watcher's reference
    join_handle<void> watcher = crew::spawn(timeout_watch(deadline_ns, child, fired));
    std::optional<stored_t<T>> value;
    std::exception_ptr error;
    {
        cancel_forwarder forwarder;  // our cancellation reaches both
        forwarder.arm({child, handle_access::task_of(watcher)});
        co_await settle(h, value, error);
    }
    handle_access::task_of(watcher)->request_cancel();
    std::optional<std::monostate> ignored;
    std::exception_ptr ignored_error;
    co_await settle(watcher, ignored, ignored_error);
    if (error) {
        if (fired.load(std::memory_order_relaxed) && !current_cancel_requested()) {
            try {
                std::rethrow_exception(error);
            } catch (const cancelled_error&) {
                throw timeout_error();
            }
        }
        std::rethrow_exception(error);
    }
    if constexpr (std::is_void_v<T>) co_return;
    else co_return std::move(*value);
}

}  // namespace detail

// Suspend the current task until `t` (steady clock). See the header for the rules.
inline detail::sleep_awaiter sleep_until(std::chrono::steady_clock::time_point t) noexcept {
    return detail::sleep_awaiter(detail::deadline_of(t));
}

// Suspend the current task for at least `d`. A d <= 0 completes at once (spending budget).
template <class Rep, class Period>
detail::sleep_awaiter sleep_for(std::chrono::duration<Rep, Period> d) noexcept {
    return detail::sleep_awaiter(detail::deadline_after(d));
}

// Run `t` with a time limit: its result, or crew::timeout_error once `d` passed (the task was
// cancelled and awaited first). See the header.
template <class T, class Rep, class Period>
task<T> timeout(std::chrono::duration<Rep, Period> d, task<T> t) {
    return detail::co_timeout<T>(detail::deadline_after(d), std::move(t));
}

}  // namespace crew
