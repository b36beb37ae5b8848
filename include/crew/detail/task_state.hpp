// crew/detail/task_state.hpp -- the one atomic word per coroutine task (issue 10's task state;
// standalone, no scheduler code here).
//
// Reference design: Tokio's task state (tokio/src/runtime/task/state.rs), as described in
// ../shared/docs/async-notes.md §4. The word:
//   bit 0 RUNNING      a thread holds the licence to resume the frame (the lock around the frame
//                      and its result slot)
//   bit 1 COMPLETE     the coroutine finished (or was dropped as cancelled); never cleared, never
//                      set together with RUNNING
//   bit 2 NOTIFIED     a queue entry for the task exists (or, while RUNNING, a wake arrived and the
//                      runner must re-queue it)
//   bit 3 JOIN_INTEREST the join handle is alive
//   bit 4 JOIN_WAKER   the join waker slot is filled and belongs to the runtime (see below)
//   bit 5 CANCELLED    cancel() was called
//   bit 6 CLAIMED      one queue entry of the task is stale: its awaiter claimed the task's run
//                      and ran it inline (claim_to_run_inline); the next entry popped is dropped
//   bits 7..63         the reference count (one unit = 128): queue entries + wakers holding the
//                      task by value + the join handle + whatever the scheduler registers.
// A new task is born queued: initial_refs references (by default 3: the first queue entry, the
// join handle, the scheduler's registry) + JOIN_INTEREST + NOTIFIED.
//
// Ownership rules (what the callers must follow; each transition returns what to do):
//   * A queue entry owns one reference and is the only licence to run: the thread that pops it
//     calls transition_to_running(); success/cancelled give it RUNNING.
//   * After a run: transition_to_idle(). ok_notified: a wake came during the run; the finished
//     entry's reference becomes the new entry's: re-queue the task at the BACK of the ring (a
//     yield). ok: the entry's reference was dropped. ok_dealloc: it was the last: free the frame.
//     cancelled: drop the frame and complete as cancelled (RUNNING stays held until complete).
//   * Complete, nobody waiting (session 7): transition_to_complete_unwatched(n) does COMPLETE and
//     transition_to_terminal(n) in one CAS when no join waker is installed (a handle not awaited
//     yet, or a detached task whose result the runner dropped before, while RUNNING). Else:
//   * Complete: transition_to_complete() (RUNNING -> COMPLETE in one RMW), then act on its
//     snapshot (no JOIN_INTEREST: destroy the result; JOIN_WAKER: wake the joiner), then
//     transition_to_terminal(n, fired) for the n references the scheduler still holds (the entry
//     that ran, the registry's), which also gives a fired waker's slot back (fired: the
//     unset_waker_after_complete() of Tokio's protocol, folded in); free the frame when it says last.
//   * Wakers: by value (the waker owns a reference) or by reference (it does not). submit: the
//     caller enqueues the task with the reference the transition provided. A wake while RUNNING
//     only sets NOTIFIED (the runner re-queues); a wake of a queued or complete task does nothing.
//   * Join waker slot: while JOIN_WAKER is clear the handle owns the slot. To install: write the
//     waker, then set_join_waker() (fails once COMPLETE: read the result instead). To replace:
//     unset_waker() (fails once COMPLETE), write, set_join_waker(). Only a COMPLETE task with
//     JOIN_WAKER set may have its waker read by the runtime.
//   * Dropping the handle: unset_join_interested() says whether the handle must destroy the result
//     (the task is COMPLETE) and whether it owns the waker slot; then ref_dec(). A handle that saw
//     COMPLETE destroys the result and then drop_join_interest_complete() (both in one RMW). A
//     handle dropped while the task is not COMPLETE and no join waker is installed (a detached
//     spawn) does both in one CAS: drop_join_interest_unwatched() (session 11).
//   * A yield: the running task records it (no RMW) and the runner passes it to
//     transition_to_idle(true), which sets NOTIFIED as a wake during the run would have.
//   * Run inline (session 10): the task awaiting a queued task's join handle (on the same pool) may
//     take its run instead of suspending: claim_to_run_inline() takes RUNNING from a queued task
//     (NOTIFIED, not RUNNING, COMPLETE, CANCELLED or CLAIMED) with a reference of its own, clears
//     NOTIFIED and sets CLAIMED, all in one CAS; the claimer then runs it as a worker that popped
//     its entry would (transition_to_idle / the completion, which drop that reference). The entry
//     stays in its queue, holding its reference, and is the task's only entry: a task has at most
//     ONE queue entry at any time (the injector links its items through task::next, so a second
//     entry of the same task would corrupt it). While CLAIMED is set, whatever would queue a new
//     entry (a wake or cancel of the idle task, a run that ends NOTIFIED) instead turns the stale
//     entry back into the real one: CLAIMED -> NOTIFIED, no submit, the reference the new entry
//     would have owned is dropped (never the last: the entry holds one). A transition_to_running()
//     that finds CLAIMED (the entry is stale, the task is running, idle or complete) clears it and
//     drops the entry's reference. So NOTIFIED and CLAIMED are both set only while RUNNING, an
//     idle task without NOTIFIED is never run (a waker that resolved its suspension and has not
//     yet notified relies on it: waiter.hpp's claim), and the header outlives the stale entry.
//   * Displacement (session 12): the worker whose LIFO slot holds an entry it is about to push
//     to its ring (a newer task took the slot) first asks drop_stale_entry(): while CLAIMED is set
//     the entry it holds is the stale one (a task has at most one entry), so one CAS clears
//     CLAIMED and drops the entry's reference (the frame is freed there, on the owner, when that
//     was the last) and nothing is pushed; without CLAIMED the entry is live (never claimed, or a
//     wake or cancel made the stale entry the entry again) and goes to the ring as before. It is
//     transition_to_running()'s CLAIMED branch without the run: whoever pops a stale entry drops
//     it, the owner just does it before the entry reaches a queue a thief can take it from.
//
// Guarantees (tests/detail/task_state_test.cpp, model task_state_* in tests/reliability):
// never resumed on two threads at once (RUNNING is taken only by the holder of a queue entry, and
// no entry exists while RUNNING: a wake then only sets NOTIFIED); a wake during a run re-queues
// after the run (transition_to_idle sees NOTIFIED); a wake after completion is a no-op; N wakes
// before a run give one run (only the first sets NOTIFIED); the frame is freed exactly once (the
// reference count reaches zero once, and only the RMW that takes it there reports `last`; or,
// session 14, a detached task's runner sees with an acquire load that its references are the only
// ones and frees without writing: sole_holders).
//
// Orderings. Every transition is one RMW (a CAS loop acq_rel on success, acquire on failure; or a
// fetch_*), so all transitions are totally ordered in the word's modification order, and since
// every write is an RMW each release sequence runs through all later transitions (C++20's rule).
//   * acq_rel transitions: release publishes what the caller did before (the frame's writes before
//     transition_to_idle/complete, the waker slot before set_join_waker); acquire pairs with the
//     release of the transition that made the state it acts on (the runner that starts after a
//     wake sees the waker's writes; the handle that reads the result after COMPLETE sees it).
//   * ref_inc: relaxed, as std::shared_ptr: the caller already holds a reference, so the count is
//     above zero and no one can free concurrently; nothing is published.
//   * ref_dec / transition_to_terminal: acq_rel: release so every holder's last uses happen before
//     the free; acquire so the thread that frees sees all of them (partner: each other's releases).
#pragma once

#include <cstdint>

#include "crew/detail/atomics.hpp"

namespace crew::detail {

enum class run_result : std::uint8_t { success, cancelled, failed, dealloc };
enum class idle_result : std::uint8_t { ok, ok_notified, ok_dealloc, cancelled };
enum class notify_result : std::uint8_t { do_nothing, submit, dealloc };
// transition_to_complete_unwatched(): done (dealloc: it was the last reference); join_waker: a
// join waker is installed, complete the long way; drop_output: the handle is gone, drop the result
// first (still RUNNING) and call again.
enum class complete_result : std::uint8_t { done, done_dealloc, join_waker, drop_output };

// What unset_join_interested() leaves to the handle.
struct join_drop {
    bool drop_output;  // the task is COMPLETE: the handle destroys the result
    bool drop_waker;   // the handle owns the waker slot: it destroys whatever waker it stored
};

template <class Policy = std_atomics>
class task_state {
public:
    static constexpr std::uint64_t running = 1;
    static constexpr std::uint64_t complete = 2;
    static constexpr std::uint64_t notified = 4;
    static constexpr std::uint64_t join_interest = 8;
    static constexpr std::uint64_t join_waker = 16;
    static constexpr std::uint64_t cancelled = 32;
    static constexpr std::uint64_t claimed = 64;
    static constexpr std::uint64_t ref_one = 128;
    static constexpr std::uint64_t flag_mask = ref_one - 1;
    static constexpr std::uint64_t default_refs = 3;

    explicit task_state(std::uint64_t initial_refs = default_refs) noexcept
        : word_(initial_refs * ref_one | join_interest | notified) {}
    task_state(const task_state&) = delete;
    task_state& operator=(const task_state&) = delete;

    // A snapshot (acquire: pairs with the last transition's release). Tests and assertions.
    std::uint64_t load() const noexcept { return word_.load(std::memory_order_acquire); }
    static constexpr std::uint64_t refs(std::uint64_t s) noexcept { return s / ref_one; }

    // A worker popped a queue entry (which holds one reference).
    run_result transition_to_running() noexcept {
        std::uint64_t s = word_.load(std::memory_order_acquire);
        for (;;) {
            std::uint64_t next = s;
            run_result r;
            if ((s & claimed) != 0) {  // the entry an inline run made stale (or one like it): drop it
                if constexpr (Policy::injected_bug != bug::state_stale_keeps_claim) next &= ~claimed;
                next -= ref_one;
                r = refs(next) == 0 ? run_result::dealloc : run_result::failed;
            } else if ((s & (running | complete)) != 0) {  // a stale entry: drop its reference only
                next -= ref_one;
                r = refs(next) == 0 ? run_result::dealloc : run_result::failed;
            } else {
                next = (next | running) & ~notified;  // clearing NOTIFIED now catches wakes during the run
                r = (s & cancelled) != 0 ? run_result::cancelled : run_result::success;
            }
            if (cas(s, next)) return r;
        }
    }

    // The owner is about to move this entry (which it holds: its LIFO slot's displaced occupant) to
    // its ring (see the header, "Displacement"). dropped / dealloc (free the frame): the entry was
    // stale and is gone; live: nothing changed, queue it. acq_rel CAS (cas()): release, as
    // ref_dec's, orders the owner's uses before another holder's free; acquire: on dealloc, pairs
    // with the releases of the claimer's run and completion (transition_to_idle/complete), whose
    // frame writes happen before this free. A wake that made the entry live again (CLAIMED ->
    // NOTIFIED) is an RMW before ours in the word's order: the CAS fails or sees it, never both.
    enum class displaced : std::uint8_t { live, dropped, dealloc };
    displaced drop_stale_entry() noexcept {
        if constexpr (Policy::injected_bug == bug::state_displace_drops_live) {
            // The bug: check a snapshot, then a blind RMW (a wake may have made the entry live).
            if ((word_.load(std::memory_order_acquire) & claimed) == 0) return displaced::live;
            const std::uint64_t prev = word_.fetch_sub(claimed + ref_one, std::memory_order_acq_rel);
            return refs(prev) == 1 ? displaced::dealloc : displaced::dropped;
        }
        std::uint64_t s = word_.load(std::memory_order_acquire);
        for (;;) {
            if ((s & claimed) == 0) return displaced::live;
            std::uint64_t next = s - ref_one;
            if constexpr (Policy::injected_bug != bug::state_displace_keeps_claim) next &= ~claimed;
            if (cas(s, next)) {
                if constexpr (Policy::injected_bug == bug::state_displace_double_drop) return displaced::live;
                return refs(next) == 0 ? displaced::dealloc : displaced::dropped;
            }
        }
    }

    // The task awaiting this one's handle takes its run (see the header). True: RUNNING taken, with
    // a new reference for the claimer's run; its queue entry is marked stale (CLAIMED). False: it
    // is not queued (running, idle, complete), cancelled, or an entry is marked stale already.
    // acq_rel CAS (cas()): acquire, as transition_to_running's, pairs with the release of the
    // transition that queued it (the spawn's publication of the frame, a waker's writes).
    bool claim_to_run_inline() noexcept {
        std::uint64_t s = word_.load(std::memory_order_acquire);
        for (;;) {
            if ((s & (notified | running | complete | cancelled | claimed)) != notified) return false;
            std::uint64_t next = ((s | running) & ~notified) + ref_one;
            if constexpr (Policy::injected_bug != bug::state_claim_unmarked) next |= claimed;
            if (cas(s, next)) return true;
        }
    }

    // The runner's coroutine suspended (RUNNING held). `requeue`: the task asked during the run to
    // be run again (a yield): set NOTIFIED in this same RMW, as if it had woken itself while
    // RUNNING (transition_to_notified_by_ref), one RMW fewer per yield.
    idle_result transition_to_idle(bool requeue = false) noexcept {
        std::uint64_t s = word_.load(std::memory_order_acquire);
        for (;;) {
            if ((s & cancelled) != 0) return idle_result::cancelled;  // keep RUNNING: drop and complete
            std::uint64_t next = (s & ~running) | (requeue ? notified : 0);
            idle_result r = idle_result::ok_notified;  // the entry's reference goes to the new entry
            if ((next & notified) == 0) {
                next -= ref_one;
                r = refs(next) == 0 ? idle_result::ok_dealloc : idle_result::ok;
            } else if ((next & claimed) != 0 && Policy::injected_bug != bug::state_claim_second_entry) {
                next = (next & ~claimed) - ref_one;  // the stale entry is the entry again (see the header)
                r = idle_result::ok;
            }
            if (cas(s, next)) return r;
        }
    }

    // A waker that owns a reference wakes the task (and gives its reference up).
    notify_result transition_to_notified_by_val() noexcept {
        std::uint64_t s = word_.load(std::memory_order_acquire);
        for (;;) {
            std::uint64_t next = s;
            notify_result r = notify_result::do_nothing;
            if ((s & running) != 0) {
                if constexpr (Policy::injected_bug != bug::state_wake_running_no_notify) next |= notified;
                next -= ref_one;  // the runner holds one, so this is never the last
            } else if ((s & (notified | complete)) == 0) {
                if ((s & claimed) != 0 && Policy::injected_bug != bug::state_claim_second_entry) {
                    next = ((next & ~claimed) | notified) - ref_one;  // the stale entry is the entry again
                } else {
                    next |= notified;  // our reference becomes the queue entry's
                    r = notify_result::submit;
                }
            } else {
                next -= ref_one;
                if (refs(next) == 0) r = notify_result::dealloc;
            }
            if (cas(s, next)) return r;
        }
    }

    // A waker that does not own a reference wakes the task; submit comes with a new reference.
    notify_result transition_to_notified_by_ref() noexcept {
        std::uint64_t s = word_.load(std::memory_order_acquire);
        for (;;) {
            std::uint64_t next = s;
            notify_result r = notify_result::do_nothing;
            if ((s & (notified | complete)) != 0) return r;  // queued already, or done: nothing to do
            if ((s & running) != 0) {
                if constexpr (Policy::injected_bug != bug::state_wake_running_no_notify) next |= notified;
            } else if ((s & claimed) != 0 && Policy::injected_bug != bug::state_claim_second_entry) {
                next = (next & ~claimed) | notified;  // the stale entry is the entry again
            } else {
                next = (next | notified) + ref_one;
                r = notify_result::submit;
            }
            if (next == s || cas(s, next)) return r;
        }
    }

    // cancel (any thread). submit: the task was idle and not queued; enqueue it (with the new
    // reference) so a worker drops it on its own thread. Cancelling a cancelled or complete task
    // does nothing; a running one sees it at transition_to_idle().
    notify_result cancel() noexcept {
        std::uint64_t s = word_.load(std::memory_order_acquire);
        for (;;) {
            if ((s & (cancelled | complete)) != 0) return notify_result::do_nothing;
            std::uint64_t next = s | cancelled;
            notify_result r = notify_result::do_nothing;
            if ((s & running) != 0) {
                next |= notified;
            } else if ((s & claimed) != 0) {
                next = (next & ~claimed) | notified;  // the stale entry is the entry again
            } else if ((s & notified) == 0) {
                next = (next | notified) + ref_one;
                r = notify_result::submit;
            }
            if (cas(s, next)) return r;
        }
    }

    // Shutdown (the pool is going away): claim an idle task to drop its frame on this thread.
    // True: RUNNING taken (and CANCELLED set); complete it as cancelled. False: it is running or
    // complete; only CANCELLED was set, the runner drops it.
    bool transition_to_shutdown() noexcept {
        std::uint64_t s = word_.load(std::memory_order_acquire);
        for (;;) {
            bool claim = (s & (running | complete)) == 0;
            std::uint64_t next = s | cancelled | (claim ? running : 0);
            if (cas(s, next)) return claim;
        }
    }

    // RUNNING -> COMPLETE in one RMW. Returns the new state: the caller looks at JOIN_INTEREST and
    // JOIN_WAKER (see the header). acq_rel: release publishes the result to the handle's acquire.
    std::uint64_t transition_to_complete() noexcept {
        return word_.fetch_xor(running | complete, std::memory_order_acq_rel) ^ (running | complete);
    }

    // Exclusive completion (session 14): the handle is gone (JOIN_INTEREST clear) and the `count`
    // references are all there are. Every other party touches the word only while it holds a
    // reference (a queue entry, a by-value waker, the handle; a by-reference waker relies on one
    // held elsewhere), so no RMW can follow in the word's order: the task is the runner's alone and
    // is freed without writing it (std::shared_ptr's use_count() == 1 reasoning). The snapshot is
    // an acquire load that read the last RMW, whose release (with the release sequence through
    // every earlier RMW) makes every former holder's uses happen before the free. A detached task
    // (chained_spawn) pays one RMW fewer: the handle's drop and the by-value wakes were its others.
    static constexpr bool sole_holders(std::uint64_t s, std::uint64_t count) noexcept {
        if constexpr (Policy::injected_bug == bug::state_exclusive_ignores_refs) return (s & join_interest) == 0;
        return (s & join_interest) == 0 && refs(s) == count;
    }

    // RUNNING -> COMPLETE and drop the `count` scheduler references in one CAS, when no join waker
    // is installed: then there is nothing to do between the two (the handle, if any, reads the
    // result after its acquire of COMPLETE; it sets no waker once COMPLETE). With JOIN_WAKER set:
    // join_waker, nothing changed (transition_to_complete and the rest). Without JOIN_INTEREST and
    // !output_dropped: drop_output, nothing changed (JOIN_INTEREST never comes back, so the caller
    // drops the result and calls again with output_dropped). With the output dropped and the
    // caller's references the only ones (sole_holders): done_dealloc without an RMW, nothing
    // written (the load's acquire is the free's). The caller leaves every list first:
    // once this succeeds it may not touch the task (unless done_dealloc: it frees it).
    // acq_rel: release publishes the result (to the handle's acquire of COMPLETE) and orders this
    // holder's uses before the free; acquire: done_dealloc sees the other holders' uses.
    complete_result transition_to_complete_unwatched(std::uint64_t count, bool output_dropped) noexcept {
        std::uint64_t s = word_.load(std::memory_order_acquire);
        for (;;) {
            if (Policy::injected_bug != bug::state_fold_ignores_join_waker && (s & join_waker) != 0)
                return complete_result::join_waker;
            if ((s & join_interest) == 0 && !output_dropped) return complete_result::drop_output;
            if (sole_holders(s, count)) return complete_result::done_dealloc;  // no RMW (see above)
            const std::uint64_t next = (s ^ (running | complete)) - count * ref_one;
            if (cas(s, next)) return refs(next) == 0 ? complete_result::done_dealloc : complete_result::done;
        }
    }

    // After complete: drop the `count` references the scheduler still holds. True: free the frame.
    // `waker_fired`: the runtime woke the joiner (JOIN_WAKER was set in transition_to_complete's
    // snapshot, and only the runtime clears it once COMPLETE): give the slot back in the same RMW
    // (unset_waker_after_complete and this in one fetch_sub; subtracting the set bit clears it).
    bool transition_to_terminal(std::uint64_t count, bool waker_fired = false) noexcept {
        const std::uint64_t sub = count * ref_one + (waker_fired ? join_waker : 0);
        return refs(word_.fetch_sub(sub, std::memory_order_acq_rel)) == count;
    }

    // relaxed: the caller holds a reference (see the header).
    void ref_inc() noexcept { word_.fetch_add(ref_one, std::memory_order_relaxed); }
    // True: that was the last reference; free the frame.
    bool ref_dec() noexcept { return refs(word_.fetch_sub(ref_one, std::memory_order_acq_rel)) == 1; }

    // The join handle is dropped (it holds JOIN_INTEREST). Clears JOIN_INTEREST, and JOIN_WAKER
    // unless COMPLETE (then the runtime may be reading the waker: it keeps the slot).
    join_drop unset_join_interested() noexcept {
        std::uint64_t s = word_.load(std::memory_order_acquire);
        for (;;) {
            std::uint64_t next = s & ~join_interest;
            if ((s & complete) == 0) next &= ~join_waker;
            if (cas(s, next)) return {(s & complete) != 0, (next & join_waker) == 0};
        }
    }

    // The handle is dropped and its waker slot is empty (JOIN_WAKER clear: the slot is the
    // handle's, and a handle never leaves a waker in a slot it owns): unset_join_interested and
    // ref_dec in one CAS (session 11; Tokio's drop_join_handle_fast), while the task is not COMPLETE
    // (then the runner drops the result: it sees JOIN_INTEREST gone). A detached spawn pays one RMW
    // here instead of two. `taken` false: COMPLETE or JOIN_WAKER set, nothing changed; use
    // unset_join_interested() and ref_dec(). `last`: free the frame (an incomplete task still has
    // the scheduler's references, so this is not expected; handled as ref_dec's last).
    // acq_rel (cas()), as ref_dec: release orders the handle's uses before the last holder's free;
    // acquire: when last, every other holder's uses happen before ours free it.
    struct unwatched_drop {
        bool taken;
        bool last;
    };
    unwatched_drop drop_join_interest_unwatched() noexcept {
        std::uint64_t s = word_.load(std::memory_order_acquire);
        for (;;) {
            std::uint64_t refuse = complete | join_waker;
            if constexpr (Policy::injected_bug == bug::state_detach_fast_when_complete) refuse = join_waker;
            if constexpr (Policy::injected_bug == bug::state_detach_fast_ignores_waker) refuse = complete;
            if ((s & refuse) != 0) return {false, false};
            const std::uint64_t next = (s & ~join_interest) - ref_one;
            if (cas(s, next)) return {true, refs(next) == 0};
        }
    }

    // The handle of a task it saw COMPLETE (an acquire load) is dropped: clear JOIN_INTEREST and drop
    // the handle's reference in one fetch_sub (unset_join_interested + ref_dec; once COMPLETE only
    // the handle clears JOIN_INTEREST, so subtracting the set bit clears it). The handle destroyed
    // the result before (it owns it once COMPLETE). drop_waker as unset_join_interested's (a set
    // JOIN_WAKER belongs to the runtime, which is firing it). `last`: free the frame.
    struct complete_drop {
        bool drop_waker;
        bool last;
    };
    // Whether the handle of a task it saw COMPLETE owns the waker slot (JOIN_WAKER clear), asked
    // BEFORE drop_join_interest_complete(): after that RMW the handle holds no reference, and
    // another holder (a stale queue entry, the runner) may free the frame, slot included. Once
    // COMPLETE, JOIN_WAKER is never set again and only the runner clears it, after it fired and
    // emptied the slot, so the answer stays true and a false one leaves nothing for the handle.
    // acquire: pairs with the runner's terminal RMW (release), which follows its emptying.
    bool owns_join_slot() noexcept { return (word_.load(std::memory_order_acquire) & join_waker) == 0; }
    complete_drop drop_join_interest_complete() noexcept {
        // acq_rel, as ref_dec: release orders the handle's destruction of the result before the
        // last reference's free (the runner's transition_to_terminal, or here); acquire: when this
        // is the last, everything the runner did before its terminal RMW is seen before the free.
        const std::uint64_t s = word_.fetch_sub(join_interest + ref_one, std::memory_order_acq_rel);
        return {(s & join_waker) == 0, refs(s) == 1};
    }

    // The handle wrote its waker into the slot; hand the slot to the runtime. False: the task
    // completed first (the handle keeps the slot and reads the result).
    bool set_join_waker() noexcept {
        std::uint64_t s = word_.load(std::memory_order_acquire);
        for (;;) {
            if ((s & complete) != 0) return false;
            if (cas(s, s | join_waker)) return true;
        }
    }

    // The handle takes the slot back to replace the waker. False: the task completed first.
    bool unset_waker() noexcept {
        std::uint64_t s = word_.load(std::memory_order_acquire);
        for (;;) {
            if ((s & complete) != 0) return false;
            if (cas(s, s & ~join_waker)) return true;
        }
    }

    // The runtime woke the joiner after completion and gives the slot back. Returns the new state:
    // without JOIN_INTEREST the handle is gone and the runtime destroys the waker.
    std::uint64_t unset_waker_after_complete() noexcept {
        return word_.fetch_and(~join_waker, std::memory_order_acq_rel) & ~join_waker;
    }

private:
    // acq_rel on success, acquire on failure (see the header); reloads `s` on failure.
    bool cas(std::uint64_t& s, std::uint64_t next) noexcept {
        return word_.compare_exchange_weak(s, next, std::memory_order_acq_rel, std::memory_order_acquire);
    }

    // The word: RMW only, by every party (runner, wakers, handle, cancel, shutdown).
    typename Policy::template atomic<std::uint64_t> word_;
};

// The suspension word of one coroutine task (crew/async/detail/async_task.hpp's `susp`; the
// protocol is waiter.hpp's). One atomic word:
//   bits 0-1  phase: none (running, or resumed after a retract/yield), waiting (armed, not yet
//             resolved), signaled, cancelled
//   bit 2     cancel requested (sticky: set once by request_cancel())
//   bit 3     the armed suspension is cancellable
//   bits 4-63 the generation: +1 for every armed suspension, so a waker of an earlier suspension
//             can never resolve a later one (resolve() compares the generation).
// Exactly one party moves a suspension out of `waiting` (one CAS): a waker (-> signaled), the
// canceller (-> cancelled) or the task itself (retract, -> none). Every write is an RMW.
// Orderings: arm() acq_rel (acquire: pairs with request_cancel()'s CAS, whose hooks' writes the
// task then sees; release: the arm happens before the waker is published). resolve() and
// request_cancel() acq_rel (release: what the resolver handed over, read by the resumed task after
// phase()'s acquire; acquire: pairs with arm()). phase()/cancel_requested(): acquire, partner the
// resolving CAS. Model: tests/reliability/model_task_word.hpp (with teeth).
template <class Policy = std_atomics>
class suspension_word {
public:
    static constexpr std::uint64_t phase_mask = 3;
    static constexpr std::uint64_t phase_none = 0;
    static constexpr std::uint64_t phase_waiting = 1;
    static constexpr std::uint64_t phase_signaled = 2;
    static constexpr std::uint64_t phase_cancelled = 3;
    static constexpr std::uint64_t cancel_requested_bit = 4;
    static constexpr std::uint64_t cancellable_bit = 8;
    static constexpr std::uint64_t gen_one = 16;
    static constexpr std::uint64_t gen_mask = ~(gen_one - 1);

    suspension_word() noexcept = default;
    suspension_word(const suspension_word&) = delete;
    suspension_word& operator=(const suspension_word&) = delete;

    // The task arms a new suspension (on its own thread). Returns its generation, or 0 when the
    // suspension is cancellable and cancellation was requested (then phase() is cancelled: do not
    // suspend). Generations start at gen_one, so 0 never names a suspension.
    std::uint64_t arm(bool is_cancellable) noexcept {
        std::uint64_t s = word_.load(std::memory_order_relaxed);
        for (;;) {
            const std::uint64_t gen = (s | (gen_one - 1)) + 1;  // the next generation
            const bool refuse = is_cancellable && (s & cancel_requested_bit) != 0;
            std::uint64_t next = gen | (s & cancel_requested_bit);
            next |= refuse ? phase_cancelled : phase_waiting | (is_cancellable ? cancellable_bit : 0);
            constexpr auto order = Policy::injected_bug == bug::susp_relaxed_arm ? std::memory_order_relaxed
                                                                                  : std::memory_order_acq_rel;
            if (word_.compare_exchange_weak(s, next, order, std::memory_order_relaxed))
                return refuse ? 0 : gen;
        }
    }

    // waiting(gen) -> `phase` in one CAS (a waker: signaled; the task's retract: none). False: the
    // suspension is no longer waiting (resolved by someone else, or a later one is armed).
    bool resolve(std::uint64_t gen, std::uint64_t phase) noexcept {
        std::uint64_t s = word_.load(std::memory_order_relaxed);
        for (;;) {
            const bool same_gen =
                Policy::injected_bug == bug::susp_wake_ignores_generation || (s & gen_mask) == gen;
            if (!same_gen || (s & phase_mask) != phase_waiting) return false;
            const std::uint64_t next = (s & ~phase_mask) | phase;
            if (word_.compare_exchange_weak(s, next, std::memory_order_acq_rel, std::memory_order_relaxed)) return true;
        }
    }

    // Set the sticky cancel bit (any thread). Returns true when this call also moved a cancellable
    // waiting suspension to cancelled (the caller queues the task); false when it did not, or when
    // cancellation was requested before (idempotent).
    bool request_cancel(bool& first) noexcept {
        std::uint64_t s = word_.load(std::memory_order_relaxed);
        for (;;) {
            first = (s & cancel_requested_bit) == 0;
            if (!first) return false;
            const bool take = (s & phase_mask) == phase_waiting && (s & cancellable_bit) != 0;
            std::uint64_t next = s | cancel_requested_bit;
            if (take) next = (next & ~phase_mask) | phase_cancelled;
            if (word_.compare_exchange_weak(s, next, std::memory_order_acq_rel, std::memory_order_relaxed))
                return take;
        }
    }

    // The phase of the last suspension (the task's thread, after it was resumed; or the runner).
    std::uint64_t phase() const noexcept { return word_.load(std::memory_order_acquire) & phase_mask; }
    // The generation of the last armed suspension (the shutdown drain resolves it: whatever still
    // waits ends cancelled, by the same resolve() CAS a canceller makes). acquire: as phase().
    std::uint64_t generation() const noexcept { return word_.load(std::memory_order_acquire) & gen_mask; }
    bool cancel_requested() const noexcept {
        return (word_.load(std::memory_order_acquire) & cancel_requested_bit) != 0;
    }

private:
    typename Policy::template atomic<std::uint64_t> word_{0};
};

}  // namespace crew::detail
