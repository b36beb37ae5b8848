// crew/async/detail/wait_list.hpp -- what channel, async_mutex and event share: a FIFO list of
// suspended coroutine tasks and the shared state block that outlives a racing cancellation.
//
// Every primitive keeps its state in a heap block (`wait_state` plus its own fields) guarded by one
// std::mutex. A task that cannot proceed links a `wait_node` (a member of its awaitable, so inside
// the coroutine frame) at the back of a list and suspends through detail::waiter (waiter.hpp). The
// releaser pops nodes from the front, writes the node's outcome, and calls waiter.wake() WHILE
// HOLDING THE LOCK; wake() only queues the task through the scheduler (never resumes it inline), so
// releasing 100,000 waiters is a loop, not a recursion.
//
// Wake versus cancel. waiter.wake() returns false when cancellation claimed the waiter first; the
// task is then (being) resumed by the cancel path and its co_await throws crew::cancelled_error.
// The releaser takes its grant back (a value goes to the next receiver or stays in the channel; the
// mutex goes to the next waiter) and moves on. The cancelled task's await_resume takes the same lock
// to unlink its node (if nobody popped it) -- so a node whose wake failed stays alive as long as the
// releaser holds the lock, which is when the releaser reads it back.
//
// Lifetime. A popped node whose wake failed belongs to a task that will still take the lock, even
// if the primitive is destroyed meanwhile; so it holds a reference on the heap block (taken under
// the lock by the releaser), which the task drops under the lock. The primitive object holds one
// reference; the last holder frees the block (after its unlock: the other holder's unlock happened
// before our lock, and POSIX lets a mutex be destroyed right after its last unlock).
#pragma once

#include <cassert>
#include <coroutine>
#include <cstddef>
#include <mutex>

#include "crew/async/detail/prim_waiter.hpp"
#include "crew/detail/async_schedule.hpp"

namespace crew::detail {

// One suspended task on a primitive's list (lives in the awaitable). Fields other than `w` are
// guarded by the owning state's lock.
struct wait_node {
    wait_node* prev = nullptr;
    wait_node* next = nullptr;
    bool linked = false;   // on the list
    bool pending = false;  // popped by a releaser whose wake failed: holds a reference on the state
    bool abandoned = false;  // woken by the primitive's destructor (event, async_mutex)
    prim_waiter w;
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

// The part of every primitive's heap block that the wait protocol needs.
struct wait_state {
    std::mutex lock;
    std::size_t refs = 1;  // guarded by `lock`: the primitive + every pending node
    bool destroyed = false;  // guarded by `lock`: the primitive's destructor ran

    // Under the lock: wake the task of `n` (already popped). False: cancellation won; the node now
    // holds a reference, and the task unlinks nothing but drops it in finish_cancelled().
    bool wake_popped(wait_node& n) noexcept {
        if (n.w.wake()) return true;
        n.pending = true;
        ++refs;
        return false;
    }

    // Drop one reference under the lock; true when it was the last (the caller frees after unlock).
    bool release_locked() noexcept { return --refs == 0; }
};

// How an awaitable's co_await went (written in await_suspend, read in await_resume).
enum class wait_mode : unsigned char {
    ready,            // completed without suspending
    yielded,          // completed, then yielded: the budget was exhausted
    suspended,        // waited on the list (then woken by the primitive, or cancelled)
    cancelled_early,  // the task was already cancelled when it was about to wait
};

// Under the state's lock: wait on `list`. True: suspended (the caller returns true from
// await_suspend and touches nothing after its unlock). False: the task was already cancelled; the
// node is not on the list and the co_await throws.
inline bool suspend_on(wait_list& list, wait_node& n, std::coroutine_handle<> h, wait_mode& mode) {
    list.push_back(n);
    if (!n.w.suspend(h)) {
        list.remove(n);
        mode = wait_mode::cancelled_early;
        return false;
    }
    mode = wait_mode::suspended;
    return true;
}

// After completing without suspending (lock released): spend one unit of the budget; when it is
// exhausted, yield (re-queue at the back) instead of continuing. Returns await_suspend's result.
inline bool complete_ready(std::coroutine_handle<> h, wait_mode& mode) {
    if (spend_budget()) return false;
    mode = wait_mode::yielded;
    return prim_yield(h);
}

// The cancel path of an awaitable, run from await_resume: unlink the node (or drop the reference a
// failed wake left), then free the state if that was the last reference. `S` derives from
// wait_state; `list` is the list the node was put on.
template <class S>
void finish_cancelled(S* s, wait_list& list, wait_node& n) noexcept {
    bool last = false;
    {
        std::lock_guard g(s->lock);
        if (n.linked) list.remove(n);
        if (n.pending) {
            n.pending = false;
            last = s->release_locked();
        }
    }
    if (last) delete s;
}

// The primitive's destructor: drop its reference (after waking everyone, under the lock).
template <class S>
void release_state(S* s) noexcept {
    bool last;
    {
        std::lock_guard g(s->lock);
        s->destroyed = true;
        last = s->release_locked();
    }
    if (last) delete s;
}

}  // namespace crew::detail
