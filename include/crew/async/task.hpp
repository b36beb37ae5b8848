// crew/async/task.hpp -- crew::task<T>: a lazily started coroutine.
//
// A task<T> does nothing until it is awaited (`co_await t`, which runs it on the awaiting worker
// by symmetric transfer and gives its value or rethrows its exception) or spawned (crew::spawn,
// pool::spawn, block_on, when_all/when_any). It is move-only and single-use; destroying a task that
// never ran destroys its frame. T may be void, a value type, or an lvalue reference.
//
// Stack bound: every symmetric transfer (into an awaited task, and back to the awaiter at its
// final suspend) counts against detail::max_inline_transfers per run of the spawned task; past the
// bound the transfer becomes a yield (the task is re-queued and resumes from the worker loop on a
// fresh stack), so arbitrarily long chains of synchronously completing awaits never overflow,
// even where the compiler does not turn the transfer into a tail call (g++ -O0, ASan, TSan).
#pragma once

#include <coroutine>
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "crew/async/detail/async_task.hpp"
#include "crew/errors.hpp"

namespace crew {

template <class T = void>
class task;

namespace detail {

// The cold half of transfer_to: re-queue the running task to resume `h` from the worker loop.
[[gnu::noinline]] inline std::coroutine_handle<> transfer_later(std::coroutine_handle<> h) noexcept {
    async_task& t = *current_async_task;
    t.resume_point = h;
    t.notify_self();  // RUNNING: the runner re-queues it at the back after this run
    return std::noop_coroutine();
}

// Transfer to `h` inline, or past the bound, re-queue the running task to resume `h` later.
inline std::coroutine_handle<> transfer_to(std::coroutine_handle<> h) noexcept {
    if (++inline_transfers <= max_inline_transfers) [[likely]]
        return h;
    return transfer_later(h);
}

// The common part of every crew::task<T> promise.
struct task_promise_base : promise_base {
    static void* operator new(std::size_t size) { return allocate_frame(size); }
    static void operator delete(void* frame, std::size_t size) noexcept {
        if (deferred_root != nullptr && async_task::defer_root_free(frame, size)) [[unlikely]]
            return;  // a spawned root: its header lives in it (async_task.hpp)
        free_frame(frame, size);
    }

    std::suspend_always initial_suspend() noexcept { return {}; }

    struct final_awaiter {
        bool await_ready() noexcept { return false; }
        template <class P>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
            promise_base& p = h.promise();
            if (p.continuation) return transfer_to(p.continuation);
            current_async_task->root_done = true;  // a spawned root: the runner completes it
            return std::noop_coroutine();
        }
        void await_resume() noexcept {}
    };
    final_awaiter final_suspend() noexcept { return {}; }

    void unhandled_exception() noexcept { error = std::current_exception(); }

    void rethrow_if_failed() {
        if (error) std::rethrow_exception(std::exchange(error, nullptr));
    }
};

template <class T>
struct task_promise final : task_promise_base {
    std::optional<T> value;

    crew::task<T> get_return_object() noexcept;
    template <class U = T>
        requires std::is_convertible_v<U&&, T>
    void return_value(U&& v) noexcept(std::is_nothrow_constructible_v<T, U&&>) {
        value.emplace(std::forward<U>(v));
    }
    T take() {
        rethrow_if_failed();
        return std::move(*value);
    }
};

template <class T>
struct task_promise<T&> final : task_promise_base {
    T* value = nullptr;

    crew::task<T&> get_return_object() noexcept;
    void return_value(T& v) noexcept { value = std::addressof(v); }
    T& take() {
        rethrow_if_failed();
        return *value;
    }
};

template <>
struct task_promise<void> final : task_promise_base {
    crew::task<void> get_return_object() noexcept;
    void return_void() noexcept {}
    void take() { rethrow_if_failed(); }
};

template <class T>
struct task_access;

}  // namespace detail

template <class T>
class [[nodiscard]] task {
public:
    using promise_type = detail::task_promise<T>;
    using value_type = T;

    task() noexcept = default;
    task(task&& o) noexcept : handle_(std::exchange(o.handle_, {})) {}
    task& operator=(task&& o) noexcept {
        if (this != &o) {
            if (handle_) handle_.destroy();
            handle_ = std::exchange(o.handle_, {});
        }
        return *this;
    }
    ~task() {
        if (handle_) handle_.destroy();
    }

    // Does this object hold a coroutine (not moved from, not default-constructed)?
    bool valid() const noexcept { return static_cast<bool>(handle_); }

    struct awaiter {
        std::coroutine_handle<promise_type> handle;
        bool await_ready() const noexcept { return false; }
        std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
            handle.promise().continuation = awaiting;
            return detail::transfer_to(handle);
        }
        T await_resume() { return handle.promise().take(); }
    };

    // Run the task here (symmetric transfer) and give its result. Throws crew::usage_error for an
    // empty task (moved from) instead of crashing.
    awaiter operator co_await() & { return {checked()}; }
    awaiter operator co_await() && { return {checked()}; }

private:
    friend promise_type;
    friend struct detail::task_access<T>;
    explicit task(std::coroutine_handle<promise_type> h) noexcept : handle_(h) {}

    std::coroutine_handle<promise_type> checked() const {
        if (!handle_) throw usage_error("crew::task: co_await of an empty (moved-from) task");
        return handle_;
    }

    std::coroutine_handle<promise_type> handle_;
};

namespace detail {

template <class T>
crew::task<T> task_promise<T>::get_return_object() noexcept {
    return crew::task<T>(std::coroutine_handle<task_promise>::from_promise(*this));
}
template <class T>
crew::task<T&> task_promise<T&>::get_return_object() noexcept {
    return crew::task<T&>(std::coroutine_handle<task_promise>::from_promise(*this));
}
inline crew::task<void> task_promise<void>::get_return_object() noexcept {
    return crew::task<void>(std::coroutine_handle<task_promise>::from_promise(*this));
}

// crew-internal access to a task's coroutine (spawn takes it over).
template <class T>
struct task_access {
    static std::coroutine_handle<task_promise<T>> release(crew::task<T>& t) noexcept { return std::exchange(t.handle_, {}); }
};

}  // namespace detail

}  // namespace crew
