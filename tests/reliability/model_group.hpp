// tests/reliability/model_group.hpp -- Relacy scenarios for a task group's child count
// (group_count.hpp): the wait follows every child.
// Part of model_scenarios.hpp (which says what is checked and how a scenario runs).
#pragma once

// Before relacy.hpp (through relacy_policy.hpp) redefines `new` and friends for user code.
#include "crew/detail/frame_cache.hpp"
#include "reliability/relacy_policy.hpp"

namespace crew_model {

// ---------------------------------------------------------------------------------------------
// Task group counting (crew/detail/group_count.hpp): thread 1 is a producer that adds two
// children and hands each to its own runner thread (2 and 3), which does the child's work and
// calls finish(); thread 0 is the owner, which waits while the producer runs, then "joins" the
// producer (waits for its done flag), waits again and destroys the group. Checked: the final wait
// returns only after both children finished (their rl::var writes are read without a race), and
// a child touches the group after its decrement only while the waiter is still blocked (the
// waiter's set() reads `group_gone`, which the owner writes after the final wait: a race or a
// true value is a failure). A lost increment leaves the final wait blocked: a deadlock.

// Nested = false: the producer/waiter scenario above. Nested = true: a child adds a child (as
// run() from inside a group's own task): the producer adds child 0 and then lets the owner wait
// once; child 0 adds child 1 before it finishes, so the wait must cover both.
template <class Policy, bool Nested>
struct group_count_model : rl::test_suite<group_count_model<Policy, Nested>, 4> {
    static constexpr int children = 2;
    using flag = model_flag<Policy>;
    using count = crew::detail::basic_group_count<Policy, flag>;
    aligned_box<count> group;
    flag waits[2];          // the owner's completion for each wait()
    flag handed[children];  // -> runner: "your child was added"
    flag produced;          // producer -> owner: the join
    rl::var<int> work[children];
    rl::var<int> group_gone;

    group_count_model() {
        group_gone(RL_INFO) = 0;
        for (int i = 0; i < children; ++i) work[i](RL_INFO) = 0;
        for (flag& w : waits) w.group_gone = &group_gone;
    }

    void wait(flag& c) {
        switch (group->begin_wait(c)) {
            case count::wait_status::done: return;
            case count::wait_status::busy: RL_ASSERT(false); return;  // one waiter only
            case count::wait_status::must_wait: break;
        }
        c.wait();
        group->end_wait();
    }

    void owner() {
        if constexpr (!Nested) wait(waits[0]);  // concurrent with the producer
        produced.wait();
        wait(waits[1]);
        for (int i = 0; i < children; ++i) RL_ASSERT(work[i](RL_INFO) == 1);  // and race-checked
        RL_ASSERT(group->unfinished() == 0);
        group_gone(RL_INFO) = 1;  // "destroyed": no child may touch it from here on
    }

    void producer() {
        for (int i = 0; i < (Nested ? 1 : children); ++i) {
            group->add();
            handed[i].set();
        }
        produced.set();
    }

    void runner(int i) {
        handed[i].wait();
        if (Nested && i == 0) {  // child 0 runs child 1 before it finishes
            group->add();
            handed[1].set();
        }
        work[i](RL_INFO) = 1;
        group->finish();
    }

    void thread(unsigned index) {
        if (index == 0)
            owner();
        else if (index == 1)
            producer();
        else
            runner(static_cast<int>(index) - 2);
    }
};

// ---------------------------------------------------------------------------------------------
// The drain (group_count.hpp "The drain", task_group::wait() on a worker): thread 1 is a worker
// task that adds three children, hands child 2 to a thief (thread 2), tells the owner (thread 0)
// that it added them, then drains: it runs children 0 and 1 itself (no finish() each) and folds
// them with one finish(2). The owner waits from another thread meanwhile. Checked: its wait
// returns only after all three children's work (race-checked rl::vars), so the fold must
// publish the drained children's effects (a relaxed fold is the bug model_teeth.cpp injects), and
// hand the count to the owner when it brings it to zero.
template <class Policy>
struct group_drain_model : rl::test_suite<group_drain_model<Policy>, 3> {
    static constexpr int children = 3;
    using flag = model_flag<Policy>;
    using count = crew::detail::basic_group_count<Policy, flag>;
    aligned_box<count> group;
    flag done;     // the owner's completion
    flag handed;   // -> thief: child 2 was added
    flag added;    // worker -> owner: every run() happened (the owner waits after this)
    rl::var<int> work[children];
    rl::var<int> group_gone;

    group_drain_model() {
        group_gone(RL_INFO) = 0;
        for (int i = 0; i < children; ++i) work[i](RL_INFO) = 0;
        done.group_gone = &group_gone;
    }

    void owner() {
        added.wait();
        switch (group->begin_wait(done)) {
            case count::wait_status::done: break;
            case count::wait_status::busy: RL_ASSERT(false); return;
            case count::wait_status::must_wait:
                done.wait();
                group->end_wait();
                break;
        }
        for (int i = 0; i < children; ++i) RL_ASSERT(work[i](RL_INFO) == 1);  // and race-checked
        RL_ASSERT(group->unfinished() == 0);
        group_gone(RL_INFO) = 1;
    }

    void worker() {
        for (int i = 0; i < children; ++i) group->add();
        handed.set();
        added.set();
        std::uint64_t drained = 0;  // the drain frame
        for (int i = 0; i < 2; ++i) {
            work[i](RL_INFO) = 1;
            ++drained;
        }
        group->finish(drained);  // the fold; the group may be gone after it
    }

    void thief() {
        handed.wait();
        work[2](RL_INFO) = 1;
        group->finish();
    }

    void thread(unsigned index) {
        if (index == 0)
            owner();
        else if (index == 1)
            worker();
        else
            thief();
    }
};

}  // namespace crew_model
