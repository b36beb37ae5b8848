// crew::event and crew::async_mutex (crew/async/event.hpp, async_mutex.hpp); the protocol they
// share with crew::channel is in crew/async/detail/wait_list.hpp.
#include <mutex>

#include "crew/async/async_mutex.hpp"
#include "crew/async/event.hpp"
#include "crew/errors.hpp"

namespace crew {

namespace {

[[noreturn]] void throw_abandoned(const char* what) { throw usage_error(what); }

// Destructor path: wake every waiter as abandoned (they never touch the primitive object again;
// the state block lives on while a cancelled one may still come back: wait_list.hpp, "Lifetime").
void abandon_all_locked(detail::wait_list& l, detail::wake_batch& wakes) noexcept {
    while (!l.empty()) {
        detail::wait_node& n = *l.pop_front();
        n.abandoned = true;
        (void)wakes.claim(n);
    }
}

}  // namespace

// ---- event ----

event::event(bool initially_set) : s_(detail::new_wait_state<state>(sizeof(state))) { s_->is_set.store(initially_set, std::memory_order_relaxed); }

event::~event() {
    if (s_->lock.idle()) {  // nobody waits on it or may come back (wait_list.hpp, "Lifetime")
        detail::destroy_wait_state(s_);
        return;
    }
    bool last;
    {
        detail::wake_batch wakes(*s_);  // queued after the unlock (wait_list.hpp)
        std::lock_guard g(s_->lock);
        abandon_all_locked(s_->waiters, wakes);
        last = detail::orphan_locked(*s_);  // else the last cancelled awaiter frees it
    }
    if (last) detail::destroy_wait_state(s_);
}

void event::set() noexcept {
    detail::wake_batch wakes(*s_);  // queued after the unlock (wait_list.hpp)
    std::lock_guard g(s_->lock);
    // release: pairs with the acquire loads in is_set()/await_ready (the setter's writes before
    // set() are visible to a waiter that sees the flag; suspended waiters see them through the
    // wake's task-state transition).
    s_->is_set.store(true, std::memory_order_release);
    while (!s_->waiters.empty()) (void)wakes.claim(*s_->waiters.pop_front());
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
    return detail::suspend_on(*s_, s_->waiters, node_, h, mode_);
}

void event::wait_awaiter::await_resume() {
    if (mode_ == detail::wait_mode::cancelled_early) detail::throw_cancelled();
    if (mode_ != detail::wait_mode::suspended) return;
    if (detail::finish_suspension(s_, s_->waiters, node_, mode_, detail::resumed_by_cancel())) detail::throw_cancelled();
    if (node_.abandoned) throw_abandoned("crew::event destroyed while a task waited on it");
}

event::wait_awaiter::~wait_awaiter() {
    if (mode_ == detail::wait_mode::suspended) [[unlikely]]
        detail::finish_destroyed_cold(s_, s_->waiters, node_, mode_);
}

// ---- async_mutex ----

async_mutex::async_mutex() : s_(detail::new_wait_state<state>(sizeof(state))) {}

async_mutex::~async_mutex() {
    if (s_->lock.idle()) {  // nobody waits on it or may come back (wait_list.hpp, "Lifetime")
        detail::destroy_wait_state(s_);
        return;
    }
    bool last;
    {
        detail::wake_batch wakes(*s_);  // queued after the unlock (wait_list.hpp)
        std::lock_guard g(s_->lock);
        abandon_all_locked(s_->waiters, wakes);
        last = detail::orphan_locked(*s_);  // else the last cancelled awaiter frees it
    }
    if (last) detail::destroy_wait_state(s_);
}

bool async_mutex::try_lock() noexcept {
    std::lock_guard g(s_->lock);
    if (s_->locked) return false;
    s_->locked = true;
    return true;
}

void async_mutex::unlock() noexcept {
    detail::wake_batch wakes(*s_);  // queued after the unlock (wait_list.hpp)
    std::lock_guard g(s_->lock);
    while (!s_->waiters.empty())
        if (wakes.claim(*s_->waiters.pop_front())) return;  // handed over: stays locked
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
    return detail::suspend_on(*s_, s_->waiters, node_, h, mode_);
}

async_mutex::guard async_mutex::lock_awaiter::await_resume() {
    if (mode_ == detail::wait_mode::cancelled_early) detail::throw_cancelled();
    if (mode_ == detail::wait_mode::suspended) {
        if (detail::finish_suspension(s_, s_->waiters, node_, mode_, detail::resumed_by_cancel()))
            detail::throw_cancelled();
        if (node_.abandoned) throw_abandoned("crew::async_mutex destroyed while a task waited on it");
    }
    return guard(m_);
}

async_mutex::lock_awaiter::~lock_awaiter() {
    if (mode_ == detail::wait_mode::suspended) [[unlikely]]
        detail::finish_destroyed_cold(s_, s_->waiters, node_, mode_);
}

}  // namespace crew
