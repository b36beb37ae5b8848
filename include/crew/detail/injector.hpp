// crew/detail/injector.hpp -- the queue for work submitted from outside a pool's workers.
//
// A mutex-protected intrusive FIFO (T needs a `T* next` member) with an atomic length, so workers
// can skip the lock when it is empty (as Tokio's inject queue does). Outside submission is the cold
// path of a fork-join runtime; a lock keeps it simple, fair and easy to model-check.
//
// Who may call what: every member, from any thread. After close(), push() refuses new items;
// items already inside stay poppable, so closing loses nothing.
//
// C++20 review (release sequences continue only through RMWs). The items, head_, tail_ and closed_
// are read and written only under the mutex, whose unlock/lock pairs order them. length_ is a hint:
// pop()'s relaxed store of it may be what a reader's acquire load sees, and then that load
// synchronizes with nothing, but nothing is read on the strength of it (pop() takes the lock
// before touching an item; the no-lost-wakeup argument rests on parking.hpp's seq_cst fences,
// which order the store and the load of length_ whatever their own orders). Holds as written.
#pragma once

#include <cstddef>
#include <mutex>

#include "crew/detail/atomics.hpp"

namespace crew::detail {

template <class T, class Policy = std_atomics>
class basic_injector {
public:
    // Appends `item`. Returns false (and leaves `item` to the caller) when the queue is closed.
    bool push(T* item) {
        return push(item, [] {});
    }

    // The same, then runs `then()` still under the lock (only when the item was queued). The owner
    // of the queue may be destroyed as soon as the item has run; close() takes this lock, so a
    // destructor that closes first waits for `then()` (the owner's wake-up) to finish.
    template <class F>
    bool push(T* item, F&& then) {
        std::lock_guard lock(mutex_);  // spin_lock (below)
        if (closed_) return false;
        item->next = nullptr;
        if (tail_ != nullptr)
            tail_->next = item;
        else
            head_ = item;
        tail_ = item;
        // release: pairs with the acquire load in empty_hint(), so a worker that sees the new
        // length and then takes the lock finds the item (the lock orders the rest).
        length_.store(length_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
        then();
        return true;
    }

    // Appends items[0..n) in order under ONE lock acquisition (a worker's ring overflow, see
    // async_ring.hpp "Overflow": the newest half of a full ring plus the new task). Returns false
    // (the items stay with the caller) when the queue is closed, unless `from_worker`: the caller is
    // a worker of the pool that drains this queue, and workers drain it before they exit (they
    // leave only when no work is visible, and this queue is part of what they look at), so a
    // worker's overflow during shutdown is accepted and still runs.
    bool push_batch(T* const* items, std::size_t n, bool from_worker = false) {
        if (n == 0) return true;
        for (std::size_t i = 0; i + 1 < n; ++i) items[i]->next = items[i + 1];  // not yet shared
        items[n - 1]->next = nullptr;
        std::lock_guard lock(mutex_);
        if (closed_ && !from_worker) return false;
        if (tail_ != nullptr)
            tail_->next = items[0];
        else
            head_ = items[0];
        tail_ = items[n - 1];
        // release: as in push().
        length_.store(length_.load(std::memory_order_relaxed) + n, std::memory_order_release);
        return true;
    }

    // The oldest item, or nullptr.
    T* pop() {
        T* item = nullptr;
        (void)pop_batch(&item, 1, [](const T*) { return false; });
        return item;
    }

    // The oldest item and, behind it, the run of items for which `more(item)` holds, at most `max`
    // in all, written to out[0..n) in FIFO order under ONE lock acquisition; returns n (0: empty).
    // `more` runs under the lock (a worker moving overflowed coroutine tasks into its ring:
    // worker.cpp, "The injector in batches").
    template <class More>
    std::size_t pop_batch(T** out, std::size_t max, More&& more) {
        if (max == 0 || empty_hint()) return 0;
        std::lock_guard lock(mutex_);
        T* item = head_;
        std::size_t n = 0;
        while (item != nullptr && n < max && (n == 0 || more(static_cast<const T*>(item)))) {
            out[n++] = item;
            item = item->next;
        }
        head_ = item;
        if (item == nullptr) tail_ = nullptr;
        length_.store(length_.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
        return n;
    }

    bool empty_hint() const noexcept { return length_.load(std::memory_order_acquire) == 0; }
    std::size_t size_hint() const noexcept { return length_.load(std::memory_order_relaxed); }

    void close() {
        std::lock_guard lock(mutex_);
        closed_ = true;
    }
    bool closed() const {
        std::lock_guard lock(mutex_);
        return closed_;
    }

private:
    // The lock spins briefly before it sleeps. The critical sections are a few stores, but an
    // outside spawner and the workers popping its tasks take it hundreds of thousands of times a
    // second: with a plain std::mutex almost every collision became a futex wait plus a futex wake
    // (spawn_storm_outside at 2 workers: about one futex call per task, most of its time). The
    // spin only tries the same lock again (try_lock is a lock acquisition like lock()), so the
    // queue's protocol is unchanged; a policy whose mutex has no try_lock (the Relacy model's)
    // locks at once.
    class spin_lock {
    public:
        void lock() {
            if constexpr (requires(typename Policy::mutex& m) { m.try_lock(); }) {
                for (unsigned i = 0; i < spin_tries; ++i) {
                    if (m_.try_lock()) return;
                    Policy::pause();
                }
            }
            m_.lock();
        }
        void unlock() { m_.unlock(); }

    private:
        // 64 pauses before sleeping: about 1-3 us on bare metal, 5-7 us on this KVM guest (a pause
        // measured 77-113 ns there); longer than any critical section here unless its holder was
        // preempted, and then the sleep is the right thing.
        static constexpr unsigned spin_tries = 64;
        typename Policy::mutex m_;
    };

    mutable spin_lock mutex_;
    T* head_ = nullptr;  // guarded by mutex_
    T* tail_ = nullptr;  // guarded by mutex_
    bool closed_ = false;  // guarded by mutex_
    // length_: written under mutex_; read without it as a hint.
    typename Policy::template atomic<std::size_t> length_{0};
};

}  // namespace crew::detail
