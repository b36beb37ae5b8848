// crew/detail/fork_stack.hpp -- the private half of a worker's fork-join queue: forks that no thief
// can see yet, promoted to the worker's Chase-Lev deque only when someone asks.
//
// Design (on-demand promotion, as in heartbeat scheduling: Acar et al. PLDI 2018; Spice/Chili). A
// fork (crew::join, crew::fork_join) records its job here: a store into an owner-only array and an
// increment, no fence, no atomic RMW. Taking the job back after the inline half is a decrement and
// a compare. Thieves cannot see this array; a thief that finds the worker's deque empty sets
// `request_` instead, and the owner answers at its next fork by promoting the OLDEST recorded job
// (the biggest piece of work, as a Chase-Lev thief would take) into the deque, whose proven
// protocol then hands it out exactly once. The owner also promotes when the pool wants a wake (a
// sleeping worker and no searcher), and promotes everything before it waits (see worker.hpp).
//
// Invariants (owner-only indices, 0 <= top_ <= n_ <= capacity):
//   * items_[top_, n_) are private: recorded, never published. items_[0, top_) were promoted.
//   * Forks and take-backs nest (LIFO): the job taken back is always items_[n_ - 1]. Promotion is
//     oldest first, so a promoted job has only promoted jobs below it: when the job being taken back
//     has index < top_ it was promoted, and so was every job below; top_ drops to n_.
//   * A job is either taken back privately (index >= top_ at take-back) or handed to the deque by
//     promote_oldest, never both: promote_oldest raises top_ past the index before the push, and
//     take_back compares against top_.
//   * Space: n_ is the number of forks open on this thread's stack, so the array is bounded by the
//     serial nesting depth; it grows (doubling) and never shrinks.
//
// Memory ordering: `request_` carries no data. A thief sets it (relaxed) after its steal found the
// deque empty; the owner reads it (relaxed) at each fork and clears it (relaxed) BEFORE promoting,
// so a request made after the clear stays set and is answered at a later fork (a request made
// before is answered by this promotion). What the thief then takes is published by the deque's
// release push, not by the flag. A lost or late flag only delays parallelism; a thief that still
// finds the deque empty asks again at its next steal attempt.
#pragma once

#include <cstdint>
#include <memory>

#include "crew/detail/atomics.hpp"

namespace crew::detail {

template <class T, class Policy = std_atomics>
class fork_stack {
    template <class U>
    using atomic = typename Policy::template atomic<U>;

public:
    explicit fork_stack(std::int64_t capacity = 64) : items_(new T*[capacity]), capacity_(capacity) {}
    fork_stack(const fork_stack&) = delete;
    fork_stack& operator=(const fork_stack&) = delete;

    // Owner only. Records a fork; returns true when a thief asked for work (answer it now with
    // promote_oldest: the caller's cold path).
    bool fork(T* item) {
        const std::int64_t n = n_;  // one load: the relaxed load below would make the compiler re-read n_
        if (n == capacity_) [[unlikely]] grow_cold();
        items_[n] = item;
        n_ = n + 1;
        // relaxed: a hint without data; the promotion publishes through the deque (see header).
        return request_.load(std::memory_order_relaxed);
    }

    // Owner only. Takes the newest fork back: true when it was still private (run it inline);
    // false when it was promoted (look for it in the deque, or wait for its thief).
    bool take_back() noexcept {
        --n_;
        if (n_ >= top_) [[likely]] return true;
        if constexpr (Policy::injected_bug == bug::fork_promoted_run_inline) return true;
        if constexpr (Policy::injected_bug != bug::fork_top_not_lowered) top_ = n_;  // all below were promoted
        return false;
    }

    // Owner only. Clears the request and moves the oldest private job into `deque` (nothing when
    // none is private). Returns whether one was moved.
    template <class Deque>
    bool promote_oldest(Deque& deque) {
        request_.store(false, std::memory_order_relaxed);  // relaxed: before the push; see header
        if (top_ == n_) return false;
        T* item = items_[top_];
        ++top_;  // no longer private: take_back sends its owner to the deque
        deque.push(item);
        return true;
    }

    // Owner only: is any job private? (promote everything before raising a wait floor).
    bool has_private() const noexcept { return top_ < n_; }
    // Owner only: how many forks are open (private or promoted).
    std::int64_t open() const noexcept { return n_; }

    // Any thread (a thief whose steal found the owner's deque empty). Load first: no write to the
    // owner's line while a request is already pending.
    void request() noexcept {
        // relaxed: no data; see header.
        if (!request_.load(std::memory_order_relaxed)) request_.store(true, std::memory_order_relaxed);
    }
    bool requested() const noexcept { return request_.load(std::memory_order_relaxed); }

private:
    [[gnu::noinline, gnu::cold]] void grow_cold() {
        std::unique_ptr<T*[]> bigger(new T*[capacity_ * 2]);
        for (std::int64_t i = 0; i < n_; ++i) bigger[i] = items_[i];
        items_ = std::move(bigger);
        capacity_ *= 2;
    }

    std::unique_ptr<T*[]> items_;  // owner only
    std::int64_t capacity_;
    std::int64_t n_ = 0;    // owner only: forks open
    std::int64_t top_ = 0;  // owner only: the oldest private fork
    // request_: set by thieves, read and cleared by the owner; on its own line (thieves write it).
    alignas(cache_line) atomic<bool> request_{false};
};

}  // namespace crew::detail
