// crew/async/detail/async_task.hpp -- the header of one spawned coroutine task: its task_state
// word, its suspension word, its cancel hooks, and the runner that resumes it on a worker.
//
// A spawned task is a detail::task (the injector, the deque and the async ring hold it like any
// other task) whose execute() is async_task::run: take RUNNING (task_state.hpp), resume the
// coroutine at `resume_point` once, and on return either complete it (the root coroutine reached
// its final suspend) or go idle (re-queueing it when a wake came during the run). The coroutine
// frames (the root task<T> and whatever it awaits inline) are separate from this header; the
// header is freed when the task_state reference count reaches zero, the root frame by whoever owns
// the result (the join handle, or the runner when the handle is gone).
//
// The suspension word `susp` (suspension_word in task_state.hpp: phase, sticky cancel bit,
// cancellable bit, generation) is one atomic word.
// Exactly one party moves a suspension out of `waiting` (one CAS): a waker (-> signaled, then it
// queues the task with the reference it holds) or the canceller (-> cancelled, then it queues the
// task by reference). The runner never resumes a task whose current suspension is still waiting
// (a stale notification, e.g. from a retracted suspension, only costs an empty run).
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>

#include "crew/async/detail/task_list.hpp"
#include "crew/detail/async_schedule.hpp"
#include "crew/detail/atomics.hpp"
#include "crew/detail/completion.hpp"
#include "crew/detail/task.hpp"
#include "crew/detail/task_state.hpp"

namespace crew::detail {

class registry;
class async_task;

struct promise_base;

// A callback that request_cancel() runs (once) on the thread that cancels: when_all/when_any use it
// to forward cancellation to their children. Registered and unregistered by the task itself.
struct cancel_hook {
    void (*on_cancel)(cancel_hook*) noexcept = nullptr;
    cancel_hook* next = nullptr;
    cancel_hook* prev = nullptr;
};

// Where the join handle's waker lives (the slot task_state's JOIN_WAKER bit guards): an awaiting
// coroutine task's suspension (task + generation, owning one reference), or a blocked thread.
struct join_slot {
    async_task* task = nullptr;
    std::uint64_t gen = 0;
    completion* blocked = nullptr;
};

// current_async_task and inline_transfers (the running task, and the stack bound of task.hpp)
// live in crew/detail/async_schedule.hpp: the worker saves them around nested runs.

// How many symmetric transfers one run makes inline before it re-queues itself (a yield). Without a
// guaranteed tail call (g++ -O0, ASan, TSan) every transfer nests a frame until the run returns;
// 1024 of them stay far below a megabyte.
inline constexpr std::uint32_t max_inline_transfers = 1024;

// How many inline runs (async_task::run_inline: an awaited, queued task run on its awaiter's
// stack) may nest on one thread: each keeps its awaiter's frames on the stack below it.
inline constexpr std::uint32_t max_inline_runs = 8;

// The header whose root frame destroy_root() is destroying on this thread (see above); nullptr
// otherwise. Saved and restored: destroying a root may drop join handles of other tasks.
inline constinit thread_local async_task* deferred_root __attribute__((tls_model("initial-exec"))) = nullptr;

// The task whose frames async_task::shut_down() is destroying on this thread (nullptr otherwise):
// a primitive's awaiter destroyed at its suspension asks it whether a releaser claimed it
// (wait_list.hpp, finish_destroyed_cold). Saved and restored.
inline constinit thread_local async_task* draining_task __attribute__((tls_model("initial-exec"))) = nullptr;

class async_task : public task {
public:
    using susp_word = suspension_word<>;
    static constexpr std::uint64_t phase_none = susp_word::phase_none;
    static constexpr std::uint64_t phase_waiting = susp_word::phase_waiting;
    static constexpr std::uint64_t phase_signaled = susp_word::phase_signaled;
    static constexpr std::uint64_t phase_cancelled = susp_word::phase_cancelled;

    // The header for the spawned root coroutine `root` (its promise at `promise`), on pool `r`,
    // constructed in the promise's spawn_storage (no allocation).
    static async_task* create(registry& r, std::coroutine_handle<> root, promise_base* promise) noexcept;

    task_state<> state;
    // The suspension word (task_state.hpp). RMW by the task (arm/retract), wakers and the canceller.
    susp_word susp;
    registry* owner;  // written only while RUNNING (migrate); read by whoever queues the task after that
    std::coroutine_handle<> resume_point;  // the coroutine to resume next; written only while RUNNING
    std::coroutine_handle<> root;          // the spawned coroutine; destroyed by the result's owner
    promise_base* const root_promise;
    bool root_done = false;         // written while RUNNING (the root's final suspend)
    bool frame_destroyed = false;   // the shutdown drain destroyed the root before it finished
    join_slot join;                 // see task_state.hpp's join waker rules
    async_task* list_prev = nullptr;  // async_task_list links (under the lock of shard list_shard)
    async_task* list_next = nullptr;
    std::uint8_t list_shard = 0;  // written by add() before the task is queued; read by remove()
    bool listed = false;
    // Linked into its pool's live-task list (only tasks that suspended are: see link()). Written
    // and read only while RUNNING (the run hand-off orders it between threads).
    bool linked = false;
    // notify_self() was called during this run: re-queue after it. Written and read (and cleared)
    // by the runner only, while RUNNING.
    bool yield_requested = false;

    // detail::task::execute: a worker popped a queue entry of this task.
    static void run(task* t) noexcept;

    // The running task (current_async_task) awaits this task's join handle and this task is queued
    // and not started: take its entry back from this worker's LIFO slot, or else its run
    // (task_state's claim_to_run_inline), and run it here, on the
    // awaiter's stack, instead of suspending the awaiter until a worker gets to it. True: it ran
    // (it may have completed, or suspended); false: nothing happened (not queued, running or
    // complete, cancelled, the nesting bound, or another pool's task). The awaiter's run state is
    // put back afterwards (nested_async_run).
    bool run_inline() noexcept;

    // Cancellation (any thread holding a reference): sets the sticky bit; resolves a cancellable
    // waiting suspension as cancelled and queues the task; runs the cancel hooks. Idempotent.
    void request_cancel() noexcept;
    bool cancel_requested() const noexcept { return susp.cancel_requested(); }
    // False: cancellation was requested already (the hook was not linked; act on it yourself).
    bool add_cancel_hook(cancel_hook* h) noexcept;
    // After it returns, the hook is not running and will not run.
    void remove_cancel_hook(cancel_hook* h) noexcept;

    // Queue the task for a wake that owns a reference (waker::wake) or borrows one (cancel).
    void wake_by_val(async_wake how) noexcept;
    void wake_by_ref(async_wake how) noexcept;
    // The running task asks to be run again after this run (yield, budget, stack bound). No RMW:
    // the runner folds it into its transition_to_idle (task_state.hpp), which sets NOTIFIED.
    void notify_self() noexcept { yield_requested = true; }

    // The running task is about to suspend (prepare_suspend): link it into its pool's live-task
    // list, once, so the shutdown drain can free it while it waits. A task that never suspends
    // is never linked (it is always queued or running, and workers drain their queues before
    // they exit): a spawn that runs to completion costs no list lock.
    void link() noexcept {
        if (!linked) [[unlikely]] link_cold();
    }

    // schedule_on: move this (running) task to pool `to`; it is queued there after this run
    // (notify_self). False: `to` is shutting down; nothing changed.
    bool migrate(registry& to) noexcept;

    // Drop one reference (free the header on the last).
    void release() noexcept {
        if (state.ref_dec()) deallocate();
    }

    // The shutdown drain: the pool's workers are gone; free this task's frames.
    void shut_down() noexcept;
    // Destroy the root frame (the result's owner, once); its memory stays until deallocate().
    void destroy_root() noexcept;
    // The last reference: destroy the header and free the root frame's memory.
    void deallocate() noexcept;
    // The promise's operator delete: is `frame` (of `size` bytes) the root frame of the header
    // destroy_root() is destroying on this thread? Then keep the block for deallocate().
    static bool defer_root_free(void* frame, std::size_t size) noexcept {
        async_task* t = deferred_root;
        if (t == nullptr) return false;
        // As integers: < between pointers into unrelated objects is unspecified.
        const auto lo = reinterpret_cast<std::uintptr_t>(frame);
        const auto at = reinterpret_cast<std::uintptr_t>(t);
        if (at < lo || at - lo >= size) return false;  // a frame the root awaited inline
        t->frame_memory_ = frame;
        t->frame_size_ = size;
        deferred_root = nullptr;
        return true;
    }

private:
    async_task(registry& r, std::coroutine_handle<> h, promise_base* p) noexcept
        : task{&run}, owner(&r), resume_point(h), root(h), root_promise(p) {}

    // `transfers`: inline_transfers at the start of the run (an inline run continues its awaiter's).
    void run_once(std::uint32_t transfers = 0) noexcept;
    // A popped entry's transition to RUNNING (run(); run_inline() after taking its entry back).
    bool start_entry() noexcept;
    void link_cold() noexcept;
    void after_run() noexcept;
    void complete(std::uint64_t scheduler_refs) noexcept;
    void complete_watched(std::uint64_t scheduler_refs) noexcept;
    void drop_detached_output() noexcept;
    void requeue(async_wake how) noexcept;
    void fire_join_waker() noexcept;
    void lock_hooks() noexcept;
    void unlock_hooks() noexcept;

    std_atomics::atomic<bool> hooks_locked_{false};
    cancel_hook* hooks_ = nullptr;  // guarded by hooks_locked_
    void* frame_memory_ = nullptr;  // the destroyed root frame's block (defer_root_free)
    std::size_t frame_size_ = 0;
};

// What every task<T> promise has: where to go when it finishes, the exception it ended with, and
// the room for the header of a spawned root (constructed only by async_task::create).
struct promise_base {
    std::coroutine_handle<> continuation;  // the awaiting coroutine; empty for a spawned root
    std::exception_ptr error;
    alignas(async_task) unsigned char spawn_storage[sizeof(async_task)];
};

// Inline: once per spawn (out of line it was a call around a few stores).
inline async_task* async_task::create(registry& r, std::coroutine_handle<> root, promise_base* promise) noexcept {
    return ::new (static_cast<void*>(promise->spawn_storage)) async_task(r, root, promise);
}

}  // namespace crew::detail
