// crew/detail/async_schedule.hpp -- the seam between crew's coroutine tasks (crew/async/) and the
// workers that run them.
//
// A spawned coroutine task is a detail::task (its execute() resumes the coroutine once and returns
// when it suspends or completes), so the injector and the worker loop can hold it like any other
// task. The async layer decides *when* a task must be queued (the state word in task_state.hpp);
// this file decides *where*:
//   * schedule_async(r, t, how): queue `t` (it owns the queue entry's reference) on pool `r`.
//     From a worker of `r`: spawn -> the back of that worker's FIFO ring; wake -> its LIFO slot
//     (the previous occupant goes to the ring, unless its entry is stale: then it is dropped,
//     drop_stale_entry below); spawn_task -> the LIFO slot when a coroutine task is running on
//     that worker, else the ring; yield -> the back of the ring. From any other
//     thread: the injector, then wake a parked worker. Returns false when `r` refuses work (it is
//     shutting down, or was created before a fork()): the caller still owns the reference.
//   * the cooperative budget: a worker grants each run of a coroutine task async_budget units;
//     every crew awaitable that completes without suspending spends one (spend_budget()); when it
//     returns false the awaitable suspends and re-queues the task with async_wake::yield.
//   * frame memory: coroutine frames come from allocate_frame / free_frame (a per-worker cache of
//     size classes; frees from another thread go back to the owner).
//
// Who may call what: schedule_async from any thread; the budget functions on the thread running a
// coroutine task; allocate_frame/free_frame from any thread.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "crew/detail/frame_cache.hpp"
#include "crew/detail/task.hpp"
#include "crew/detail/thread_state.hpp"

namespace crew::detail {

class registry;
class async_task;

enum class async_wake : std::uint8_t {
    spawn,  // FIFO (the back of the ring), never the LIFO slot (the I/O driver's readiness reports)
    wake,   // woken by another task on this worker: the LIFO slot
    yield,  // re-queued by yield_now or an exhausted budget: the back of the ring
    // woken by a task on this worker whose run is over (it completed: its joiner): the LIFO slot,
    // with the notify of a yield when the worker goes straight back to its queues (worker.cpp)
    wake_at_end,
    // a new task (crew::spawn, session 12): spawned by a coroutine task running on a worker of the
    // pool, the LIFO slot, as a wake (Tokio's shape: the child runs next, or is claimed inline by
    // its awaiter); spawned from anywhere else, as `spawn`. Last: tests pick the first three by
    // value (async_schedule_test's `c % 3`).
    spawn_task,
};

// The worker's LIFO slot displaced `t` (a queue entry held by the worker): drop it when it is a
// coroutine task's stale entry (its awaiter ran it inline: task_state::drop_stale_entry, which may
// free the frame here). True: dropped, queue nothing; false: a live entry or a plain task, queue
// it. Defined in src/async/async_task.cpp.
bool drop_stale_entry(task* t) noexcept;

// Is `t` a spawned coroutine task (async_task::run)? The worker counts coroutine runs that came
// through the injector with it. Defined in src/async/async_task.cpp.
bool is_async_task(const task* t) noexcept;

// The LIFO slot's stealability. 0 (the default, Go's compromise): thieves look at other workers'
// LIFO slots only on the last pass of a steal round, after every deque and ring came up empty.
// 1 (Tokio's shape with its LIFO slot stealable): a thief looks at each victim's slot right after
// its ring. Measured on async_ping_pong and async_spawn_await in docs/BENCHMARKS.md.
#ifndef CREW_ASYNC_LIFO_ALWAYS_STEALABLE
#define CREW_ASYNC_LIFO_ALWAYS_STEALABLE 0
#endif
inline constexpr bool lifo_always_stealable = CREW_ASYNC_LIFO_ALWAYS_STEALABLE != 0;

// Queue `t` on `r` (see above). Defined in src/async_schedule.cpp.
bool schedule_async(registry& r, task* t, async_wake how);

// The budget of the coroutine task running on this thread. The worker sets it (begin_async_run)
// for every task it picks up; worker::wait_until saves and restores it around nested runs, so a
// coroutine whose worker helps inside crew::join keeps what it had; awaitables spend it.
inline constexpr std::uint32_t async_budget = 128;
inline constinit thread_local std::uint32_t async_budget_left
    __attribute__((tls_model("initial-exec"))) = async_budget;

inline void begin_async_run() noexcept { async_budget_left = async_budget; }

// The coroutine task running on this thread (nullptr outside every run), and the number of inline
// symmetric transfers since its run began (the stack bound of crew/async/task.hpp). A run sets
// them and, when it returns, leaves current_async_task null (async_task::run_once): it does not
// restore what was there before. A run nested on top of another coroutine's run (a worker that
// helps inside crew::join, task_group::wait or a blocking get() called from a coroutine) can only
// start inside worker::wait_until, which saves all three thread-locals (nested_async_run below)
// and puts them back after each nested task, so the interrupted run finds them as it left them.
inline constinit thread_local async_task* current_async_task __attribute__((tls_model("initial-exec"))) = nullptr;
inline constinit thread_local std::uint32_t inline_transfers __attribute__((tls_model("initial-exec"))) = 0;

// What a waiting worker saves before it runs other tasks on top of the frame that waits, and
// restores after each (worker::wait_until; a cold path: once per nested task).
struct nested_async_run {
    async_task* task = current_async_task;
    std::uint32_t transfers = inline_transfers;
    std::uint32_t budget = async_budget_left;
    void restore() const noexcept {
        current_async_task = task;
        inline_transfers = transfers;
        async_budget_left = budget;
    }
};

// Spend one unit. False when the budget is exhausted: the caller must suspend and re-queue the
// task with async_wake::yield (and the worker counts a budget-forced yield).
inline bool spend_budget() noexcept {
    if (async_budget_left == 0) return false;
    --async_budget_left;
    return true;
}

// Coroutine frame memory (promise_type's operator new/delete, the primitives' state blocks).
// Inline (session 17): a coroutine's frame size is a constant where its ramp allocates and its
// destroy frees, so the size class folds away, and a worker's hit path is current_frames' one
// thread-local load and the free list (callgrind: allocate 34 -> ~12 instructions, free 33 -> ~14,
// four of each per ping_pong round). Everything else is out of line (src/async_schedule.cpp).
void* allocate_frame_large(std::size_t size);         // beyond the largest class: the heap
void* allocate_frame_outside(unsigned size_class);    // a class block on a thread that is no worker
void free_frame_large(void* frame) noexcept;          // beyond the largest class: the heap
void free_frame_cold(frame_header* h, unsigned size_class) noexcept;  // not this worker's own block

// frame_class_of without its loop: the classes double from frame_min_block, so the class of
// `total` (1 <= total <= frame_max_block) is the bit width of (total - 1) / frame_min_block.
constexpr unsigned frame_class_fast(std::size_t total) noexcept {
    return static_cast<unsigned>(std::bit_width((total - 1) / frame_min_block));
}

inline void* allocate_frame(std::size_t size) {
    const std::size_t total = size + frame_header_size;
    if (total > frame_max_block || total < size) [[unlikely]] return allocate_frame_large(size);
    const unsigned c = frame_class_fast(total);
    if (frame_cache* fc = current_frames) [[likely]] return fc->allocate(c);
    return allocate_frame_outside(c);
}

inline void free_frame(void* frame, std::size_t size) noexcept {
    if (frame == nullptr) return;
    const std::size_t total = size + frame_header_size;
    if (total > frame_max_block || total < size) [[unlikely]] return free_frame_large(frame);
    frame_header* const h = frame_cache::header_of(frame);
    // The class allocate_frame(size) stamped: folded from a constant size, else read back (one
    // load instead of the bit-width computation: async_task::deallocate, the primitives' blocks).
    const unsigned c = __builtin_constant_p(total) ? frame_class_fast(total) : h->size_class;
    frame_cache* const fc = current_frames;
    if (fc != nullptr && h->owner == fc->depot()) [[likely]] return fc->put(h, c);  // ours
    free_frame_cold(h, c);
}

}  // namespace crew::detail
