// tests/reliability/model_teeth.cpp -- each known bug, re-introduced through the atomics policy
// (crew::detail::bug), paired with the scenarios expected to catch it. A separate translation
// unit from the correct instantiations so the two compile in parallel.
//
// Not here: the deque's relaxed bottom_ stores in pop() (a C++20 release-sequence bug). Relacy
// models C++11 release sequences, which still include later relaxed stores of the same thread, so
// no scenario could catch it; chase_lev.hpp's header comment carries that argument instead.
#include "reliability/model_fork.hpp"  // includes model_scenarios.hpp
#include "reliability/model_group_fork.hpp"
#include "reliability/model_task_word.hpp"

namespace crew_model {
namespace {

// The deque bugs need an owner racing thieves (mix, last item) or a growth under steals.
template <bug Bug>
constexpr scenario deque_teeth[] = {
    deque_scenario<Bug, mix<2>>("deque_mix_cap2"),
    deque_scenario<Bug, last_item<2>>("deque_last_item_cap2"),
    deque_scenario<Bug, growth<2>>("deque_growth_cap2"),
    deque_scenario<Bug, mix<4>>("deque_mix_cap4"),
};
template <bug Bug>
constexpr scenario parking_teeth[] = {parking_scenario<Bug>("parking_sleep_wake"),
                                      parking_deque_scenario<Bug>("parking_with_deques")};

template <bug Bug>
constexpr scenario group_teeth[] = {group_count_scenario<Bug>("group_count_producer_waiter"),
                                    group_count_scenario<Bug, true>("group_count_nested")};
template <bug Bug>
constexpr scenario drain_teeth[] = {group_drain_scenario<Bug>("group_count_drain")};

// The ring bugs: the scenario named first is the one meant for the bug; the others back it up.
template <bug Bug>
constexpr scenario ring_teeth[] = {
    ring_scenario<Bug, ring_mix<0>>("ring_mix_cap4"),
    ring_scenario<Bug, ring_wrap>("ring_wrap_cap4"),
    ring_scenario<Bug, ring_thief_room>("ring_thief_room_cap4"),
    ring_scenario<Bug, ring_drain>("ring_drain_cap4"),
    ring_scenario<Bug, ring_mix<0xfffffffeu>>("ring_mix_wrap_cap4"),
};
template <bug Bug>
constexpr scenario state_teeth[] = {task_state_scenario<Bug, false>("task_state_wake_run_join"),
                                    task_state_scenario<Bug, true>("task_state_cancel_wake_run")};

template <bug Bug>
constexpr scenario claim_teeth[] = {task_claim_scenario<Bug, false>("task_state_inline_claim"),
                                    task_claim_scenario<Bug, true>("task_state_inline_claim_cancel")};

template <bug Bug>
constexpr scenario task_word_teeth[] = {task_word_scenario<Bug, false>("task_word_wake_stale_wake"),
                                        task_word_scenario<Bug, true>("task_word_cancel_wake_drop"),
                                        late_waker_scenario<Bug>("task_word_late_waker")};
template <bug Bug>
constexpr scenario deferred_wake_teeth[] = {deferred_wake_scenario<Bug>("wait_list_deferred_wake")};
// The one-CAS handle drop: the detach scenario for the COMPLETE check, the join scenarios (a
// handle that installed its waker and drops it unfired) for the JOIN_WAKER check.
template <bug Bug>
constexpr scenario detach_teeth[] = {task_detach_scenario<Bug>("task_state_detach"),
                                     task_state_scenario<Bug, false>("task_state_wake_run_join"),
                                     task_state_scenario<Bug, true>("task_state_cancel_wake_run")};

// The displacement drop (drop_stale_entry) racing the claim, a wake, a cancel and a LIFO thief.
template <bug Bug>
constexpr scenario displace_teeth[] = {task_displace_scenario<Bug, false>("task_state_displace"),
                                       task_displace_scenario<Bug, true>("task_state_displace_cancel")};

// The owner's take-back from its LIFO slot racing a thief's take, a wake and a cancel.
template <bug Bug>
constexpr scenario take_back_teeth[] = {task_take_back_scenario<Bug, false>("task_state_take_back"),
                                        task_take_back_scenario<Bug, true>("task_state_take_back_cancel")};

// The block's lifetime: a cancelled awaiter coming back after a send or during the destructor.
template <bug Bug>
constexpr scenario wait_block_teeth[] = {wait_block_scenario<Bug, true>("wait_block_send_cancel_destroy"),
                                         wait_block_scenario<Bug, false>("wait_block_close_cancel")};

// The one-shot channel: a wait, a cancelled wait, a receiver that is gone.
template <bug Bug>
constexpr scenario oneshot_teeth[] = {oneshot_scenario<Bug, true, oneshot_rx::await>("oneshot_send_await"),
                                      oneshot_scenario<Bug, true, oneshot_rx::cancel>("oneshot_send_cancel"),
                                      oneshot_scenario<Bug, true, oneshot_rx::drop>("oneshot_send_receiver_gone")};

template <bug Bug>
constexpr scenario lifo_teeth[] = {parking_lifo_scenario<Bug>("parking_with_lifo_slots")};
template <bug Bug>
constexpr scenario fork_teeth[] = {fork_scenario<Bug>("fork_request_promote_steal"),
                                   fork_scenario<Bug, 62>("fork_count_wraps_read")};
template <bug Bug>
constexpr scenario fork_wake_teeth[] = {fork_wake_scenario<Bug>("fork_wake_request")};
template <bug Bug>
constexpr scenario group_fork_teeth[] = {group_fork_scenario<Bug>("group_fork_token_steal_wait")};
template <bug Bug>
constexpr scenario remote_teeth[] = {remote_list_scenario<Bug>("frame_remote_list")};

}  // namespace

const bug_entry bugs[bug_count] = {
    {"no_pop_fence", deque_teeth<bug::no_pop_fence>, 4},
    {"no_steal_fence", deque_teeth<bug::no_steal_fence>, 4},
    {"take_before_cas", deque_teeth<bug::take_before_cas>, 4},
    {"last_without_cas", deque_teeth<bug::last_without_cas>, 4},
    {"relaxed_grow_publish", deque_teeth<bug::relaxed_grow_publish>, 4},
    {"no_park_fence", parking_teeth<bug::no_park_fence>, 2},
    {"park_without_recheck", parking_teeth<bug::park_without_recheck>, 2},
    {"group_lost_increment", group_teeth<bug::group_lost_increment>, 2},
    {"group_relaxed_fold", drain_teeth<bug::group_relaxed_fold>, 1},
    {"ring_no_room_check", ring_teeth<bug::ring_no_room_check>, 5},
    {"ring_lost_cas_is_empty", ring_teeth<bug::ring_lost_cas_is_empty>, 5},
    {"ring_capacity_vs_real_head", ring_teeth<bug::ring_capacity_vs_real_head>, 5},
    {"ring_wide_index_math", ring_teeth<bug::ring_wide_index_math>, 5},
    {"ring_overflow_without_claim", ring_teeth<bug::ring_overflow_without_claim>, 5},
    {"state_wake_running_no_notify", state_teeth<bug::state_wake_running_no_notify>, 2},
    {"state_fold_ignores_join_waker", state_teeth<bug::state_fold_ignores_join_waker>, 2},
    {"state_claim_unmarked", claim_teeth<bug::state_claim_unmarked>, 2},
    {"state_stale_keeps_claim", claim_teeth<bug::state_stale_keeps_claim>, 2},
    {"state_claim_second_entry", claim_teeth<bug::state_claim_second_entry>, 2},
    {"lifo_hidden_from_recheck", lifo_teeth<bug::lifo_hidden_from_recheck>, 1},
    {"remote_push_relaxed", remote_teeth<bug::remote_push_relaxed>, 1},
    {"fork_promoted_run_inline", fork_teeth<bug::fork_promoted_run_inline>, 2},
    {"fork_top_not_lowered", fork_teeth<bug::fork_top_not_lowered>, 2},
    {"fork_wrap_torn", fork_teeth<bug::fork_wrap_torn>, 2},
    {"group_token_not_held", group_fork_teeth<bug::group_token_not_held>, 1},
    {"group_promote_uncounted", group_fork_teeth<bug::group_promote_uncounted>, 1},
    {"fork_take_back_no_identity", group_fork_teeth<bug::fork_take_back_no_identity>, 1},
    {"group_boundary_no_publish", group_fork_teeth<bug::group_boundary_no_publish>, 1},
    {"fork_wake_relaxed_clear", fork_wake_teeth<bug::fork_wake_relaxed_clear>, 1},
    {"fork_steal_request_store", fork_wake_teeth<bug::fork_steal_request_store>, 1},
    {"fork_limit_restore_store", fork_teeth<bug::fork_limit_restore_store>, 2},
    {"fork_request_zero_store", fork_teeth<bug::fork_request_zero_store>, 2},
    // Caught only past the fast tier's budget (at schedule 6,625,586): tests/reliability/CMakeLists.txt.
    {"park_ignores_token", parking_teeth<bug::park_ignores_token>, 1},
};

const bug_entry task_word_bugs[task_word_bug_count] = {
    {"susp_wake_ignores_generation", task_word_teeth<bug::susp_wake_ignores_generation>, 3},
    {"susp_relaxed_arm", task_word_teeth<bug::susp_relaxed_arm>, 3},
    {"wait_claim_after_unlock", deferred_wake_teeth<bug::wait_claim_after_unlock>, 1},
    {"state_detach_fast_when_complete", detach_teeth<bug::state_detach_fast_when_complete>, 3},
    {"state_detach_fast_ignores_waker", detach_teeth<bug::state_detach_fast_ignores_waker>, 3},
    {"state_displace_drops_live", displace_teeth<bug::state_displace_drops_live>, 2},
    {"state_displace_keeps_claim", displace_teeth<bug::state_displace_keeps_claim>, 2},
    {"state_displace_double_drop", displace_teeth<bug::state_displace_double_drop>, 2},
    {"state_exclusive_ignores_refs", detach_teeth<bug::state_exclusive_ignores_refs>, 3},
    {"wait_idle_ignores_lock", wait_block_teeth<bug::wait_idle_ignores_lock>, 2},
    {"wait_failed_claim_uncounts", wait_block_teeth<bug::wait_failed_claim_uncounts>, 2},
    {"oneshot_close_relaxed", oneshot_teeth<bug::oneshot_close_relaxed>, 3},
    {"oneshot_publish_ignores_closed", oneshot_teeth<bug::oneshot_publish_ignores_closed>, 3},
    {"oneshot_withdraw_blind", oneshot_teeth<bug::oneshot_withdraw_blind>, 3},
    {"oneshot_close_drops_ref_waiting", oneshot_teeth<bug::oneshot_close_drops_ref_waiting>, 3},
    {"oneshot_sole_free_relaxed", oneshot_teeth<bug::oneshot_sole_free_relaxed>, 3},
    {"oneshot_hand_off_touches", oneshot_teeth<bug::oneshot_hand_off_touches>, 3},
    {"lifo_take_back_store", take_back_teeth<bug::lifo_take_back_store>, 2},
};

}  // namespace crew_model
