// crew::event and crew::async_mutex (crew/async/event.hpp, async_mutex.hpp); the protocol they
// share with crew::channel is in crew/async/detail/wait_list.hpp.
#include <mutex>

#include "crew/async/async_mutex.hpp"
#include "crew/async/event.hpp"
#include "crew/errors.hpp"

namespace crew {

namespace {

[[noreturn]] void throw_abandoned(const char* what) { throw usage_error(what); }

// Destructor path: wake every waiter as abandoned (they never touch the primitive again).
void abandon_all_locked(detail::wait_state& s, detail::wait_list& l) noexcept {
    while (!l.empty()) {
        detail::wait_node& n = *l.pop_front();
        n.abandoned = true;
        (void)s.wake_popped(n);
    }
}

}  // namespace

// ---- event ----

event::event(bool initially_set) : s_(new state) { s_->is_set.store(initially_set, std::memory_order_relaxed); }

event::~event() {
    {
        std::lock_guard g(s_->lock);
        abandon_all_locked(*s_, s_->waiters);
    }
    detail::release_state(s_);
}

void event::set() noexcept {
    std::lock_guard g(s_->lock);
    // release: pairs with the acquire loads in is_set()/await_ready (the setter's writes before
    // set() are visible to a waiter that sees the flag; suspended waiters see them through the
    // wake's task-state transition).
    s_->is_set.store(true, std::memory_order_release);
    while (!s_->waiters.empty()) (void)s_->wake_popped(*s_->waiters.pop_front());
}

void event::reset() noexcept {
    std::lock_guard g(s_->lock);
    s_->is_set.store(false, std::memory_order_relaxed);  // publishes nothing
}

std::size_t event::waiters() const {
    std::lock_guard g(s_->lock);
    return s_->waiters.size();
}

bool event::wait_awaiter::await_suspend(std::coroutine_handle<> h) {
    std::unique_lock g(s_->lock);
    if (s_->is_set.load(std::memory_order_relaxed)) {  // under the lock: set() wrote it under the lock
        g.unlock();
        return detail::complete_ready(h, mode_);
    }
    return detail::suspend_on(s_->waiters, node_, h, mode_);
}

void event::wait_awaiter::await_resume() {
    if (mode_ == detail::wait_mode::suspended) {
        if (node_.w.cancelled()) {
            detail::finish_cancelled(s_, s_->waiters, node_);
            detail::throw_cancelled();
        }
        if (node_.abandoned) throw_abandoned("crew::event destroyed while a task waited on it");
    }
    if (mode_ == detail::wait_mode::cancelled_early) detail::throw_cancelled();
}

// ---- async_mutex ----

async_mutex::async_mutex() : s_(new state) {}

async_mutex::~async_mutex() {
    {
        std::lock_guard g(s_->lock);
        abandon_all_locked(*s_, s_->waiters);
    }
    detail::release_state(s_);
}

bool async_mutex::try_lock() noexcept {
    std::lock_guard g(s_->lock);
    if (s_->locked) return false;
    s_->locked = true;
    return true;
}

void async_mutex::unlock() noexcept {
    std::lock_guard g(s_->lock);
    while (!s_->waiters.empty())
        if (s_->wake_popped(*s_->waiters.pop_front())) return;  // handed over: stays locked
    s_->locked = false;
}

bool async_mutex::is_locked() const {
    std::lock_guard g(s_->lock);
    return s_->locked;
}

std::size_t async_mutex::waiters() const {
    std::lock_guard g(s_->lock);
    return s_->waiters.size();
}

bool async_mutex::lock_awaiter::await_suspend(std::coroutine_handle<> h) {
    std::unique_lock g(s_->lock);
    if (!s_->locked) {
        s_->locked = true;
        g.unlock();
        return detail::complete_ready(h, mode_);
    }
    return detail::suspend_on(s_->waiters, node_, h, mode_);
}

async_mutex::guard async_mutex::lock_awaiter::await_resume() {
    if (mode_ == detail::wait_mode::suspended) {
        if (node_.w.cancelled()) {
            detail::finish_cancelled(s_, s_->waiters, node_);
            detail::throw_cancelled();
        }
        if (node_.abandoned) throw_abandoned("crew::async_mutex destroyed while a task waited on it");
    }
    if (mode_ == detail::wait_mode::cancelled_early) detail::throw_cancelled();
    return guard(m_);
}

}  // namespace crew
