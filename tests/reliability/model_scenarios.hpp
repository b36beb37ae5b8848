// tests/reliability/model_scenarios.hpp -- the Relacy scenarios for crew's lock-free code (used by
// model_check.cpp and model_teeth.cpp).
//
// What is checked. Every scenario instantiates the production header (crew/detail/chase_lev.hpp,
// parking.hpp, injector.hpp, group_count.hpp) with relacy_atomics<Bug>; Relacy explores random schedules over its
// C++11 memory model (stale loads allowed wherever the orderings allow them), and reports data
// races on rl::var, failed RL_ASSERTs, deadlocks (every thread blocked) and livelocks.
//
//   deque scenarios (one owner, two thieves, capacity 2 or 4): each item carries an rl::var payload
//   written before push and read by whoever takes it (so publication is race-checked); each id must
//   be taken exactly once, counting what the owner drains after all threads finished.
//   parking scenario: the worker-loop model (see parking_model) must never end with a queued task
//   and every worker asleep; Relacy reports that state as a deadlock.
//   group count scenarios: a task group's final wait must follow every child's work, and no child
//   may touch the group after it is destroyed (see group_count_model).
//   ring scenarios (async_ring.hpp at capacity 4, owner + two stealers): every id taken exactly
//   once, including the overflow sink; see ring_model.
//   task state scenarios (task_state.hpp): one run at a time, the task completes once, its result
//   and frame are freed exactly once; see task_state_model.
#pragma once

// Before relacy.hpp (through relacy_policy.hpp) redefines `new` and friends for user code.
#include "crew/detail/frame_cache.hpp"
#include "reliability/relacy_policy.hpp"

#include <cstdio>
#include <ostream>
#include <streambuf>

#include "reliability/model_deque.hpp"
#include "reliability/model_parking.hpp"
#include "reliability/model_frame.hpp"
#include "reliability/model_group.hpp"
#include "reliability/model_ring.hpp"
#include "reliability/model_task_state.hpp"

namespace crew_model {

// ---------------------------------------------------------------------------------------------
// Running a scenario

struct outcome {
    bool passed;
    unsigned long long schedules;  // schedules run (up to and including the failing one)
};

// Relacy writes its report (the whole history of a failing execution) while its allocator hooks
// are live, so the stream must not allocate: this one forwards the first `max_lines` lines to
// stdout (indented) and drops the rest.
class head_buf : public std::streambuf {
public:
    explicit head_buf(int max_lines) : left_(max_lines) {}

protected:
    int_type overflow(int_type ch) override {
        if (ch == traits_type::eof() || left_ <= 0) return traits_type::not_eof(ch);
        if (at_line_start_) std::fputs("    | ", stdout);
        std::fputc(ch, stdout);
        at_line_start_ = ch == '\n';
        if (at_line_start_) --left_;
        return ch;
    }

private:
    int left_;
    bool at_line_start_ = true;
};

// Runs `Test` under Relacy's random scheduler for up to `schedules` executions; stops at the first
// failure and prints the head of Relacy's report (`report_lines` lines).
template <class Test>
outcome simulate(unsigned long long schedules, int report_lines) {
    head_buf buf(report_lines);
    std::ostream out(&buf);
    rl::test_params params;
    params.iteration_count = schedules;
    params.search_type = rl::random_scheduler_type;
    params.output_stream = &out;
    params.progress_stream = &out;
    bool ok = rl::simulate<Test>(params);
    std::fflush(stdout);
    return {ok, static_cast<unsigned long long>(params.stop_iteration)};
}

struct scenario {
    const char* name;
    outcome (*run)(unsigned long long schedules, int report_lines);
};

template <bug Bug, class Scenario>
constexpr scenario deque_scenario(const char* name) {
    return {name, &simulate<deque_model<relacy_atomics<Bug>, Scenario>>};
}
template <bug Bug>
constexpr scenario parking_scenario(const char* name) {
    return {name, &simulate<parking_model<relacy_atomics<Bug>>>};
}
template <bug Bug>
constexpr scenario parking_deque_scenario(const char* name) {
    return {name, &simulate<parking_deque_model<relacy_atomics<Bug>>>};
}
template <bug Bug>
constexpr scenario parking_lifo_scenario(const char* name) {
    return {name, &simulate<parking_lifo_model<relacy_atomics<Bug>>>};
}
template <bug Bug>
constexpr scenario remote_list_scenario(const char* name) {
    return {name, &simulate<remote_list_model<relacy_atomics<Bug>>>};
}

template <bug Bug, bool Nested = false>
constexpr scenario group_count_scenario(const char* name) {
    return {name, &simulate<group_count_model<relacy_atomics<Bug>, Nested>>};
}
template <bug Bug>
constexpr scenario group_drain_scenario(const char* name) {
    return {name, &simulate<group_drain_model<relacy_atomics<Bug>>>};
}
template <bug Bug, class Scenario>
constexpr scenario ring_scenario(const char* name) {
    return {name, &simulate<ring_model<relacy_atomics<Bug>, Scenario>>};
}
template <bug Bug, bool Cancel>
constexpr scenario task_state_scenario(const char* name) {
    return {name, &simulate<task_state_model<relacy_atomics<Bug>, Cancel>>};
}
template <bug Bug, bool Cancel>
constexpr scenario task_claim_scenario(const char* name) {
    return {name, &simulate<task_claim_model<relacy_atomics<Bug>, Cancel>>};
}

// The correct code: every scenario (model_check.cpp).
inline constexpr int scenario_count = 26;  // + model_fork.hpp's and model_group_fork.hpp's
extern const scenario correct_scenarios[scenario_count];

// A bug and the scenarios that must catch it (model_teeth.cpp).
struct bug_entry {
    const char* name;
    const scenario* scenarios;
    int count;
};
inline constexpr int bug_count = 33;  // + model_fork.hpp's and model_group_fork.hpp's
extern const bug_entry bugs[bug_count];

}  // namespace crew_model
