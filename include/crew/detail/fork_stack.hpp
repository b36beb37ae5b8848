// crew/detail/fork_stack.hpp -- the private half of a worker's fork-join queue: forks that no thief
// can see yet, promoted to the worker's Chase-Lev deque only when someone asks.
//
// Design (on-demand promotion, as in heartbeat scheduling: Acar et al. PLDI 2018; Spice/Chili). A
// fork (crew::join, crew::fork_join) records its job here: a store into an owner-only array and an
// increment, no fence, no atomic RMW, and no read of the request flag (a request zeroes the fork's
// limit instead: see "Requests" below). Taking the job back after the inline half is one add and a
// compare (see "The depth word" below). Thieves cannot see this array; a thief that finds the
// worker's deque empty sets `request_` instead, and the owner answers at its next fork by promoting
// the OLDEST recorded job (the biggest piece of work, as a Chase-Lev thief would take) into the
// deque, whose proven protocol then hands it out exactly once. A worker about to sleep asks the
// same way (request_wake: the promotion's push then sees it asleep and wakes it), and the owner
// promotes everything before it waits (see worker.hpp).
//
// Invariants (owner-only indices, 0 <= top_ <= n_ <= capacity):
//   * items_[top_, n_) are private: recorded, never published. items_[0, top_) were promoted.
//   * take_back() assumes forks and take-backs nest (joins); take_back(item, ...) and leave_task()
//     do not (task_group children recorded above a join's job, or left by their task: see
//     detail/group_fork.hpp): they publish every private entry and drop the depth to `item`'s
//     index or the task's base, so the invariants below hold again afterwards.
//   * Forks and take-backs nest (LIFO): the job taken back is always items_[n_ - 1]. Promotion is
//     oldest first, so a promoted job has only promoted jobs below it: when the job being taken back
//     has index < top_ it was promoted, and so was every job below; top_ drops to n_.
//   * A job is either taken back privately (index >= top_ at take-back) or handed to the deque by
//     promote_oldest, never both: promote_oldest raises top_ past the index before the push, and
//     take_back compares against top_.
//   * Space: n_ is the number of forks open on this thread's stack, so the array is bounded by the
//     serial nesting depth; it grows (doubling) and never shrinks.
//
// The depth word (word_) holds n_ in its low DepthBits bits and, when Counted, the number of
// private take-backs (a join's inline half: metrics' tasks_run) above them, modulo 2^(64 -
// DepthBits). A private take-back adds 2^DepthBits - 1 (count + 1, depth - 1): the count costs no
// store of its own (take_back_uncounted subtracts 1 and leaves the count to the caller: the last
// job's take_back_counting, or count_inline after a promoted one: one add for all of a fork_join's
// jobs). The add's carry out of bit 63 is the
// count's wrap; that rare path bumps wraps_ under a seqlock (wraps_ odd while the word is
// rewritten), so inline_runs() (any thread) reads wraps and word consistently: exact up to the
// relaxed store's visibility, never 2^k off.
// One compare per fork: limit_ = min(capacity, high-water depth), or zero while a request waits.
// Its cold path grows the array, notes a new high-water depth (metrics' max_deque_depth counts
// private forks) and answers requests.
//
// Requests (session 17). A requester sets its bit in `request_` and then exchanges zero into
// `limit_`: the owner's next fork compares its depth against zero and goes cold, so the fast path
// reads no flag (it used to load and test `request_` at every fork: 2 instructions less per join).
// The cold path restores the limit with an EXCHANGE (acquire) and only then reads `request_`. A
// zero stored before the exchange (in the limit's modification order) is read by it, and the
// requester's bit, set before its release exchange of zero, is visible to the load that follows (every
// write of the limit is an RMW, so a later requester's zero does not cut an earlier one's release
// sequence; teeth: fork_request_zero_store); a zero written after it leaves the limit at zero, and
// the next fork comes back here. So a pending
// request always has the limit at zero once its requester is done (request_reaches_owner(): the
// Relacy models assert it at the end). A plain store there could overwrite a zero unseen: the
// request would stay pending, the limit nonzero, and later requesters (who see the bit and do not
// store again) never be answered (teeth: fork_limit_restore_store).
//
// Memory ordering: word_ is written by the owner only (relaxed load and store: a plain move) and
// read by any thread for metrics; it orders nothing. `request_` carries no data. A thief sets its
// steal bit (relaxed RMW) after its steal found the deque empty; a sleeper sets its wake bit
// (release RMW) after announcing itself in the parking word; each then zeroes the limit (above).
// The owner reads the word (relaxed) at each cold fork and clears it (an acquire exchange) BEFORE
// promoting, so a request made after the clear
// stays set and is answered at a later fork (a request made before is answered by this promotion).
// The exchange reads the sleeper's RMW or a later RMW of its release sequence (every writer uses
// an RMW, so none overwrites it), so the push's wake check sees the sleeper. What the thief then
// takes is published by the deque's release push, not by the word. A late request only delays
// parallelism; a thief that still finds the deque empty asks again at its next steal attempt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <type_traits>

#include "crew/detail/atomics.hpp"

namespace crew::detail {

template <class T, class Policy = std_atomics, bool Counted = true, unsigned DepthBits = 32>
class fork_stack {
    template <class U>
    using atomic = typename Policy::template atomic<U>;
    static_assert(DepthBits >= 8 && DepthBits < 64);
    static constexpr std::uint64_t depth_mask = (std::uint64_t{1} << DepthBits) - 1;
    // A depth: 32 bits when it fits (compared straight from the word's low half, no extension).
    using depth_t = std::conditional_t<DepthBits <= 32, std::uint32_t, std::uint64_t>;
    static depth_t depth_of(std::uint64_t w) noexcept { return static_cast<depth_t>(w & depth_mask); }
    // A private take-back: count + 1, depth - 1 (uncounted: depth - 1).
    static constexpr std::uint64_t take_back_step = Counted ? depth_mask : ~std::uint64_t{0};

public:
    explicit fork_stack(std::int64_t capacity = 64)
        : items_(new T*[static_cast<std::size_t>(capacity)]), capacity_(static_cast<std::uint64_t>(capacity)) {}
    fork_stack(const fork_stack&) = delete;
    fork_stack& operator=(const fork_stack&) = delete;

    // Owner only. Records a fork; returns true when a thief asked for work (answer it now with
    // promote_oldest: the caller's cold path). `on_high(depth)` is called (cold) at each new
    // high-water depth.
    // OnHigh is taken by value (a lambda holding a pointer): a reference would make the compiler
    // store the lambda to the stack on every fork for the cold call's sake.
    template <class OnHigh>
    bool fork(T* item, OnHigh on_high) {
        // relaxed: owner-only writes; other threads only read it for metrics (see header).
        const std::uint64_t w = word_.load(std::memory_order_relaxed);
        const std::uint64_t n = w & depth_mask;
        // relaxed: a request's zero only sends this fork cold, where the exchange orders (see header).
        if (n >= limit_.load(std::memory_order_relaxed)) [[unlikely]]
            return fork_cold(item, on_high);  // the whole fork: nothing of this one stays live across a call
        items_[n] = item;
        word_.store(w + 1, std::memory_order_relaxed);  // relaxed: as the load above
        return false;
    }
    bool fork(T* item) {
        return fork(item, [](std::uint64_t) noexcept {});
    }

    // Owner only. Records K forks at once, items[0] first (oldest): one depth update and one
    // request check for the batch (crew::fork_join's k - 1 jobs). The same as K fork() calls
    // whose requests are answered after the last one.
    template <std::size_t K, class OnHigh>
    bool fork_many(T* const (&items)[K], OnHigh on_high) {
        const std::uint64_t w = word_.load(std::memory_order_relaxed);  // relaxed: see fork
        const std::uint64_t n = w & depth_mask;
        if (n + K > limit_.load(std::memory_order_relaxed)) [[unlikely]]  // relaxed: see fork
            return fork_many_cold(items, on_high);
        for (std::size_t i = 0; i < K; ++i) items_[n + i] = items[i];
        word_.store(w + K, std::memory_order_relaxed);  // relaxed: as in fork
        return false;
    }

    // Owner only. Takes the newest fork back: true when it was still private (run it inline);
    // false when it was promoted (look for it in the deque, or wait for its thief).
    bool take_back() noexcept {
        const std::uint64_t w = word_.load(std::memory_order_relaxed);  // relaxed: see fork
        std::uint64_t next;
        // Private (the new depth n - 1 >= top_) and the count did not wrap (the add's carry).
        if (depth_of(w) > top_ && !(__builtin_add_overflow(w, take_back_step, &next) && Counted)) [[likely]] {
            word_.store(next, std::memory_order_relaxed);  // relaxed: see fork
            return true;
        }
        return take_back_cold(w);
    }

    // Owner only. take_back() without counting: the caller counts its private take-backs itself,
    // once, with count_inline (crew::fork_join: one add per call instead of one per job).
    bool take_back_uncounted() noexcept {
        const std::uint64_t w = word_.load(std::memory_order_relaxed);  // relaxed: see fork
        if (depth_of(w) > top_) [[likely]] {
            word_.store(w - 1, std::memory_order_relaxed);  // relaxed: see fork
            return true;
        }
        return take_back_cold(w);  // promoted (the depth test fails there too)
    }
    // Owner only. take_back_uncounted() for the last of m take-backs whose m - 1 before it were
    // private and uncounted: when this one is private too, it counts all m in its own add (count
    // + m, depth - 1), so crew::fork_join's last job spends no second load and store of the word
    // (count_inline's load would wait on the take-back's store). False, counting nothing, when
    // this one was promoted: the caller counts the m - 1 with count_inline.
    bool take_back_counting(std::uint64_t m) noexcept {
        if constexpr (!Counted) {
            return take_back_uncounted();
        } else {
            const std::uint64_t w = word_.load(std::memory_order_relaxed);  // relaxed: see fork
            const std::uint64_t step = (m << DepthBits) - 1;  // m = 1: take_back_step
            std::uint64_t next;
            if (depth_of(w) > top_ && !__builtin_add_overflow(w, step, &next)) [[likely]] {
                word_.store(next, std::memory_order_relaxed);  // relaxed: see fork
                return true;
            }
            return take_back_cold(w, step);
        }
    }
    // Owner only: adds m < 2^(64 - DepthBits) private take-backs to the count (those made by
    // take_back_uncounted). A carry out of bit 63 is one wrap of the count (the seqlock path).
    void count_inline(std::uint64_t m) noexcept {
        if constexpr (Counted) {
            const std::uint64_t w = word_.load(std::memory_order_relaxed);  // relaxed: see fork
            std::uint64_t next;
            if (__builtin_add_overflow(w, m << DepthBits, &next)) [[unlikely]]
                store_wrapped_cold(next);
            else
                word_.store(next, std::memory_order_relaxed);  // relaxed: see fork
        }
    }

    // Owner only. Takes `item` back, for an array that does not nest (task_group children may be
    // recorded above a join's job and outlive the frame that recorded them: "Private children" in
    // detail/group_fork.hpp). Inline (true, counted as take_back) only when `item` is the newest
    // entry and still private. Otherwise every private entry is published, oldest first
    // (`before_push(entry)` before each push: a group child is counted there), the depth drops to
    // item's index, and false sends the caller to the deque, where what lies above `item` comes
    // first (join_take_promoted runs it).
    template <class Deque, class BeforePush>
    bool take_back(T* item, Deque& deque, BeforePush before_push) {
        const std::uint64_t w = word_.load(std::memory_order_relaxed);  // relaxed: see fork
        const depth_t n = depth_of(w);
        std::uint64_t next;
        if (n > top_ && is_newest(n, item) && !(__builtin_add_overflow(w, take_back_step, &next) && Counted)) [[likely]] {
            word_.store(next, std::memory_order_relaxed);  // relaxed: see fork
            return true;
        }
        return take_back_other(item, deque, before_push);
    }

    // Owner only. Clears the request and moves the oldest private job into `deque` (nothing when
    // none is private), calling `before_push(job)` first. Returns whether one was moved.
    template <class Deque, class BeforePush>
    bool promote_oldest(Deque& deque, BeforePush before_push) {
        clear_request();
        // relaxed: the owner reads its own word (see fork).
        if (top_ == depth_of(word_.load(std::memory_order_relaxed))) return false;
        T* item = items_[top_];
        ++top_;  // no longer private: take_back sends its owner to the deque
        before_push(item);
        deque.push(item);
        return true;
    }
    template <class Deque>
    bool promote_oldest(Deque& deque) {
        return promote_oldest(deque, [](T*) noexcept {});
    }
    // Owner only, at a task boundary: the task that started at depth `base` left entries above it
    // (task_group children recorded without a wait). Every private entry is published, oldest first
    // (`before_push` counts a child), and the depth drops back to `base`: what lay above it is now
    // in the deque, where the worker runs it or a thief takes it.
    template <class Deque, class BeforePush>
    void leave_task(std::int64_t base, Deque& deque, BeforePush before_push) {
        const std::uint64_t w = word_.load(std::memory_order_relaxed);  // relaxed: see fork
        const depth_t n = depth_of(w);
        const auto b = static_cast<depth_t>(base);
        if (n <= b) return;
        publish_all(deque, before_push);
        word_.store(w - (n - b), std::memory_order_relaxed);  // relaxed: see fork; depth = base, count kept
        top_ = b;  // everything below was promoted by publish_all
    }

    // Owner only. Every private entry to `deque`, oldest first (a wait, a task boundary).
    template <class Deque, class BeforePush>
    void publish_all(Deque& deque, BeforePush before_push) {
        while (has_private()) promote_oldest(deque, before_push);
    }

    // Owner only: is any job private? (promote everything before raising a wait floor).
    // relaxed (word_): the owner reads its own word, as fork does.
    bool has_private() const noexcept { return top_ < depth_of(word_.load(std::memory_order_relaxed)); }
    // Owner only: how many forks are open (private or promoted).
    std::int64_t open() const noexcept { return static_cast<std::int64_t>(open_u()); }

    // Any thread: the private take-backs so far (0 when not Counted). A seqlock read against the
    // wrap path: retried only if a wrap happened meanwhile (once per 2^(64 - DepthBits)).
    std::uint64_t inline_runs() const noexcept {
        if constexpr (!Counted) return 0;
        for (;;) {
            // acquire: pairs with the release store of an even wraps_ in store_wrapped.
            const std::uint64_t s1 = wraps_.load(std::memory_order_acquire);
            const std::uint64_t w = word_.load(std::memory_order_relaxed);
            // acquire fence: pairs with store_wrapped's release fence; a wrapped word read above
            // means the re-read below sees wraps_ odd or later (the seqlock's retry).
            Policy::fence(std::memory_order_acquire);
            const std::uint64_t s2 = wraps_.load(std::memory_order_relaxed);
            if (s1 == s2 && (s1 & 1) == 0) return ((s1 / 2) << (64 - DepthBits)) + (w >> DepthBits);
            Policy::pause();  // the owner is inside store_wrapped: a few stores
        }
    }

    // Any thread (a thief whose steal found the owner's deque empty). Load first: no write to the
    // owner's line while a request is already pending.
    void request() noexcept {
        // relaxed: no data; see header. An RMW (not a store): it must not overwrite a wake request
        // made meanwhile, whose release sequence it continues.
        if (request_.load(std::memory_order_relaxed) != 0) return;
        if constexpr (Policy::injected_bug == bug::fork_steal_request_store)
            request_.store(steal_bit, std::memory_order_relaxed);
        else
            request_.fetch_or(steal_bit, std::memory_order_relaxed);
        send_owner_cold();
    }
    // Any thread about to sleep, after announcing itself as a sleeper: ask the owner to promote
    // its oldest private fork, whose push then sees the sleeper and wakes it (see header).
    void request_wake() noexcept {
        // release: pairs with clear_request's acquire exchange; the owner's push then sees the
        // caller's sleeper announcement made before this.
        request_.fetch_or(wake_bit, std::memory_order_release);
        send_owner_cold();
    }
    // Any thread: is a wake request pending (not yet answered by a promotion)? For the model checks.
    bool wake_requested() const noexcept { return (request_.load(std::memory_order_relaxed) & wake_bit) != 0; }
    // Any thread, for the model checks: a pending request reaches the owner (its limit is zero, so
    // the next fork goes cold and answers). Holds once the requester's exchange of zero is done.
    bool request_reaches_owner() const noexcept {
        return request_.load(std::memory_order_relaxed) == 0 || limit_.load(std::memory_order_relaxed) == 0;
    }
    // A thief asked (demand splitting ignores wake requests: a sleeper is no thief yet).
    bool requested() const noexcept { return (request_.load(std::memory_order_relaxed) & steal_bit) != 0; }

private:
    // relaxed: as fork (the owner's own word).
    std::uint64_t open_u() const noexcept { return word_.load(std::memory_order_relaxed) & depth_mask; }

    // A fork at depth n >= limit_: grow when full, note a new high-water depth, recompute the
    // limit, and fork.
    // Returns whether a request is pending (the limit was a request's zero, or it just came).
    template <class OnHigh>
    [[gnu::noinline, gnu::cold]] bool fork_cold(T* item, OnHigh on_high) {
        const std::uint64_t w = word_.load(std::memory_order_relaxed);  // relaxed: see fork
        const std::uint64_t n = w & depth_mask;
        if (n == capacity_) grow(n);
        if (n + 1 > high_) {
            high_ = n + 1;
            on_high(high_);
        }
        items_[n] = item;
        word_.store(w + 1, std::memory_order_relaxed);  // relaxed: see fork
        return restore_limit();
    }

    // Owner only: the limit back to min(capacity, high-water depth), then the request flag. An
    // exchange, never a store: it reads the zero of every request made before it (or that zero
    // lands after it and the next fork comes here again), so no request is overwritten unseen.
    bool restore_limit() noexcept {
        const std::uint64_t limit = high_ < capacity_ ? high_ : capacity_;
        if constexpr (Policy::injected_bug == bug::fork_limit_restore_store)
            limit_.store(limit, std::memory_order_relaxed);
        else
            // acquire: pairs with send_owner_cold's release exchange of zero; the request bit set
            // before that zero is visible to the load below.
            limit_.exchange(limit, std::memory_order_acquire);
        return request_.load(std::memory_order_relaxed) != 0;  // relaxed: ordered by the exchange
    }

    // A requester, after setting its bit: the owner's next fork compares its depth against zero
    // and goes cold (fork_cold answers). The fast path reads no request flag.
    // An RMW, not a store: every write of limit_ is an RMW, so each requester's release heads a
    // release sequence the later writes continue, and the owner's acquire exchange synchronises
    // with every requester whose zero precedes the value it reads (a plain store by a second
    // requester would cut the first one's sequence: its bit could go unseen, and be lost).
    void send_owner_cold() noexcept {
        if constexpr (Policy::injected_bug == bug::fork_request_zero_store)
            limit_.store(0, std::memory_order_release);
        else
            // release: pairs with restore_limit's acquire exchange (the bit set before this is seen).
            limit_.exchange(0, std::memory_order_release);
    }

    // fork_many past the limit: the items one fork at a time (each may grow the array or note a
    // new high-water depth); fork_many reads the request once, after the batch.
    template <std::size_t K, class OnHigh>
    [[gnu::noinline, gnu::cold]] bool fork_many_cold(T* const (&items)[K], OnHigh on_high) {
        bool asked = false;
        for (std::size_t i = 0; i < K; ++i) asked |= fork(items[i], on_high);
        return asked;
    }

    void grow(std::uint64_t n) {
        if (capacity_ * 2 > depth_mask) std::abort();  // 2^DepthBits - 1 forks open on one stack: unreachable
        std::unique_ptr<T*[]> bigger(new T*[static_cast<std::size_t>(capacity_ * 2)]);
        for (std::uint64_t i = 0; i < n; ++i) bigger[i] = items_[i];
        items_ = std::move(bigger);
        capacity_ *= 2;
    }

    // The take-back of a promoted job, or of a private one whose count wraps in the add of `step`
    // (take_back_step; take_back_counting's: count + m, depth - 1).
    [[gnu::noinline]] bool take_back_cold(std::uint64_t w, std::uint64_t step = take_back_step) noexcept {
        if (depth_of(w) > top_) {
            store_wrapped(w + step);
            return true;
        }
        return take_back_promoted(w);
    }

    [[gnu::noinline, gnu::cold]] void store_wrapped_cold(std::uint64_t next) noexcept { store_wrapped(next); }

    // The count part of the word wrapped: rewrite it with wraps_ odd around it (a seqlock).
    void store_wrapped(std::uint64_t next) noexcept {
        // relaxed: only the owner writes wraps_.
        const std::uint64_t s = wraps_.load(std::memory_order_relaxed);
        if constexpr (Policy::injected_bug == bug::fork_wrap_torn) {  // the word first, then the count
            word_.store(next, std::memory_order_relaxed);
            wraps_.store(s + 2, std::memory_order_release);
            return;
        }
        wraps_.store(s + 1, std::memory_order_relaxed);  // relaxed: the release fence orders it
        // release fence: a reader that sees the new word also sees wraps_ odd (or later).
        Policy::fence(std::memory_order_release);
        word_.store(next, std::memory_order_relaxed);
        wraps_.store(s + 2, std::memory_order_release);  // release: pairs with inline_runs's acquire load
    }

    bool is_newest(depth_t n, T* item) const noexcept {
        if constexpr (Policy::injected_bug == bug::fork_take_back_no_identity) return true;
        return items_[n - 1] == item;
    }

    // take_back(item, ...) when `item` is not the newest private entry, or was promoted, or the
    // count wraps. `item` is in the array (a join's job, a child being drained: each stays at its
    // index until taken back).
    template <class Deque, class BeforePush>
    [[gnu::noinline]] bool take_back_other(T* item, Deque& deque, BeforePush before_push) {
        const std::uint64_t w = word_.load(std::memory_order_relaxed);  // relaxed: see fork
        const depth_t n = depth_of(w);
        if (n > top_ && is_newest(n, item)) {  // private and newest: only the count wrapped
            store_wrapped(w + take_back_step);
            return true;
        }
        publish_all(deque, before_push);  // top_ == n from here on
        depth_t i = n - 1;
        while (i > 0 && items_[i] != item) --i;  // item's index (the newest match: entries nest above it)
        word_.store(w - (n - i), std::memory_order_relaxed);  // relaxed: see fork; depth = i, count kept
        top_ = i;  // everything below was promoted
        return false;
    }

    // The job taken back was promoted: depth - 1 without counting, and every job below was promoted.
    bool take_back_promoted(std::uint64_t w) noexcept {
        word_.store(w - 1, std::memory_order_relaxed);  // relaxed: see fork
        if constexpr (Policy::injected_bug == bug::fork_promoted_run_inline) return true;
        if constexpr (Policy::injected_bug != bug::fork_top_not_lowered) top_ = depth_of(w - 1);
        return false;
    }

    std::unique_ptr<T*[]> items_;  // owner only
    std::uint64_t capacity_;
    std::uint64_t high_ = 0;   // owner only: the deepest n_ so far
    depth_t top_ = 0;          // owner only: the oldest private fork
    // word_: n_ and the take-back count (see header); written by the owner, read by inline_runs().
    atomic<std::uint64_t> word_{0};
    // wraps_: twice the count's wraps, odd while the wrap path rewrites word_ (owner writes).
    atomic<std::uint64_t> wraps_{0};
    // Owner only, before a promotion: clears every pending request. A request made after the
    // exchange stays set and is answered at a later fork.
    void clear_request() noexcept {
        // relaxed load: a hint (nothing pending, nothing to clear). acquire (exchange): pairs with
        // request_wake's release; the sleeper it read is visible to the push's wake check.
        if (request_.load(std::memory_order_relaxed) == 0) return;
        constexpr auto order = Policy::injected_bug == bug::fork_wake_relaxed_clear ? std::memory_order_relaxed
                                                                                     : std::memory_order_acquire;
        request_.exchange(0, order);
    }
    static constexpr std::uint8_t steal_bit = 1, wake_bit = 2;
    // request_: steal_bit set by thieves, wake_bit by sleepers (RMWs), read and cleared by the
    // owner; on its own line (others write it), with limit_.
    alignas(cache_line) atomic<std::uint8_t> request_{0};
    // limit_: min(capacity_, high_), or zero after a request (a fork at depth >= limit_ goes cold,
    // where restore_limit answers). Written by the owner (exchange) and by requesters (store 0);
    // the owner reads it at every fork, on the line it read the request flag from before.
    atomic<std::uint64_t> limit_{0};
};

}  // namespace crew::detail
