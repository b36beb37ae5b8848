// The task state word (crew/detail/task_state.hpp) on its own: every transition single-threaded,
// then each race of ../shared/docs/async-notes.md §3.3 as a multi-threaded stress test on a mock
// task run by a small mock runtime (a locked queue and 1, 2, 4 or 8 worker threads). Frames are
// real heap objects freed with delete, so ASan reports a use after free or a double free; TSan
// checks that the frame and result slot are handed over with happens-before.
#include <crew/detail/task_state.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "support/watchdog.hpp"

namespace {

using crew::detail::idle_result;
using crew::detail::notify_result;
using crew::detail::run_result;
using state = crew::detail::task_state<>;

std::uint64_t refs(const state& s) { return state::refs(s.load()); }
bool has(const state& s, std::uint64_t bit) { return (s.load() & bit) != 0; }

// ---------------------------------------------------------------------------------------------
// Every transition, single-threaded

TEST(task_state, a_new_task_is_born_queued) {
    state s;
    EXPECT_EQ(refs(s), 3u);
    EXPECT_TRUE(has(s, state::notified));
    EXPECT_TRUE(has(s, state::join_interest));
    EXPECT_FALSE(has(s, state::running | state::complete | state::cancelled | state::join_waker));
}

TEST(task_state, run_then_idle_drops_the_entry_reference) {
    state s;
    EXPECT_EQ(s.transition_to_running(), run_result::success);
    EXPECT_TRUE(has(s, state::running));
    EXPECT_FALSE(has(s, state::notified));
    EXPECT_EQ(s.transition_to_idle(), idle_result::ok);
    EXPECT_FALSE(has(s, state::running));
    EXPECT_EQ(refs(s), 2u);
}

TEST(task_state, a_wake_during_a_run_requeues_after_it) {
    state s;
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    EXPECT_EQ(s.transition_to_notified_by_ref(), notify_result::do_nothing);  // never queued while running
    EXPECT_EQ(s.transition_to_notified_by_ref(), notify_result::do_nothing);
    EXPECT_EQ(refs(s), 3u);
    EXPECT_EQ(s.transition_to_idle(), idle_result::ok_notified);  // the entry's reference carries over
    EXPECT_EQ(refs(s), 3u);
    EXPECT_TRUE(has(s, state::notified));
    EXPECT_EQ(s.transition_to_running(), run_result::success);
}

TEST(task_state, by_value_wake_while_running_gives_its_reference_up) {
    state s(4);  // + one waker
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    EXPECT_EQ(s.transition_to_notified_by_val(), notify_result::do_nothing);
    EXPECT_EQ(refs(s), 3u);
    EXPECT_EQ(s.transition_to_idle(), idle_result::ok_notified);
}

TEST(task_state, n_wakes_before_a_run_give_one_entry) {
    state s(5);  // + two by-value wakers
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    ASSERT_EQ(s.transition_to_idle(), idle_result::ok);  // idle, not queued, 4 refs
    EXPECT_EQ(s.transition_to_notified_by_ref(), notify_result::submit);  // +1 for the entry
    EXPECT_EQ(refs(s), 5u);
    EXPECT_EQ(s.transition_to_notified_by_ref(), notify_result::do_nothing);
    EXPECT_EQ(s.transition_to_notified_by_val(), notify_result::do_nothing);  // drops its own
    EXPECT_EQ(refs(s), 4u);
    EXPECT_EQ(s.transition_to_running(), run_result::success);
    EXPECT_EQ(s.transition_to_idle(), idle_result::ok);
    EXPECT_EQ(s.transition_to_notified_by_val(), notify_result::submit);  // its reference is the entry's
    EXPECT_EQ(refs(s), 3u);
}

TEST(task_state, complete_then_wakes_are_no_ops_and_the_last_reference_frees) {
    state s(4);  // entry, handle, registry, one waker
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    std::uint64_t snap = s.transition_to_complete();
    EXPECT_TRUE((snap & state::complete) != 0);
    EXPECT_FALSE((snap & state::running) != 0);
    EXPECT_TRUE((snap & state::join_interest) != 0);
    EXPECT_FALSE(s.transition_to_terminal(2));  // the entry and the registry
    EXPECT_EQ(s.transition_to_notified_by_ref(), notify_result::do_nothing);
    EXPECT_EQ(s.cancel(), notify_result::do_nothing);  // cancelling a finished task: no-op
    EXPECT_EQ(s.transition_to_notified_by_val(), notify_result::do_nothing);  // 1 ref (handle) left
    auto d = s.unset_join_interested();
    EXPECT_TRUE(d.drop_output);
    EXPECT_TRUE(d.drop_waker);
    EXPECT_TRUE(s.ref_dec());
}

// Session 6: a yield folded into the end of the run (notify_self records it; no RMW during the run).
TEST(task_state, a_yield_sets_notified_in_the_transition_that_ends_the_run) {
    state s;
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    EXPECT_EQ(s.transition_to_idle(true), idle_result::ok_notified);  // the entry's reference carries over
    EXPECT_EQ(refs(s), 3u);
    EXPECT_TRUE(has(s, state::notified));
    EXPECT_FALSE(has(s, state::running));
    EXPECT_EQ(s.transition_to_notified_by_ref(), notify_result::do_nothing);  // queued already
    EXPECT_EQ(s.transition_to_running(), run_result::success);
    EXPECT_EQ(s.transition_to_idle(false), idle_result::ok);
    EXPECT_EQ(refs(s), 2u);
}

TEST(task_state, a_yield_and_a_wake_during_the_same_run_give_one_entry) {
    state s(4);  // + one by-value waker
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    EXPECT_EQ(s.transition_to_notified_by_val(), notify_result::do_nothing);  // gives its reference up
    EXPECT_EQ(s.transition_to_idle(true), idle_result::ok_notified);
    EXPECT_EQ(refs(s), 3u);
    EXPECT_EQ(s.transition_to_running(), run_result::success);
    EXPECT_EQ(s.transition_to_idle(false), idle_result::ok);
}

TEST(task_state, a_cancelled_run_ignores_the_yield) {
    state s;
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    EXPECT_EQ(s.cancel(), notify_result::do_nothing);
    EXPECT_EQ(s.transition_to_idle(true), idle_result::cancelled);  // RUNNING kept: drop and complete
    EXPECT_TRUE(has(s, state::running));
}

// Session 6: the fired join waker's slot goes back in the terminal RMW; the handle that saw
// COMPLETE drops its interest and its reference in one RMW.
TEST(task_state, terminal_gives_a_fired_wakers_slot_back) {
    state s;
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    ASSERT_TRUE(s.set_join_waker());
    const std::uint64_t snap = s.transition_to_complete();
    ASSERT_TRUE((snap & state::join_waker) != 0);
    EXPECT_FALSE(s.transition_to_terminal(2, true));  // the entry and the registry; the handle stays
    EXPECT_FALSE(has(s, state::join_waker));
    EXPECT_TRUE(has(s, state::complete | state::join_interest));
    EXPECT_EQ(refs(s), 1u);
    const auto d = s.drop_join_interest_complete();
    EXPECT_TRUE(d.drop_waker);  // the slot is the handle's again (and empty: the runtime consumed it)
    EXPECT_TRUE(d.last);
}

TEST(task_state, unwatched_completion_is_one_transition) {
    using crew::detail::complete_result;
    state s;  // a handle not awaited yet: COMPLETE and the scheduler's references in one CAS
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    EXPECT_EQ(s.transition_to_complete_unwatched(2, false), complete_result::done);
    EXPECT_EQ(s.load() & state::flag_mask, state::complete | state::join_interest);
    EXPECT_EQ(refs(s), 1u);
    EXPECT_FALSE(s.set_join_waker());  // the handle reads the result instead
    EXPECT_TRUE(s.drop_join_interest_complete().last);

    state w;  // an installed join waker: nothing changes, the long way fires it
    ASSERT_EQ(w.transition_to_running(), run_result::success);
    ASSERT_TRUE(w.set_join_waker());
    const std::uint64_t before = w.load();
    EXPECT_EQ(w.transition_to_complete_unwatched(2, false), complete_result::join_waker);
    EXPECT_EQ(w.load(), before);

    state d;  // detached: the runner drops the result first (still RUNNING), then completes
    ASSERT_EQ(d.transition_to_running(), run_result::success);
    const auto drop = d.unset_join_interested();
    EXPECT_FALSE(drop.drop_output);
    EXPECT_FALSE(d.ref_dec());
    EXPECT_EQ(d.transition_to_complete_unwatched(2, false), complete_result::drop_output);
    EXPECT_TRUE(has(d, state::running));
    // The runner's two references are the only ones left: it frees the task without writing the
    // word (session 14's exclusive completion; nobody else may touch it any more).
    const std::uint64_t sole = d.load();
    EXPECT_EQ(d.transition_to_complete_unwatched(2, true), complete_result::done_dealloc);
    EXPECT_EQ(d.load(), sole);
}

TEST(task_state, the_exclusive_completion_needs_every_other_reference_gone) {
    state d;  // detached, and a by-value waker still holds a reference: the CAS, no free
    d.ref_inc();  // the waker's
    ASSERT_EQ(d.transition_to_running(), run_result::success);
    ASSERT_TRUE(d.drop_join_interest_unwatched().taken);
    EXPECT_EQ(d.transition_to_complete_unwatched(2, false), crew::detail::complete_result::drop_output);
    EXPECT_EQ(d.transition_to_complete_unwatched(2, true), crew::detail::complete_result::done);
    EXPECT_TRUE(has(d, state::complete));
    EXPECT_EQ(state::refs(d.load()), 1u);
    EXPECT_EQ(d.transition_to_notified_by_val(), notify_result::dealloc);  // the waker's was the last

    state h;  // the handle is alive (JOIN_INTEREST): never exclusive, even at count references
    ASSERT_TRUE(h.transition_to_running() == run_result::success);
    EXPECT_FALSE(h.ref_dec());  // the handle's reference is dropped, JOIN_INTEREST kept
    EXPECT_EQ(h.transition_to_complete_unwatched(2, false), crew::detail::complete_result::done_dealloc);
    EXPECT_TRUE(has(h, state::complete));  // written: the CAS ran
}

TEST(task_state, the_handle_asks_for_the_slot_before_it_drops_its_reference) {
    state s;  // join_handle::drop_complete reads the slot before its RMW: the answer must not change
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    ASSERT_TRUE(s.set_join_waker());
    (void)s.transition_to_complete();
    EXPECT_FALSE(s.owns_join_slot());  // the runtime is firing it
    EXPECT_FALSE(s.set_join_waker());  // once COMPLETE, JOIN_WAKER is never set again
    EXPECT_FALSE(s.transition_to_terminal(2, true));  // fired and given back
    EXPECT_TRUE(s.owns_join_slot());
    EXPECT_TRUE(s.drop_join_interest_complete().last);

    state u;  // no waker installed: owned throughout
    ASSERT_EQ(u.transition_to_running(), run_result::success);
    EXPECT_EQ(u.transition_to_complete_unwatched(2, false), crew::detail::complete_result::done);
    EXPECT_TRUE(u.owns_join_slot());
    EXPECT_TRUE(u.drop_join_interest_complete().last);
}

TEST(task_state, a_handle_dropped_while_the_runtime_fires_leaves_the_slot_alone) {
    state s;
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    ASSERT_TRUE(s.set_join_waker());
    (void)s.transition_to_complete();  // the runtime now fires the waker...
    const auto d = s.drop_join_interest_complete();  // ... while the woken handle is dropped
    EXPECT_FALSE(d.drop_waker);
    EXPECT_FALSE(d.last);
    EXPECT_FALSE(has(s, state::join_interest));
    EXPECT_TRUE(s.transition_to_terminal(2, true));  // the runtime's references were the last
    EXPECT_EQ(s.load() & state::flag_mask, state::complete);
}

TEST(task_state, the_last_by_value_wake_after_completion_frees) {
    state s(2);  // entry + one waker, no handle left
    ASSERT_EQ(s.unset_join_interested().drop_output, false);
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    std::uint64_t snap = s.transition_to_complete();
    EXPECT_FALSE((snap & state::join_interest) != 0);  // the runtime destroys the result
    EXPECT_FALSE(s.transition_to_terminal(1));
    EXPECT_EQ(s.transition_to_notified_by_val(), notify_result::dealloc);
}

TEST(task_state, a_stale_entry_only_drops_its_reference) {
    state s(4);
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    EXPECT_EQ(s.transition_to_running(), run_result::failed);  // running elsewhere
    EXPECT_EQ(refs(s), 3u);
    s.transition_to_complete();
    EXPECT_EQ(s.transition_to_running(), run_result::failed);  // complete
    EXPECT_EQ(refs(s), 2u);
    EXPECT_FALSE(s.transition_to_terminal(1));
    EXPECT_EQ(s.transition_to_running(), run_result::dealloc);
}

// Run inline (claim_to_run_inline): the awaiter takes a queued task's run; the entry left in the
// queue is dropped by its next transition_to_running, which clears CLAIMED.
TEST(task_state, an_inline_claim_takes_a_queued_tasks_run_and_marks_its_entry_stale) {
    state s;  // born queued: entry, handle, registry
    ASSERT_TRUE(s.claim_to_run_inline());
    EXPECT_TRUE(has(s, state::running | state::claimed));
    EXPECT_FALSE(has(s, state::notified));
    EXPECT_EQ(refs(s), 4u);  // + the claimer's run
    EXPECT_FALSE(s.claim_to_run_inline());  // running
    EXPECT_EQ(s.transition_to_idle(), idle_result::ok);  // the claimer's run ends: its reference goes
    EXPECT_EQ(refs(s), 3u);
    EXPECT_FALSE(s.claim_to_run_inline());  // idle, not queued: nothing to claim
    // A wake while the stale entry is still queued: it becomes the real entry again (one entry
    // per task at most), no submit, no new reference.
    EXPECT_EQ(s.transition_to_notified_by_ref(), notify_result::do_nothing);
    EXPECT_TRUE(has(s, state::notified));
    EXPECT_FALSE(has(s, state::claimed));
    EXPECT_EQ(refs(s), 3u);
    EXPECT_TRUE(s.claim_to_run_inline());  // queued again: claimable again
    EXPECT_EQ(s.transition_to_running(), run_result::failed);  // the entry pops while the claimer runs
    EXPECT_FALSE(has(s, state::claimed));
    EXPECT_EQ(s.transition_to_idle(), idle_result::ok);
    EXPECT_EQ(refs(s), 2u);
}

// A run inline that ends NOTIFIED (a yield, a wake during it) while its stale entry is queued
// hands the licence to that entry instead of queueing a second one; so do a by-value wake and
// a cancel of the idle task.
TEST(task_state, a_claimed_task_keeps_one_entry) {
    state s;  // entry, handle, registry
    ASSERT_TRUE(s.claim_to_run_inline());
    EXPECT_EQ(s.transition_to_idle(true), idle_result::ok);  // a yield: the stale entry runs it next
    EXPECT_TRUE(has(s, state::notified));
    EXPECT_FALSE(has(s, state::claimed));
    EXPECT_EQ(refs(s), 3u);
    ASSERT_TRUE(s.claim_to_run_inline());
    ASSERT_EQ(s.transition_to_idle(), idle_result::ok);  // suspended; the stale entry still queued
    s.ref_inc();  // a waker's reference
    EXPECT_EQ(s.transition_to_notified_by_val(), notify_result::do_nothing);  // its reference dropped
    EXPECT_TRUE(has(s, state::notified));
    EXPECT_EQ(refs(s), 3u);
    ASSERT_TRUE(s.claim_to_run_inline());
    ASSERT_EQ(s.transition_to_idle(), idle_result::ok);
    EXPECT_EQ(s.cancel(), notify_result::do_nothing);  // the stale entry drops it
    EXPECT_TRUE(has(s, state::notified | state::cancelled));
    EXPECT_EQ(s.transition_to_running(), run_result::cancelled);
}

TEST(task_state, an_inline_claim_refuses_running_complete_cancelled_and_idle_tasks) {
    state a;
    ASSERT_EQ(a.transition_to_running(), run_result::success);
    EXPECT_FALSE(a.claim_to_run_inline());  // running
    (void)a.transition_to_complete();
    EXPECT_FALSE(a.claim_to_run_inline());  // complete
    state b;
    EXPECT_EQ(b.cancel(), notify_result::do_nothing);  // queued already: CANCELLED only
    EXPECT_FALSE(b.claim_to_run_inline());
    state c;
    ASSERT_EQ(c.transition_to_running(), run_result::success);
    ASSERT_EQ(c.transition_to_idle(), idle_result::ok);
    EXPECT_FALSE(c.claim_to_run_inline());  // idle, no entry
}

// The stale entry of a claimed run that completed: it drops the last scheduler reference.
TEST(task_state, the_stale_entry_of_a_completed_inline_run_frees_last) {
    state s(2);  // entry, handle
    ASSERT_TRUE(s.claim_to_run_inline());
    EXPECT_EQ(s.transition_to_complete_unwatched(1, false), crew::detail::complete_result::done);
    s.drop_join_interest_complete();
    EXPECT_EQ(s.transition_to_running(), run_result::dealloc);
}

// Displacement (session 12, drop_stale_entry): the owner that moves its LIFO slot's displaced
// occupant to the ring drops it when the entry is stale (CLAIMED: cleared, the entry's reference
// dropped), and leaves a live entry alone (never claimed, or made live again by a wake).
TEST(task_state, a_displaced_stale_entry_is_dropped_and_a_live_one_kept) {
    using displaced = state::displaced;
    state s;  // entry, handle, registry
    EXPECT_EQ(s.drop_stale_entry(), displaced::live);  // queued, not claimed: the entry is live
    EXPECT_EQ(s.load(), 3 * state::ref_one | state::join_interest | state::notified);  // unchanged
    ASSERT_TRUE(s.claim_to_run_inline());
    EXPECT_EQ(s.drop_stale_entry(), displaced::dropped);  // while the claimer runs it
    EXPECT_FALSE(has(s, state::claimed));
    EXPECT_EQ(refs(s), 3u);  // the entry's reference went, the claimer's run holds one
    EXPECT_EQ(s.transition_to_idle(), idle_result::ok);  // no entry left: a wake must submit
    EXPECT_EQ(s.transition_to_notified_by_ref(), notify_result::submit);
    EXPECT_EQ(refs(s), 3u);  // the new entry's reference
    // Claimed, then woken while the stale entry is held: the entry is live again, keep it.
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    ASSERT_EQ(s.transition_to_idle(true), idle_result::ok_notified);  // a yield: the same entry
    ASSERT_TRUE(s.claim_to_run_inline());
    ASSERT_EQ(s.transition_to_idle(), idle_result::ok);
    EXPECT_EQ(s.transition_to_notified_by_ref(), notify_result::do_nothing);  // stale -> live
    EXPECT_EQ(s.drop_stale_entry(), displaced::live);
    EXPECT_TRUE(has(s, state::notified));
    EXPECT_EQ(s.transition_to_running(), run_result::success);  // the kept entry runs it
}

// The displaced stale entry of a claimed run that completed holds the last reference.
TEST(task_state, a_displaced_stale_entry_of_a_completed_run_frees_last) {
    state s(2);  // entry, handle
    ASSERT_TRUE(s.claim_to_run_inline());
    EXPECT_EQ(s.transition_to_complete_unwatched(1, false), crew::detail::complete_result::done);
    s.drop_join_interest_complete();
    EXPECT_EQ(s.drop_stale_entry(), state::displaced::dealloc);
}

TEST(task_state, cancel_an_idle_task_queues_it_to_be_dropped) {
    state s;
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    ASSERT_EQ(s.transition_to_idle(), idle_result::ok);
    EXPECT_EQ(s.cancel(), notify_result::submit);
    EXPECT_EQ(refs(s), 3u);
    EXPECT_EQ(s.cancel(), notify_result::do_nothing);
    EXPECT_EQ(s.transition_to_notified_by_ref(), notify_result::do_nothing);  // queued already
    EXPECT_EQ(s.transition_to_running(), run_result::cancelled);
    EXPECT_TRUE(has(s, state::running));
    s.transition_to_complete();
    EXPECT_TRUE(has(s, state::cancelled | state::complete));
}

TEST(task_state, cancel_a_queued_task_and_a_running_one) {
    state queued;
    EXPECT_EQ(queued.cancel(), notify_result::do_nothing);  // the existing entry will drop it
    EXPECT_EQ(queued.transition_to_running(), run_result::cancelled);

    state running;
    ASSERT_EQ(running.transition_to_running(), run_result::success);
    EXPECT_EQ(running.cancel(), notify_result::do_nothing);       // never interrupts the run
    EXPECT_EQ(running.transition_to_idle(), idle_result::cancelled);  // seen at the suspension
    EXPECT_TRUE(has(running, state::running));
}

TEST(task_state, join_waker_slot_handover) {
    state s;
    EXPECT_TRUE(s.set_join_waker());
    EXPECT_TRUE(has(s, state::join_waker));
    EXPECT_TRUE(s.unset_waker());  // take the slot back to replace the waker
    EXPECT_TRUE(s.set_join_waker());
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    std::uint64_t snap = s.transition_to_complete();
    EXPECT_TRUE((snap & state::join_waker) != 0);  // the runtime wakes the joiner
    EXPECT_FALSE(s.unset_waker());                  // too late: read the result
    EXPECT_FALSE(s.set_join_waker());
    std::uint64_t after = s.unset_waker_after_complete();
    EXPECT_TRUE((after & state::join_interest) != 0);  // the handle is alive: it keeps the waker
    auto d = s.unset_join_interested();
    EXPECT_TRUE(d.drop_output);
    EXPECT_TRUE(d.drop_waker);
}

TEST(task_state, a_handle_dropped_before_completion_owns_its_waker_and_no_result) {
    state s;
    ASSERT_TRUE(s.set_join_waker());
    auto d = s.unset_join_interested();
    EXPECT_FALSE(d.drop_output);
    EXPECT_TRUE(d.drop_waker);
    EXPECT_FALSE(has(s, state::join_waker | state::join_interest));
}

TEST(task_state, a_handle_dropped_while_the_runtime_holds_the_waker_leaves_it_there) {
    state s;
    ASSERT_TRUE(s.set_join_waker());
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    s.transition_to_complete();
    auto d = s.unset_join_interested();
    EXPECT_TRUE(d.drop_output);
    EXPECT_FALSE(d.drop_waker);  // the runtime is reading it
    std::uint64_t after = s.unset_waker_after_complete();
    EXPECT_FALSE((after & state::join_interest) != 0);  // so the runtime destroys it
}

TEST(task_state, a_detached_handle_drops_interest_and_reference_in_one_transition) {
    state s;  // queued, not run: the one-CAS drop applies
    auto f = s.drop_join_interest_unwatched();
    EXPECT_TRUE(f.taken);
    EXPECT_FALSE(f.last);
    EXPECT_FALSE(has(s, state::join_interest));
    EXPECT_EQ(state::refs(s.load()), state::default_refs - 1);
    // The runner then completes it and drops the result itself (no JOIN_INTEREST).
    ASSERT_EQ(s.transition_to_running(), run_result::success);
    EXPECT_EQ(s.transition_to_complete_unwatched(2, false), crew::detail::complete_result::drop_output);
    EXPECT_EQ(s.transition_to_complete_unwatched(2, true), crew::detail::complete_result::done_dealloc);
}

TEST(task_state, the_one_transition_drop_refuses_a_complete_task_and_an_installed_waker) {
    state done;
    ASSERT_EQ(done.transition_to_running(), run_result::success);
    ASSERT_EQ(done.transition_to_complete_unwatched(1, false), crew::detail::complete_result::done);
    const std::uint64_t before = done.load();
    EXPECT_FALSE(done.drop_join_interest_unwatched().taken);  // the handle owns the result
    EXPECT_EQ(done.load(), before);

    state watched;
    ASSERT_TRUE(watched.set_join_waker());
    const std::uint64_t armed = watched.load();
    EXPECT_FALSE(watched.drop_join_interest_unwatched().taken);  // a waker to release
    EXPECT_EQ(watched.load(), armed);
}

TEST(task_state, shutdown_claims_only_idle_tasks) {
    state idle;
    EXPECT_TRUE(idle.transition_to_shutdown());  // queued counts as idle: the entry goes stale
    EXPECT_TRUE(has(idle, state::running | state::cancelled));
    EXPECT_EQ(idle.transition_to_running(), run_result::failed);

    state busy;
    ASSERT_EQ(busy.transition_to_running(), run_result::success);
    EXPECT_FALSE(busy.transition_to_shutdown());
    EXPECT_EQ(busy.transition_to_idle(), idle_result::cancelled);
}

TEST(task_state, reference_count_lives_in_the_high_bits) {
    state s(1000);
    for (int i = 0; i < 1000; ++i) s.ref_inc();
    EXPECT_EQ(refs(s), 2000u);
    for (int i = 0; i < 1999; ++i) ASSERT_FALSE(s.ref_dec());
    EXPECT_TRUE(has(s, state::notified | state::join_interest));  // flags untouched
    EXPECT_TRUE(s.ref_dec());
}

// ---------------------------------------------------------------------------------------------
// The suspension word (suspension_word in task_state.hpp), single-threaded, then its one race

using susp = crew::detail::suspension_word<>;

TEST(suspension_word, each_arm_has_a_new_generation_and_one_resolve_wins) {
    susp w;
    const std::uint64_t g1 = w.arm(true);
    ASSERT_NE(g1, 0u);
    EXPECT_EQ(w.phase(), susp::phase_waiting);
    EXPECT_TRUE(w.resolve(g1, susp::phase_signaled));
    EXPECT_FALSE(w.resolve(g1, susp::phase_signaled));  // resolved already: at most one resume
    EXPECT_EQ(w.phase(), susp::phase_signaled);
    const std::uint64_t g2 = w.arm(true);
    EXPECT_GT(g2, g1);
    EXPECT_FALSE(w.resolve(g1, susp::phase_signaled));  // a stale waker never resolves a later one
    EXPECT_EQ(w.phase(), susp::phase_waiting);
    EXPECT_TRUE(w.resolve(g2, susp::phase_none));  // a retract
    EXPECT_FALSE(w.resolve(g2, susp::phase_signaled));
    EXPECT_EQ(w.phase(), susp::phase_none);
}

TEST(suspension_word, cancel_resolves_only_a_cancellable_waiting_suspension_and_is_sticky) {
    susp w;
    const std::uint64_t g1 = w.arm(false);
    bool first = false;
    EXPECT_FALSE(w.request_cancel(first));  // not cancellable: only the sticky bit
    EXPECT_TRUE(first);
    EXPECT_TRUE(w.cancel_requested());
    EXPECT_EQ(w.phase(), susp::phase_waiting);
    EXPECT_FALSE(w.request_cancel(first));  // idempotent
    EXPECT_FALSE(first);
    EXPECT_TRUE(w.resolve(g1, susp::phase_signaled));
    EXPECT_EQ(w.arm(true), 0u);  // cancellable arm refused once cancellation was requested
    EXPECT_EQ(w.phase(), susp::phase_cancelled);
    const std::uint64_t g3 = w.arm(false);  // a non-cancellable one still arms
    EXPECT_NE(g3, 0u);
    EXPECT_TRUE(w.cancel_requested());  // the bit survives every arm
    EXPECT_TRUE(w.resolve(g3, susp::phase_signaled));

    susp v;
    const std::uint64_t g = v.arm(true);
    EXPECT_TRUE(v.request_cancel(first));
    EXPECT_EQ(v.phase(), susp::phase_cancelled);
    EXPECT_FALSE(v.resolve(g, susp::phase_signaled));  // the waker lost: it hands its item on
}

// Wakers of the current and of the previous suspension and a canceller race on one word: exactly
// one party resolves each suspension, never a stale waker. 1, 2, 4 and 8 racing threads.
TEST(suspension_word, racing_wakers_and_a_canceller_resolve_each_suspension_once) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    for (unsigned threads : {1u, 2u, 4u, 8u}) {
        const long rounds = crew_test::scaled(1000);
        for (long round = 0; round < rounds; ++round) {
            susp w;
            const std::uint64_t stale = w.arm(true);
            ASSERT_TRUE(w.resolve(stale, susp::phase_none));
            const std::uint64_t gen = w.arm(true);
            std::atomic<int> winners{0}, stale_wins{0};
            std::atomic<bool> go{false};
            std::vector<std::thread> pool;
            for (unsigned i = 0; i < threads; ++i) {
                pool.emplace_back([&, i] {
                    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
                    if (i == 0 && threads > 1) {
                        bool first = false;
                        if (w.request_cancel(first)) winners.fetch_add(1);
                    } else if (i % 2 == 1) {
                        if (w.resolve(stale, susp::phase_signaled)) stale_wins.fetch_add(1);
                        if (w.resolve(gen, susp::phase_signaled)) winners.fetch_add(1);
                    } else if (w.resolve(gen, susp::phase_signaled)) {
                        winners.fetch_add(1);
                    }
                });
            }
            go.store(true, std::memory_order_release);
            for (auto& t : pool) t.join();
            ASSERT_EQ(winners.load(), 1) << threads << " threads, round " << round;
            ASSERT_EQ(stale_wins.load(), 0);
            ASSERT_NE(w.phase(), susp::phase_waiting);
        }
    }
}

}  // namespace

#include "detail/task_state_stress.hpp"
