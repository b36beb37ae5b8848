// crew/async/detail/wait_list.hpp -- what channel, async_mutex and event share: FIFO lists of
// suspended coroutine tasks, on the waiter protocol of waiter.hpp, and the reference-counted state
// block that lets a waiter outlive a racing destruction of its primitive.
//
// Every primitive keeps its state in one block (`wait_state` plus its own fields; a channel's
// buffer follows in the same block) from the frame cache (allocate_frame: a per-worker free list,
// no malloc), guarded by one `wait_lock` (a one-word spin lock: the sections are a few list and
// buffer operations plus wake claims; session 7, see docs/ASYNC.md). A task that cannot proceed
// links a `wait_node` (a member of its awaitable, so inside the coroutine frame: no allocation per
// wait) at the back of a list and arms its waker (prepare_suspend). A releaser pops nodes from the
// front, writes the node's outcome and CLAIMS the wake (wake_batch::claim, the resolving CAS)
// WHILE HOLDING THE LOCK; the claimed tasks are queued through the scheduler after the lock is
// released (session 9: before, the holder queued them, and possibly futex-woke a parked worker,
// inside the critical section, so at 2 workers the other worker spun on the lock behind a
// syscall). Queuing never resumes a task on the releaser's stack, so releasing 100,000 waiters is
// a loop, not a recursion.
//
// Wake versus cancel (waiter.hpp step 3): one CAS decides. When cancellation won, claim() returns
// false and the releaser takes its grant back (the value goes to the next receiver or stays in the
// channel, the mutex goes to the next waiter). Deciding under the lock is what makes taking a value
// back possible: the cancelled task unlinks its node in await_resume under the same lock, so the
// node (in its frame) is alive for as long as the releaser holds the lock. After a successful
// claim the node is no longer touched by the releaser; the task cannot run until it is queued.
//
// Lifetime. The primitive holds one reference on its state block, and every awaiter that suspended
// holds one from its suspension until it is finished with the primitive (await_resume, or its
// destructor when a pool shutdown destroys the suspended frame). So a task resumed by cancellation
// may take the lock even if the primitive was destroyed meanwhile, and the last holder frees the
// block. The count is an atomic, not guarded by the lock, so a woken awaiter drops its reference
// without locking.
#pragma once

#include <atomic>
#include <cassert>
#include <coroutine>
#include <cstddef>
#include <mutex>
#include <new>
#include <type_traits>
#include <utility>

#include "crew/async/detail/waiter.hpp"
#include "crew/detail/async_schedule.hpp"
#include "crew/detail/atomics.hpp"

namespace crew::detail {

// The lock of a primitive's state (BasicLockable, so std::lock_guard / std::unique_lock work). A
// one-word spin lock: uncontended, lock() is one exchange and unlock() a plain store (std::mutex
// costs a locked instruction for each, and two calls). A contended lock() spins with pauses, then
// yields the thread (lock_cold, src/async/primitives.cpp): a holder only moves list nodes and
// values and claims wakes (wake_batch: the queuing comes after unlock), it never waits for anything
// or makes a system call while holding it.
class wait_lock {
public:
    void lock() noexcept {
        // acquire: pairs with unlock()'s release store (what the previous holder wrote).
        if (locked_.exchange(true, std::memory_order_acquire)) [[unlikely]] lock_cold();
    }
    // release: pairs with the acquire exchange of the next lock().
    void unlock() noexcept { locked_.store(false, std::memory_order_release); }

private:
    void lock_cold() noexcept;
    std_atomics::atomic<bool> locked_{false};
};

// One suspended task on a primitive's list (lives in the awaitable). The links and flags are
// guarded by the owning state's lock; the outcome fields of derived nodes are written by the
// releaser before wake() and read by the resumed task (ordered by the wake's release CAS and the
// queue hand-off, waiter.hpp).
struct wait_node {
    wait_node* prev = nullptr;
    wait_node* next = nullptr;
    bool linked = false;     // on the list
    bool abandoned = false;  // woken by the primitive's destructor (event, async_mutex)
    waker w;
};

// An intrusive doubly linked FIFO of wait_nodes (guarded by the owner's lock).
class wait_list {
public:
    bool empty() const noexcept { return head_ == nullptr; }
    std::size_t size() const noexcept { return size_; }

    void push_back(wait_node& n) noexcept {
        assert(!n.linked);
        n.prev = tail_;
        n.next = nullptr;
        if (tail_ != nullptr)
            tail_->next = &n;
        else
            head_ = &n;
        tail_ = &n;
        n.linked = true;
        ++size_;
    }

    wait_node* pop_front() noexcept {
        wait_node* n = head_;
        if (n != nullptr) remove(*n);
        return n;
    }

    void remove(wait_node& n) noexcept {
        assert(n.linked);
        (n.prev != nullptr ? n.prev->next : head_) = n.next;
        (n.next != nullptr ? n.next->prev : tail_) = n.prev;
        n.prev = n.next = nullptr;
        n.linked = false;
        --size_;
    }

private:
    wait_node* head_ = nullptr;
    wait_node* tail_ = nullptr;
    std::size_t size_ = 0;
};

// The part of every primitive's block that the wait protocol needs. Primitives derive their state
// from it, make it with new_wait_state and free it through drop_ref / destroy_wait_state (virtual
// destructor: one path for all kinds).
struct wait_state {
    virtual ~wait_state() = default;
    wait_lock lock;
    std::atomic<std::size_t> refs{1};  // the primitive + every awaiter between suspension and finish
    std::size_t block_size = 0;        // the bytes allocate_frame gave (new_wait_state)

    // relaxed: the caller holds a reference (the primitive, while its member runs), so the count is
    // above zero and nobody frees concurrently; nothing is published (as std::shared_ptr).
    void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }

    // The primitive's destructor: is it the only holder? Then no awaiter is suspended on the block
    // (a suspended one holds a reference until it is finished with the block) and nobody else can
    // touch it: the primitive may free it without locking. acquire: pairs with the release half
    // of the finished awaiters' drop_ref (their last uses of the block happen before the free).
    bool sole_holder() const noexcept { return refs.load(std::memory_order_acquire) == 1; }
};

// A state block of `size` bytes (at least sizeof(S): a channel's buffer follows the state) from
// the frame cache, with S constructed at its start.
template <class S, class... A>
S* new_wait_state(std::size_t size, A&&... args) {
    static_assert(std::is_base_of_v<wait_state, S> && std::is_nothrow_constructible_v<S, A&&...>);
    static_assert(alignof(S) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "frame blocks are 16-byte aligned");
    S* s = ::new (allocate_frame(size)) S(std::forward<A>(args)...);
    s->block_size = size;
    return s;
}

// Destroy the state and give its block back (the last reference, or a sole holder).
inline void destroy_wait_state(wait_state* s) noexcept {
    const std::size_t size = s->block_size;
    s->~wait_state();
    free_frame(s, size);
}

// Drop one reference; the last frees the block. acq_rel: release so every holder's uses happen
// before the free, acquire so the freeing thread sees them (partner: the other holders' drops).
inline void drop_ref(wait_state* s) noexcept {
    if (s->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_wait_state(s);
}

// How an awaitable's co_await went (written in await_suspend, read in await_resume/destructor).
enum class wait_mode : unsigned char {
    ready,            // completed without suspending
    yielded,          // completed, then yielded: the budget was exhausted
    suspended,        // on the list (woken by the primitive, or cancelled); holds a reference
    finished,         // was suspended; the reference is dropped, the node is off the list
    cancelled_early,  // the task was already cancelled when it was about to wait
};

// Under the state's lock, in await_suspend: wait on `list`. True: suspended (return true from
// await_suspend and touch nothing after unlocking). False: the task was already cancelled; the
// node is not on the list and await_resume throws.
inline bool suspend_on(wait_state& s, wait_list& list, wait_node& n, std::coroutine_handle<> h, wait_mode& mode) {
    n.w = prepare_suspend(h);
    if (!n.w) {
        mode = wait_mode::cancelled_early;
        return false;
    }
    list.push_back(n);
    s.add_ref();
    mode = wait_mode::suspended;
    return true;
}

// The wakes a holder of a primitive's lock decides under the lock and performs after releasing
// it (session 9). Declare it BEFORE the lock guard, so the guard unlocks first and the batch's
// destructor then queues the claimed tasks, in claim order:
//
//   detail::wake_batch wakes;          // queued when it goes out of scope, after...
//   std::lock_guard g(s->lock);        // ...this unlocks
//   ... if (wakes.claim(node)) ...      // under the lock: the race with cancel is decided here
//
// Why it is exactly-once and cancel-safe: claim() is the same single CAS (waiting -> signaled)
// that wake() makes, still made under the lock, so "cancellation won" is still known while the
// lock is held and the releaser takes its grant back then, as before. Only the queuing
// (schedule_async, which may futex-wake a parked worker) moves past the unlock. A claimed task
// cannot run before it is queued (the canceller's CAS fails, and nothing else queues a waiting
// suspension), so its node, frame and outcome stay untouched meanwhile; the batch keeps the task
// pointers (with the wakers' references), never the nodes.
//
// Up to `capacity` claims are deferred; a wake-all beyond that (close(), set() or a destructor with
// more than 8 waiters) queues the rest under the lock, as every wake did before session 9.
class wake_batch {
public:
    static constexpr std::size_t capacity = 8;

    wake_batch() noexcept = default;
    ~wake_batch() {
        for (std::size_t i = 0; i < n_; ++i) tasks_[i]->wake_by_val(async_wake::wake);
    }
    wake_batch(const wake_batch&) = delete;
    wake_batch& operator=(const wake_batch&) = delete;

    // Under the lock: wake the task of a popped node (queued when the batch is destroyed). False:
    // cancellation won (nothing will be queued; the caller takes back whatever it put into the
    // node, still under the lock).
    bool claim(wait_node& n) noexcept {
        async_task* t = n.w.claim();
        if (t == nullptr) return false;
        if (n_ < capacity) [[likely]]
            tasks_[n_++] = t;
        else
            t->wake_by_val(async_wake::wake);  // overflow: under the lock (see above)
        return true;
    }

    std::size_t pending() const noexcept { return n_; }

private:
    async_task* tasks_[capacity];
    std::size_t n_ = 0;
};

// After completing without suspending (lock released): spend one unit of the budget; when it is
// exhausted, yield (re-queue at the back) with the result already in hand. await_suspend's result.
inline bool complete_ready(std::coroutine_handle<> h, wait_mode& mode) noexcept {
    if (spend_budget()) return false;
    mode = wait_mode::yielded;
    return yield_suspend(h);
}

// The end of a suspension, in await_resume (or the awaiter's destructor when a shutdown destroys
// the suspended frame). True: cancellation ended it (the caller throws). Either way the node is off
// the list and the reference dropped afterwards; a signaled node was unlinked by its releaser.
inline bool finish_suspension(wait_state* s, wait_list& list, wait_node& n, wait_mode& mode, bool cancelled) noexcept {
    if (mode != wait_mode::suspended) return false;
    mode = wait_mode::finished;
    if (cancelled) {
        std::lock_guard g(s->lock);
        if (n.linked) list.remove(n);  // else a releaser popped it and its wake() failed
        n.w.reset();
    }
    drop_ref(s);
    return cancelled;
}

// In await_resume after a suspension: did cancellation end it?
inline bool resumed_by_cancel() noexcept { return resume_reason() == wake_reason::cancelled; }

}  // namespace crew::detail
