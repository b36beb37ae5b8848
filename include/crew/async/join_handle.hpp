// crew/async/join_handle.hpp -- spawn a task<T> onto a pool and wait for it: crew::spawn,
// pool::spawn, crew::join_handle<T>, crew::block_on, pool::block_on.
#pragma once

#include <coroutine>
#include <type_traits>
#include <utility>

#include "crew/async/detail/waiter.hpp"
#include "crew/async/task.hpp"
#include "crew/errors.hpp"
#include "crew/pool.hpp"

namespace crew {

namespace detail {

// crew-internal access to a handle's task (when_all/when_any forward cancellation to it, and wait
// for it without being a cancellation point).
struct handle_access {
    template <class T>
    static async_task* task_of(const join_handle<T>& h) noexcept {
        return h.task_;
    }
    template <class T>
    static typename join_handle<T>::awaiter await_uncancellable(join_handle<T>& h) noexcept {
        return {&h, cancellable::no};
    }
};

}  // namespace detail

// The handle of a spawned task: co_await it (or get() it) for the task's value or exception,
// cancel() it, ask done(). Move-only. Dropping it detaches the task: it runs on, and an exception
// it ends with goes to the pool's on_unhandled_exception. Waiting consumes the handle (valid()
// is false afterwards), as std::future::get does.
template <class T>
class [[nodiscard]] join_handle {
public:
    join_handle() noexcept = default;
    join_handle(join_handle&& o) noexcept : task_(std::exchange(o.task_, nullptr)) {}
    join_handle& operator=(join_handle&& o) noexcept {
        if (this != &o) {
            drop();
            task_ = std::exchange(o.task_, nullptr);
        }
        return *this;
    }
    ~join_handle() { drop(); }

    bool valid() const noexcept { return task_ != nullptr; }

    // Has the task finished (returned, thrown, or been dropped by its pool's shutdown)?
    bool done() const noexcept {
        return task_ != nullptr && (task_->state.load() & detail::task_state<>::complete) != 0;
    }

    // Request cancellation (see crew/async.hpp): a crew co_await the task is suspended in, or the
    // next one it reaches, throws crew::cancelled_error. A no-op once it finished, or repeated.
    void cancel() noexcept {
        if (task_ != nullptr) task_->request_cancel();
    }

    // Detach now (as dropping the handle does).
    void detach() noexcept { drop(); }

    // Wait for the task and give its value, or rethrow its exception (crew::cancelled_error when
    // the task ended cancelled). An outside thread blocks; a worker helps its pool meanwhile.
    // Throws crew::usage_error on an empty handle.
    T get() {
        check();
        if (!done()) block();
        return take();
    }

    struct awaiter;
    // In a crew task: suspend until the task finished, then give its value or rethrow. A
    // cancellation point of the awaiting task (the awaited task is not cancelled by it).
    awaiter operator co_await() & { return awaiter{this}; }
    awaiter operator co_await() && { return awaiter{this}; }

private:
    friend struct detail::handle_access;
    template <class U>
    friend join_handle<U> detail_spawn(detail::registry&, task<U>&&);
    explicit join_handle(detail::async_task* t) noexcept : task_(t) {}

    void check() const {
        if (task_ == nullptr) throw usage_error("crew::join_handle: the handle is empty (moved from, detached or consumed)");
    }

    void block() {
        detail::completion done;
        task_->join.blocked = &done;  // JOIN_WAKER is clear: the slot is ours
        if (task_->state.set_join_waker()) detail::wait_for(done);
        else task_->join.blocked = nullptr;  // it completed meanwhile
    }

    // The task is complete: hand its outcome over and consume the handle.
    T take() {
        struct consume {
            join_handle& h;
            ~consume() { h.drop_complete(); }
        } guard{*this};
        if (task_->frame_destroyed) throw cancelled_error();
        auto h = std::coroutine_handle<detail::task_promise<T>>::from_address(task_->root.address());
        return h.promise().take();
    }

    void drop() noexcept {
        detail::async_task* t = std::exchange(task_, nullptr);
        if (t == nullptr) return;
        // Not complete and no waker of ours in the slot (a detached spawn): one CAS.
        if (const auto f = t->state.drop_join_interest_unwatched(); f.taken) [[likely]] {
            if (f.last) [[unlikely]] t->deallocate();
            return;
        }
        drop_slow(t);
    }

    // drop() of a complete task, or with a join waker installed.
    [[gnu::noinline]] static void drop_slow(detail::async_task* t) noexcept {
        const detail::join_drop d = t->state.unset_join_interested();
        if (d.drop_output) drop_result(t);
        if (d.drop_waker) drop_unfired_waker(t);
        t->release();
    }

    // drop() of a handle that saw its task COMPLETE (done()'s acquire load, or the joiner's wake):
    // the result is ours; destroy it first, then JOIN_INTEREST and our reference in one RMW.
    void drop_complete() noexcept {
        detail::async_task* t = std::exchange(task_, nullptr);
        drop_result(t);
        if (t->state.owns_join_slot()) drop_unfired_waker(t);  // while the reference is still ours
        if (t->state.drop_join_interest_complete().last) t->deallocate();
    }

    // The finished task's result, which the handle owns: an exception nobody collected (detached
    // after it finished, or not rethrown by take()) goes to the handler.
    static void drop_result(detail::async_task* t) noexcept {
        if (!t->frame_destroyed && t->root_promise->error)
            t->owner->report_unhandled(std::exchange(t->root_promise->error, nullptr), "a detached coroutine task");
        t->destroy_root();
    }

    // The waker slot is ours: a waker we stored and nobody fired is released.
    static void drop_unfired_waker(detail::async_task* t) noexcept {
        if (t->join.task != nullptr)
            detail::waker::from_parts(std::exchange(t->join.task, nullptr), t->join.gen).reset();
    }

    detail::async_task* task_ = nullptr;
};

template <class T>
struct join_handle<T>::awaiter {
    join_handle* handle;
    detail::cancellable mode = detail::cancellable::yes;
    bool armed = false;

    bool await_ready() {
        handle->check();
        return handle->done() && detail::spend_budget();
    }
    bool await_suspend(std::coroutine_handle<> h) noexcept {
        detail::async_task* t = handle->task_;
        if (handle->done()) return detail::yield_suspend(h);  // ready, but the budget is spent
        // Not started yet (still queued): run it here rather than suspend until a worker does.
        if (t->run_inline() && handle->done()) return !detail::spend_budget() && detail::yield_suspend(h);
        armed = true;
        detail::waker w = detail::prepare_suspend(h, mode);
        if (!w) return false;  // cancellation requested: await_resume throws
        auto [joiner, gen] = w.release_parts();
        t->join.task = joiner;
        t->join.gen = gen;
        if (t->state.set_join_waker()) return true;  // the runtime fires it at completion
        // It completed meanwhile: the slot is still ours; take the waker back.
        detail::waker back = detail::waker::from_parts(std::exchange(t->join.task, nullptr), gen);
        return !detail::retract_suspend(back);
    }
    T await_resume() {
        if (armed && detail::resume_reason() == detail::wake_reason::cancelled) {
            detail::async_task* t = handle->task_;
            // Take the slot back, unless the task completed (then its runner fires the waker:
            // the resolve fails and only drops the reference). The handle stays valid.
            if (!handle->done() && t->state.unset_waker() && t->join.task != nullptr)
                detail::waker::from_parts(std::exchange(t->join.task, nullptr), t->join.gen).reset();
            detail::throw_cancelled();
        }
        return handle->take();
    }
};

// crew-internal: spawn `t` on `r` (refused: throws as pool::spawn does).
template <class T>
join_handle<T> detail_spawn(detail::registry& r, task<T>&& t) {
    auto root = detail::task_access<T>::release(t);
    if (!root) throw usage_error("crew::spawn: the task is empty (moved from)");
    detail::async_task* a = detail::async_task::create(r, root, &root.promise());  // in the frame
    // Not linked into the live-task list yet: only a task that suspends is (async_task::link).
    if (detail::schedule_async(r, a, detail::async_wake::spawn_task)) return join_handle<T>(a);
    a->destroy_root();  // refused (shutting down, or forked away): nothing ran
    a->deallocate();
    r.throw_refused();
}

// Spawn `t` on the pool of the worker running the caller, else on the default pool.
template <class T>
join_handle<T> spawn(task<T>&& t) {
    return detail_spawn(detail::current_registry(), std::move(t));
}

template <class T>
join_handle<T> pool::spawn(task<T>&& t) {
    return detail_spawn(*registry_, std::move(t));
}

template <class T>
T pool::block_on(task<T>&& t) {
    return detail_spawn(*registry_, std::move(t)).get();
}

// Run `t` on the current pool (the default pool outside every pool) and wait for its result: an
// outside thread blocks; a worker helps meanwhile.
template <class T>
T block_on(task<T>&& t) {
    return detail_spawn(detail::current_registry(), std::move(t)).get();
}

}  // namespace crew
