// crew/async/detail/wait_list.hpp -- what channel, async_mutex and event share: FIFO lists of
// suspended coroutine tasks, on the waiter protocol of waiter.hpp, and the state block that
// outlives its primitive while a cancelled waiter may still come back to it ("Lifetime" below).
//
// Every primitive keeps its state in one block (`wait_state` plus its own fields; a channel's
// buffer follows in the same block) from the frame cache (allocate_frame: a per-worker free list,
// no malloc), guarded by one `wait_lock` (a one-word spin lock, wait_lock.hpp: the sections are a
// few list and buffer operations plus wake claims; session 7, see docs/ASYNC.md). A task that
// cannot proceed links a `wait_node` (a member of its awaitable, so inside the coroutine frame: no
// allocation per wait) at the back of a list and arms its waker (prepare_suspend). A releaser pops
// nodes from the front, writes the node's outcome and CLAIMS the wake (wake_batch::claim, the resolving CAS)
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
// Lifetime (session 15). The block outlives its primitive while a suspended awaiter may still
// come back to it: only a CANCELLED awaiter does (await_resume, or its destructor when a pool
// shutdown destroys the suspended frame, unlinks its node under the lock). A signaled awaiter never
// touches the block again: its releaser unlinked the node. So the lock word counts the awaiters
// that may come back (wait_lock: bit 0 the lock, the rest the count, changed only by the lock's
// holder): suspend_on adds one; a releaser whose claim succeeds drops the node's one, under the
// lock, in the same critical section (wake_batch::claim); a cancelled awaiter drops its own when
// it unlinks. No RMW beyond the lock's own: before session 15 every suspension took a reference
// (fetch_add) and every resumed awaiter dropped it (fetch_sub), signaled or not. The primitive's
// destructor frees the block at once when the word is 0 (unlocked, nobody counted: idle()), else
// it wakes everyone under the lock and frees the block if nobody is left counted, or marks it
// orphaned: the last counted awaiter frees it then, after its unlock.
#pragma once

#include <cassert>
#include <coroutine>
#include <cstddef>
#include <mutex>
#include <new>
#include <type_traits>
#include <utility>

#include "crew/async/detail/wait_lock.hpp"
#include "crew/async/detail/waiter.hpp"
#include "crew/detail/async_schedule.hpp"
#include "crew/detail/atomics.hpp"

namespace crew::detail {

// One suspended task on a primitive's list (lives in the awaitable). The links and flags are
// guarded by the owning state's lock; the outcome fields of derived nodes are written by the
// releaser before wake() and read by the resumed task (ordered by the wake's release CAS and the
// queue hand-off, waiter.hpp).
struct wait_node {
    wait_node* prev = nullptr;
    wait_node* next = nullptr;
    bool linked = false;     // on the list
    bool abandoned = false;  // woken by the primitive's destructor (event, async_mutex)
    bool counted = false;    // counted in the lock word: may come back to the block (see "Lifetime")
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
// from it, make it with new_wait_state and free it through destroy_wait_state (virtual destructor:
// one path for all kinds).
struct wait_state {
    virtual ~wait_state() = default;
    wait_lock lock;                    // and the count of awaiters that may come back ("Lifetime")
    bool orphaned = false;             // guarded by lock: the primitive is gone; the last counted awaiter frees
    std::size_t block_size = 0;        // the bytes allocate_frame gave (new_wait_state)
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

// Destroy the state and give its block back (nobody else can touch it any more).
inline void destroy_wait_state(wait_state* s) noexcept {
    const std::size_t size = s->block_size;
    s->~wait_state();
    free_frame(s, size);
}

// The end of a primitive's destructor that found its block not idle, under the lock, after it woke
// every waiter: true when nobody is left counted (the caller frees the block after unlocking);
// else the block is orphaned and the last counted awaiter frees it (finish_suspension).
inline bool orphan_locked(wait_state& s) noexcept {
    if (s.lock.waiters() == 0) return true;
    s.orphaned = true;
    return false;
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
    s.lock.add_waiter();  // under the lock: no RMW ("Lifetime")
    n.counted = true;
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

    explicit wake_batch(wait_state& s) noexcept : state_(s) {}
    ~wake_batch() {
        for (std::size_t i = 0; i < n_; ++i) tasks_[i]->wake_by_val(async_wake::wake);
    }
    wake_batch(const wake_batch&) = delete;
    wake_batch& operator=(const wake_batch&) = delete;

    // Under the lock: wake the task of a popped node (queued when the batch is destroyed) and drop
    // the node's count (a signaled awaiter never comes back to the block, "Lifetime"). False:
    // cancellation won (nothing will be queued; the node stays counted: its task comes back to
    // unlink; the caller takes back whatever it put into the node, still under the lock).
    bool claim(wait_node& n) noexcept {
        // Uncounted BEFORE the claim: after a successful claim the node is not ours to touch (a
        // shutdown may destroy the frame at once: finish_destroyed_cold). Failed: counted again (the
        // node is alive: its cancelled task unlinks it under this lock).
        n.counted = false;
        async_task* t = n.w.claim();
        if (t == nullptr) {
            n.counted = true;
            return false;
        }
        // The block's count: never the last (the primitive is alive, or orphan_locked follows).
        (void)state_.lock.drop_waiter();
        if (n_ < capacity) [[likely]]
            tasks_[n_++] = t;
        else
            t->wake_by_val(async_wake::wake);  // overflow: under the lock (see above)
        return true;
    }

    std::size_t pending() const noexcept { return n_; }

private:
    wait_state& state_;
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
// the suspended frame). True: cancellation ended it (the caller throws). Signaled: nothing to do,
// the releaser unlinked the node and dropped its count ("Lifetime"); the block may be gone already.
// Cancelled (or destroyed): unlink the node under the lock if no releaser popped it, drop its count
// if a releaser's claim did not, and free an orphaned block when that was the last count.
inline bool finish_suspension(wait_state* s, wait_list& list, wait_node& n, wait_mode& mode, bool cancelled) noexcept {
    if (mode != wait_mode::suspended) return false;
    mode = wait_mode::finished;
    if (cancelled) {
        bool last = false;
        s->lock.lock();
        if (n.linked) list.remove(n);  // else a releaser popped it and its wake() failed
        n.w.reset();
        if (n.counted) {  // a shutdown may destroy a frame whose node was claimed: not counted then
            n.counted = false;
            last = s->lock.drop_waiter() == 0 && s->orphaned;
        }
        s->lock.unlock();  // the last touch, unless `last`: then nobody else can reach the block
        if (last) destroy_wait_state(s);
    }
    return cancelled;
}

// An awaiter destroyed at its suspension (only the pool's shutdown drain does that, inside
// async_task::shut_down, which settled the suspension first): claimed by a releaser (signaled), its
// count is gone and the block may be too: touch nothing; else finish it as a cancelled one.
// Out of line: the destructors call it only for a suspended awaiter (`mode == suspended`).
[[gnu::noinline]] inline void finish_destroyed_cold(wait_state* s, wait_list& list, wait_node& n,
                                                    wait_mode& mode) noexcept {
    const async_task* t = draining_task;
    const bool claimed = t != nullptr && t->susp.phase() == async_task::phase_signaled;
    (void)finish_suspension(s, list, n, mode, !claimed);
}

// In await_resume after a suspension: did cancellation end it?
inline bool resumed_by_cancel() noexcept { return resume_reason() == wake_reason::cancelled; }

}  // namespace crew::detail
