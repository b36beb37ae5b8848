// crew/detail/group_count.hpp -- the lock-free count of a task group's unfinished children, and
// the hand-off to the one thread waiting for it to reach zero.
//
// State: one word, state_ = 2 * unfinished_children | waiting_bit, changed by RMWs only (never a
// plain store: nothing can overwrite a concurrent increment, and every RMW continues the release
// sequences of the ones before it, which C++20 requires). waiter_ points at the waiter's own
// completion (Waiter needs only set()) while a wait() is in progress, else nullptr.
//
// Who calls what:
//   add()           -- run(), any thread, before the child can start: fetch_add(2).
//   finish()        -- each child once, when it is done (or when run() gives a child up): a CAS loop
//                      that subtracts 2 and, when that leaves count 0 with waiting_bit set, clears
//                      the bit in the same CAS and then calls waiter_->set(). A child touches the
//                      group after its decrement ONLY in that case; the waiter is then still
//                      blocked on its completion, so the group is alive.
//   begin_wait(c)   -- the one waiting thread: returns `done` when count is 0 (no hand-off
//                      needed), `busy` when another wait() is in progress (waiter_ taken), else
//                      `must_wait`: the caller waits for `c` and then calls end_wait().
//   end_wait()      -- the waiter, after c was set: clears waiter_.
//   unfinished()    -- any thread: a snapshot of the count (acquire).
//   finish(n)       -- n > 1: the fold of a drain (below): n children finished at once.
//   hold_token(), count_promoted(), drop_token(n) -- private children (detail/group_fork.hpp):
//                      an add() for a worker's holder token, an add() before a recorded child's
//                      push, and finish(n + 1) for the token plus n drained promoted children.
//
// The drain (the unstolen-child fast path, crew/task_group.hpp): before it announces itself, a
// waiter on a worker runs the work its task pushed (the group's children among it). Children that
// finish on that thread meanwhile are counted in a plain field of a frame on its stack (found
// through a thread_local), not here; when no related work is left, finish(n) subtracts all n in
// one RMW, still before begin_wait(). Until then the count includes them, so no waiter can return
// early; the fold's release publishes their effects as n separate finish() calls would (a waiter
// on another thread may be the one it hands the count to).
//
// Invariants:
//   * waiting_bit is set only by the waiter (fetch_or) and cleared exactly once per set: by the
//     waiter's retract CAS or by the child whose CAS takes the count to 0 (and that child sets c).
//   * Count 0 with waiting_bit set is never stored: the CAS that reaches 0 clears the bit.
//   * A wait() that returns has observed count 0 (acquire) in a value written after every child
//     whose add() happened before the wait() started, so those children all finished.
//
// Orderings, each with its partner:
//   add(): relaxed. An RMW always reads the latest value, so no increment is lost; a wait() that
//     must see the child happens after the add() (e.g. after joining the producer), so coherence
//     makes its reads see the increment.
//   finish(): release on the CAS publishes the child's effects (its writes, a recorded exception)
//     to the waiter's acquire read of count 0 (unfinished(), begin_wait()'s loads and RMWs, or the
//     completion). acquire on the CAS: pairs with begin_wait()'s release fetch_or, so the child
//     that clears the bit sees the waiter_ stored before it. Because every later write of state_
//     is an RMW, every finishing child's release sequence reaches the value the waiter reads.
//   begin_wait(): the waiter_ CAS is relaxed (only this thread and the hand-off read it; the
//     fetch_or publishes it). fetch_or is acq_rel: release for waiter_ (partner: finish()'s
//     acquire), acquire for the children that finished before it (partner: finish()'s release).
//     The retract CAS is relaxed: when it succeeds it read the fetch_or's own value.
#pragma once

#include <cstdint>

#include "crew/detail/atomics.hpp"

namespace crew::detail {

template <class Policy, class Waiter>
class basic_group_count {
    template <class U>
    using atomic = typename Policy::template atomic<U>;

    static constexpr std::uint64_t waiting_bit = 1;
    static constexpr std::uint64_t one_child = 2;

public:
    enum class wait_status { done, must_wait, busy };

    basic_group_count() noexcept = default;
    basic_group_count(const basic_group_count&) = delete;
    basic_group_count& operator=(const basic_group_count&) = delete;

    void add() noexcept { state_.fetch_add(one_child, std::memory_order_relaxed); }  // relaxed: see above

    // ---- private children (detail/group_fork.hpp: "Private children") ----
    // The holder token: one add() for all the children a worker records privately for this group;
    // relaxed, as add(). While it is held the word stays above zero, so no waiter returns.
    void hold_token() noexcept {
        if constexpr (Policy::injected_bug != bug::group_token_not_held) add();
    }
    // A privately recorded child that is being promoted to the deque: counted BEFORE the push (a
    // thief may run and finish it as soon as it is pushed). relaxed, as add(): the deque's release
    // push orders this add before the thief's steal, and so before the thief's finish().
    void count_promoted() noexcept {
        if constexpr (Policy::injected_bug != bug::group_promote_uncounted) add();
    }
    // Drops the token, folding in `finished_here` promoted children that finished on the holder's
    // thread (a drain): one RMW, finish()'s orderings (the fold publishes the children the holder
    // ran inline, which were never counted, as the token's release).
    void drop_token(std::uint64_t finished_here) noexcept {
        const std::uint64_t n = finished_here + (Policy::injected_bug != bug::group_token_not_held ? 1 : 0);
        if (n != 0) finish(n);
    }

    // n children finished (n > 1 only from a drain's fold).
    void finish(std::uint64_t n = 1) noexcept {
        const std::uint64_t minus = n * one_child;
        std::uint64_t s = state_.load(std::memory_order_relaxed);  // a guess; the CAS checks it
        for (;;) {
            const bool last_with_waiter = s - minus == waiting_bit;
            const std::uint64_t next = last_with_waiter ? 0 : s - minus;
            // acq_rel: release publishes this child's effects to the waiter; acquire pairs with
            // begin_wait()'s fetch_or, so waiter_ below is the current waiter's completion.
            if (state_.compare_exchange_weak(s, next, fold_order(n), std::memory_order_relaxed)) {
                if (last_with_waiter) {
                    // relaxed: ordered by the acquire CAS above (the waiter stored it before its
                    // fetch_or, and cannot clear it before c is set below).
                    waiter_.load(std::memory_order_relaxed)->set();
                }
                return;  // from here on the group may be gone
            }
        }
    }

    // acq_rel, as above; the injected bug makes a drain's fold relaxed (model_teeth.cpp).
    static constexpr std::memory_order fold_order(std::uint64_t n) noexcept {
        if constexpr (Policy::injected_bug == bug::group_relaxed_fold)
            if (n > 1) return std::memory_order_relaxed;
        return std::memory_order_acq_rel;
    }

    wait_status begin_wait(Waiter& c) noexcept {
        // acquire: pairs with finish()'s release CAS; count 0 means the children's effects are visible.
        if (state_.load(std::memory_order_acquire) == 0) return wait_status::done;
        Waiter* none = nullptr;
        // relaxed: waiter_ is published to the children by the release fetch_or below.
        if (!waiter_.compare_exchange_strong(none, &c, std::memory_order_relaxed, std::memory_order_relaxed))
            return wait_status::busy;
        // acq_rel: release publishes waiter_ to finish()'s acquire CAS; acquire pairs with the
        // release CAS of children that finished before this.
        const std::uint64_t before = state_.fetch_or(waiting_bit, std::memory_order_acq_rel);
        if (before != 0) return wait_status::must_wait;  // the last child will clear the bit and set c
        if constexpr (Policy::injected_bug == bug::group_lost_increment) {
            state_.store(0, std::memory_order_relaxed);  // the old reset: overwrites a concurrent add()
            waiter_.store(nullptr, std::memory_order_relaxed);
            return wait_status::done;
        }
        std::uint64_t expected = waiting_bit;
        // relaxed: on success it reads our own fetch_or's value (an add() in between makes it fail,
        // and its last child's clearing CAS too), so there is nothing new to acquire.
        if (state_.compare_exchange_strong(expected, 0, std::memory_order_relaxed, std::memory_order_relaxed)) {
            waiter_.store(nullptr, std::memory_order_relaxed);  // no child reads it: the bit was ours
            return wait_status::done;
        }
        return wait_status::must_wait;  // a concurrent add(): its last child sets c
    }

    // relaxed: the child that set c read waiter_ before set(); the next begin_wait() happens
    // after this one on this thread (or is a concurrent misuse, which may then report busy).
    void end_wait() noexcept { waiter_.store(nullptr, std::memory_order_relaxed); }

    // acquire: as in begin_wait().
    std::uint64_t unfinished() const noexcept { return state_.load(std::memory_order_acquire) / one_child; }

private:
    atomic<std::uint64_t> state_{0};
    atomic<Waiter*> waiter_{nullptr};
};

}  // namespace crew::detail
