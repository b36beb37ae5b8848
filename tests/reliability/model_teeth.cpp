// tests/reliability/model_teeth.cpp -- each known bug, re-introduced through the atomics policy
// (crew::detail::bug), paired with the scenarios expected to catch it. A separate translation
// unit from the correct instantiations so the two compile in parallel.
//
// Not here: the deque's relaxed bottom_ stores in pop() (a C++20 release-sequence bug). Relacy
// models C++11 release sequences, which still include later relaxed stores of the same thread, so
// no scenario could catch it; chase_lev.hpp's header comment carries that argument instead.
#include "reliability/model_scenarios.hpp"

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
};

}  // namespace crew_model
