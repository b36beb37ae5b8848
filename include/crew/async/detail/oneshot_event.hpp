// crew/async/detail/oneshot_event.hpp -- the smallest crew awaitable: a one-shot event (set once,
// never reset) that any number of coroutine tasks wait for. crew-internal (when_all/when_any and
// tests use it); it is the reference implementation of waiter.hpp's protocol for awaitable
// authors: suspend with prepare_suspend, wake outside the lock, unlink on cancellation and in the
// awaiter's destructor (a pool shutdown destroys suspended frames).
#pragma once

#include <coroutine>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

#include "crew/async/detail/waiter.hpp"

namespace crew::detail {

class oneshot_event {
public:
    oneshot_event() = default;
    oneshot_event(const oneshot_event&) = delete;
    oneshot_event& operator=(const oneshot_event&) = delete;

    bool is_set() const noexcept {
        std::lock_guard lock(mutex_);
        return set_;
    }

    // Wake every waiter (each resumes once, on a worker, never on this stack). Any thread; a
    // second call does nothing.
    void set() noexcept {
        {
            std::lock_guard lock(mutex_);
            if (set_) return;
            set_ = true;
        }
        // One node at a time: unlink it and take its waker under the lock (its awaiter may be
        // destroyed, or resume through cancellation, as soon as the lock is released), then wake
        // outside the lock.
        for (;;) {
            waker w;
            {
                std::lock_guard lock(mutex_);
                node* n = head_;
                if (n == nullptr) return;
                head_ = n->next;
                if (head_ != nullptr) head_->prev = nullptr;
                n->linked = false;
                w = std::move(n->w);
            }
            w.wake();  // false: it was cancelled meanwhile (an event has nothing to hand on)
        }
    }

    class awaiter;
    awaiter wait(cancellable c = cancellable::yes) noexcept;

private:
    struct node {
        waker w;
        node* next = nullptr;
        node* prev = nullptr;
        bool linked = false;
    };

    void unlink(node& n) noexcept {
        std::lock_guard lock(mutex_);
        if (!n.linked) return;
        if (n.prev != nullptr) n.prev->next = n.next;
        else head_ = n.next;
        if (n.next != nullptr) n.next->prev = n.prev;
        n.linked = false;
        n.w.reset();  // under the lock: set() cannot be holding it
    }

    mutable std::mutex mutex_;
    bool set_ = false;      // guarded by mutex_
    node* head_ = nullptr;  // guarded by mutex_
};

class oneshot_event::awaiter {
public:
    awaiter(oneshot_event& e, cancellable c) noexcept : event_(e), cancellable_(c) {}
    awaiter(const awaiter&) = delete;
    awaiter& operator=(const awaiter&) = delete;
    ~awaiter() { event_.unlink(node_); }

    bool await_ready() const noexcept { return event_.is_set() && spend_budget(); }

    bool await_suspend(std::coroutine_handle<> h) noexcept {
        std::lock_guard lock(event_.mutex_);
        if (event_.set_) return yield_suspend(h);  // ready, but the budget is spent
        armed_ = true;
        node_.w = prepare_suspend(h, cancellable_);
        if (!node_.w) return false;  // cancellation requested: await_resume throws
        node_.prev = nullptr;
        node_.next = event_.head_;
        if (event_.head_ != nullptr) event_.head_->prev = &node_;
        event_.head_ = &node_;
        node_.linked = true;
        return true;
    }

    void await_resume() {
        if (armed_ && resume_reason() == wake_reason::cancelled) {
            event_.unlink(node_);
            throw_cancelled();
        }
    }

private:
    oneshot_event& event_;
    node node_;
    cancellable cancellable_;
    bool armed_ = false;
};

inline oneshot_event::awaiter oneshot_event::wait(cancellable c) noexcept { return awaiter(*this, c); }

}  // namespace crew::detail
