// crew/async/detail/waiter.hpp -- how a crew awaitable suspends the current coroutine task, how it
// is woken, and how cancellation reaches it. Every crew awaitable that waits (join handles, the
// one-shot event below, channel/async_mutex/event, later sleep and I/O) follows this protocol.
//
// THE PROTOCOL
//  1. Suspend (in await_suspend(h), on the thread running the task): `waker w = prepare_suspend(h)`
//     arms a new suspension of the current task: the suspension word (async_task.hpp) moves to
//     phase `waiting` with a fresh generation, and `w` holds (task, generation, one task
//     reference). Publish `w` where the waking side finds it (e.g. move it into a node of your
//     waiter list, under your lock) and return true. An empty `w` means cancellation was requested
//     already: do not suspend (return false); await_resume then sees wake_reason::cancelled.
//  2. Wake (any thread, any time, even after the awaitable or its coroutine frame is gone):
//     `w.wake()` moves the suspension waiting -> signaled in one CAS; the winner queues the task
//     through schedule_async (never resuming it on the waker's stack), so the coroutine is
//     resumed exactly once per suspension. False: the suspension was resolved already (cancelled):
//     nothing was queued, and whatever you meant to hand over (a value, a lock, a permit) was NOT
//     delivered: give it to the next waiter. Either way `w` is empty afterwards and its reference
//     dropped. Take `w` out of your structure under your lock, then call wake() after unlocking.
//  3. Cancel (any thread): handle.cancel() sets the task's sticky cancel bit and, if the task is
//     waiting in a cancellable suspension, moves it waiting -> cancelled in one CAS and queues it.
//     One CAS decides between a racing wake and cancel: the loser does nothing (wake() returns
//     false), so the coroutine never resumes twice, and a waker of an old suspension can never
//     resolve a later one (the CAS compares the generation).
//  4. Resume (await_resume, on the task's thread): resume_reason() says what ended the suspension.
//     `signaled`: your waker delivered (it took the node out of your structure). `cancelled`: your
//     node may still be published: take it out under your lock (and drop its waker: reset() or
//     destroy it) if it is still there; if a waker took it first, its wake() fails and it hands
//     the item to someone else. Then throw_cancelled().
//  5. Never suspend a crew task in a foreign awaitable (std::suspend_always, another runtime's
//     awaitable): only this protocol queues it again.
//
// Cooperative budget: an awaitable that can complete without suspending calls spend_budget() (in
// await_ready: `return ready() && spend_budget();`). When the budget is exhausted it still completes
// the operation in await_suspend, and then returns yield_suspend(h): the task goes to the back of
// the queue and resumes later with the result already in hand (a budget yield never throws
// cancelled_error, so no value is lost).
//
// Retract: if, after prepare_suspend, await_suspend finds that it need not wait after all (e.g.
// set_join_waker failed because the task completed meanwhile), call retract_suspend(w): true ->
// return false (continue inline); false -> a cancel resolved it first and queued the task: return
// true (it resumes once, with wake_reason::cancelled).
//
// Lifetime: a waker owns a reference to the task *header* (not its frames), so a late wake (after
// the coroutine resumed through cancellation, completed, or was destroyed by a pool shutdown) only
// touches the header and is a no-op. A pool shutdown destroys the frames of suspended tasks: your
// awaitable's destructor runs then and must take its node out of your structure (under the lock),
// exactly as a cancelled await_resume does.
//
// EXAMPLE (the one-shot event of oneshot_event.hpp, the pattern to copy):
//
//   struct awaiter {
//       oneshot_event& e;
//       waker w;                                       // lives in the coroutine frame
//       bool await_ready() noexcept { return e.is_set() && spend_budget(); }
//       bool await_suspend(std::coroutine_handle<> h) {
//           std::lock_guard lock(e.mutex_);
//           if (e.set_) return yield_suspend(h);      // ready, but the budget is spent
//           w = prepare_suspend(h);
//           if (!w) return false;                      // cancelled: await_resume throws
//           e.waiters_.push_back(this);
//           return true;
//       }
//       void await_resume() {
//           if (resume_reason() == wake_reason::cancelled) { unlink(); throw_cancelled(); }
//       }
//       ~awaiter() { unlink(); }                       // shutdown destroys suspended frames
//   };
//   void oneshot_event::set() {
//       std::vector<waker> ws;                         // wake outside the lock
//       { std::lock_guard lock(mutex_); set_ = true; for (auto* a : waiters_) ws.push_back(std::move(a->w)); waiters_.clear(); }
//       for (auto& w : ws) w.wake();
//   }
#pragma once

#include <coroutine>
#include <cstdint>
#include <utility>

#include "crew/async/detail/async_task.hpp"
#include "crew/errors.hpp"

namespace crew::detail {

enum class wake_reason : std::uint8_t { signaled, cancelled };
enum class cancellable : bool { no, yes };

// One armed suspension: (task, generation) and one task reference. Move-only; destroying or
// resetting a non-empty waker drops its reference without waking.
class waker {
public:
    waker() noexcept = default;
    waker(waker&& o) noexcept : task_(std::exchange(o.task_, nullptr)), gen_(o.gen_) {}
    waker& operator=(waker&& o) noexcept {
        if (this != &o) {
            reset();
            task_ = std::exchange(o.task_, nullptr);
            gen_ = o.gen_;
        }
        return *this;
    }
    ~waker() { reset(); }

    explicit operator bool() const noexcept { return task_ != nullptr; }

    // Resolve the suspension as signaled and queue the task (see the header). False: it was
    // resolved already (cancelled); nothing queued. Leaves the waker empty. Any thread.
    bool wake(async_wake how = async_wake::wake) noexcept {
        async_task* t = claim();
        if (t == nullptr) return false;
        t->wake_by_val(how);  // our reference becomes the queue entry's (or is dropped)
        return true;
    }

    // wake() in two halves, for a caller that resolves under a lock and queues after unlocking
    // (wake_batch, wait_list.hpp): resolve the suspension as signaled (the one CAS that decides
    // against a racing cancel) and return the task with the waker's reference, NOT queued yet;
    // nullptr when it was resolved already (the reference is dropped). The caller must then call
    // t->wake_by_val(how) exactly once: until it does, nobody else queues the task (the canceller's
    // CAS fails), so the task stays suspended and whatever its suspension refers to stays alive.
    // Leaves the waker empty. Any thread.
    async_task* claim() noexcept {
        async_task* t = std::exchange(task_, nullptr);
        if (t == nullptr) return nullptr;
        if (!resolve(t, gen_, async_task::phase_signaled)) {
            t->release();
            return nullptr;
        }
        return t;
    }

    // Give the suspension up without waking (drops the reference). Any thread.
    void reset() noexcept {
        if (async_task* t = std::exchange(task_, nullptr)) t->release();
    }

    // For join_slot: take the raw parts (the reference goes with them) / rebuild from them.
    std::pair<async_task*, std::uint64_t> release_parts() noexcept { return {std::exchange(task_, nullptr), gen_}; }
    static waker from_parts(async_task* t, std::uint64_t gen) noexcept { return waker(t, gen); }

    // waiting(gen) -> `phase` in one CAS; false when the suspension is no longer waiting.
    static bool resolve(async_task* t, std::uint64_t gen, std::uint64_t phase) noexcept {
        return t->susp.resolve(gen, phase);
    }

private:
    waker(async_task* t, std::uint64_t gen) noexcept : task_(t), gen_(gen) {}
    friend waker prepare_suspend(std::coroutine_handle<>, cancellable) noexcept;

    async_task* task_ = nullptr;
    std::uint64_t gen_ = 0;  // the generation bits of the armed suspension word
};

// The coroutine task running on this thread; crew awaitables are only awaited inside one.
inline async_task& this_async_task() noexcept { return *current_async_task; }

// Arm a suspension of the current task at `h` (see the header). Empty: cancellation was requested
// and the suspension is cancellable: do not suspend.
inline waker prepare_suspend(std::coroutine_handle<> h, cancellable c = cancellable::yes) noexcept {
    async_task& t = this_async_task();
    t.link();  // from now on only a wake queues it: the shutdown drain must find it
    t.resume_point = h;
    const std::uint64_t gen = t.susp.arm(c == cancellable::yes);
    if (gen == 0) return {};
    t.state.ref_inc();  // the waker's reference (we hold the running entry's: count > 0)
    return waker(&t, gen);
}

// Un-arm a suspension whose waker was never handed out, or taken back (see the header).
inline bool retract_suspend(waker& w) noexcept {
    auto [t, gen] = w.release_parts();
    const bool retracted = waker::resolve(t, gen, async_task::phase_none);
    t->release();  // never the last: the running entry holds one
    return retracted;
}

// In await_resume: what ended the current task's last suspension.
inline wake_reason resume_reason() noexcept {
    // acquire (phase()): pairs with the resolving CAS (the canceller's or the waker's).
    return this_async_task().susp.phase() == async_task::phase_cancelled ? wake_reason::cancelled
                                                                         : wake_reason::signaled;
}

[[noreturn]] inline void throw_cancelled() { throw cancelled_error(); }

// Has cancellation been requested for the current task?
inline bool current_cancel_requested() noexcept {
    async_task* t = current_async_task;
    return t != nullptr && t->cancel_requested();
}

// Suspend `h` and queue the task at the back (yield_now, an exhausted budget). Returns true (the
// await_suspend result). Not a cancellation point.
inline bool yield_suspend(std::coroutine_handle<> h) noexcept {
    async_task& t = this_async_task();
    t.resume_point = h;
    t.notify_self();  // RUNNING: only NOTIFIED; the runner re-queues after the run
    return true;
}

}  // namespace crew::detail
