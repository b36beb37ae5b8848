// crew/async/async_mutex.hpp -- crew::async_mutex: a mutex whose lock() suspends the coroutine
// task instead of blocking the worker.
//
//   crew::async_mutex m;
//   {
//       auto lock = co_await m.lock();   // crew::async_mutex::guard (RAII, movable)
//       ...                              // may co_await while holding it
//   }                                    // unlocked here: handed to the oldest waiter
//   if (m.try_lock()) { ...; m.unlock(); }
//
// Semantics (docs/ASYNC.md, "Primitives"):
//   * FIFO hand-off: unlock() with waiters gives the lock directly to the oldest one (it is woken
//     through the scheduler, already owning the lock), so no barging task can overtake it.
//   * Cancellation: a task cancelled while waiting leaves the list and its co_await throws
//     crew::cancelled_error; a hand-off that races with that cancellation goes to the next waiter
//     (the lock is never lost).
//   * A lock that succeeds without suspending spends one unit of the task's budget; at zero the
//     task yields (already holding the lock) before the co_await returns.
//   * Not recursive; unlock() by a task that does not hold the lock is undefined, as for
//     std::mutex. Destroying a locked mutex is undefined (as for std::mutex); destroying it while
//     tasks wait wakes them and their co_await throws crew::usage_error.
//   * The lock is not owned by a thread: a guard may be released on another worker than the one
//     that locked (tasks migrate), or by another task it was moved to.
#pragma once

#include <coroutine>
#include <cstddef>
#include <utility>

#include "crew/async/detail/wait_list.hpp"

namespace crew {

class async_mutex {
    struct state : detail::wait_state {
        bool locked = false;  // guarded by the lock
        detail::wait_list waiters;
    };

public:
    // Owns a lock of an async_mutex (or nothing, once moved from or unlocked).
    class [[nodiscard]] guard {
    public:
        guard() noexcept = default;
        guard(guard&& o) noexcept : m_(std::exchange(o.m_, nullptr)) {}
        guard& operator=(guard&& o) noexcept {
            if (this != &o) {
                unlock();
                m_ = std::exchange(o.m_, nullptr);
            }
            return *this;
        }
        ~guard() { unlock(); }

        bool owns_lock() const noexcept { return m_ != nullptr; }
        explicit operator bool() const noexcept { return owns_lock(); }
        async_mutex* mutex() const noexcept { return m_; }
        // Unlock now (no-op when nothing is owned).
        void unlock() noexcept {
            if (m_ != nullptr) std::exchange(m_, nullptr)->unlock();
        }
        // Give up ownership without unlocking.
        async_mutex* release() noexcept { return std::exchange(m_, nullptr); }

    private:
        friend class async_mutex;
        explicit guard(async_mutex* m) noexcept : m_(m) {}
        async_mutex* m_ = nullptr;
    };

    async_mutex();
    ~async_mutex();
    async_mutex(const async_mutex&) = delete;
    async_mutex& operator=(const async_mutex&) = delete;

    // Lock without suspending; false when it is held.
    bool try_lock() noexcept;
    // Unlock: the oldest waiter (if any) now owns the lock and is woken through the scheduler.
    void unlock() noexcept;

    // Snapshots: whether it is held; how many tasks are suspended in lock().
    bool is_locked() const;
    std::size_t waiters() const;

    class [[nodiscard]] lock_awaiter {
    public:
        bool await_ready() const noexcept { return false; }
        bool await_suspend(std::coroutine_handle<> h);
        // A pool shutdown destroys a suspended frame: leave the list (waiter.hpp, "Lifetime").
        ~lock_awaiter();
        lock_awaiter(const lock_awaiter&) = delete;
        lock_awaiter& operator=(const lock_awaiter&) = delete;
        guard await_resume();

    private:
        friend class async_mutex;
        explicit lock_awaiter(async_mutex* m) noexcept : m_(m), s_(m->s_) {}
        async_mutex* m_;
        state* s_;  // outlives the mutex while this awaiter is being cancelled (wait_list.hpp)
        detail::wait_node node_;
        detail::wait_mode mode_ = detail::wait_mode::ready;
    };

    // co_await: a guard owning the lock.
    lock_awaiter lock() noexcept { return lock_awaiter(this); }

private:
    state* s_;
};

}  // namespace crew
