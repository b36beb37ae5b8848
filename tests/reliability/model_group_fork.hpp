// tests/reliability/model_group_fork.hpp -- the Relacy scenario for private task_group children
// (crew/detail/group_fork.hpp): children recorded in the worker's fork array under a holder
// token, a thief taking promoted ones, a join whose take-back finds a child above its job, a
// task boundary that leaves a child behind, and a waiter on another thread.
//
// Thread 0, the owner worker (fork_stack + Chase-Lev deque + the group's count, production code):
//   task 1: run(C0)                      token taken, C0 recorded
//           join(J, f = run(C1))         C1 lies above J: take_back(J) publishes all and pops
//                                        (C1 first, counted, finished; then J or nothing: stolen)
//           run(C2)                      recorded privately (the token is still held)
//           drain: take back C2, then C0 (inline when private, else through the deque: folded)
//           drop the token, folding the promoted children run here
//   task 2: run(C3), "added" (every run() happened), then the task ends without a wait: the
//           boundary publishes C3 and drops the token; the worker loop pops and runs what is left.
//   Each fork answers a thief's request by promoting the oldest private entry (counted first when
//   it is a child).
// Thread 1, the thief: steals; runs what it gets (a child finishes on the count, J sets its flag);
//   on "empty" it requests.
// Thread 2, the waiter: after "added", waits for the group; then reads every child's work.
// Checked: the wait returns only after all four children ran (race-checked rl::vars, read after
// the wait), every entry runs exactly once, payloads written before the fork are visible to the
// runner, the count ends at zero, nothing is left private or queued, and no child touches the
// group after the waiter "destroyed" it (model_flag's group_gone).
#pragma once

// Before relacy.hpp (through model_scenarios.hpp) redefines `new` and friends for user code.
#include "crew/detail/fork_stack.hpp"
#include "crew/detail/group_fork.hpp"
#include "reliability/model_scenarios.hpp"

namespace crew_model {

template <class Policy>
struct group_fork_model : rl::test_suite<group_fork_model<Policy>, 3> {
    struct entry {
        rl::var<int> payload;
        int id = 0;
        bool child = false;
    };
    static constexpr int children = 4;  // C0..C3; entry 4 is the join's job J
    static constexpr int job = children;
    using flag = model_flag<Policy>;
    using count = crew::detail::basic_group_count<Policy, flag>;

    aligned_box<chase_lev_deque<entry, Policy>> deque{2};
    aligned_box<crew::detail::fork_stack<entry, Policy, true>> forks{2};
    aligned_box<count> group;
    entry entries[children + 1];
    rl::var<int> work[children];
    int runs[children + 1] = {};
    flag job_done;  // J's completion (set by whoever ran it)
    flag added;     // owner -> waiter: every run() happened
    flag waited;    // the waiter's completion
    rl::var<int> group_gone;

    group_fork_model() {
        for (int i = 0; i <= children; ++i) {
            entries[i].id = i;
            entries[i].child = i < children;
        }
        for (int i = 0; i < children; ++i) work[i](RL_INFO) = 0;
        group_gone(RL_INFO) = 0;
        waited.group_gone = &group_gone;
    }

    auto count_child() {
        return [this](entry* e) noexcept {
            if (e->child) group->count_promoted();
        };
    }

    // Runs an entry; returns whether it was a counted child that now needs its finish.
    void run(entry* e) {
        RL_ASSERT(e->payload(RL_INFO) == 1000 + e->id);
        RL_ASSERT(runs[e->id] == 0);  // nothing twice
        ++runs[e->id];
        if (e->child) work[e->id](RL_INFO) = 1;
    }
    void run_counted(entry* e) {  // a promoted entry, run by whoever took it
        run(e);
        if (e->child)
            group->finish();
        else
            job_done.set();
    }

    void record(int id) {  // the owner's fork
        entry& e = entries[id];
        e.payload(RL_INFO) = 1000 + id;
        if (forks->fork(&e)) forks->promote_oldest(*deque, count_child());
    }

    void join() {
        entry* j = &entries[job];
        record(job);
        record(1);  // f: run(C1), left above J
        if (forks->take_back(j, *deque, count_child())) {
            run(j);
            return;
        }
        for (;;) {  // join_take_promoted: what lies above J first
            entry* e = deque->pop();
            if (e == nullptr) {  // a thief took J
                job_done.wait();
                return;
            }
            if (e == j) {
                run(j);
                return;
            }
            run_counted(e);
        }
    }

    // The drain's take-back of child `id`: returns how many promoted children it ran (to fold).
    std::uint64_t drain_one(int id) {
        entry* c = &entries[id];
        if (forks->take_back(c, *deque, count_child())) {
            run(c);  // private: never counted
            return 0;
        }
        std::uint64_t folded = 0;
        while (entry* e = deque->pop()) {
            run(e);
            if (e->child) ++folded;  // counted at promotion: folded with the token
            else job_done.set();
            if (e == c) break;
        }
        return folded;
    }

    void owner() {
        group->hold_token();
        record(0);
        join();
        record(2);
        std::uint64_t folded = drain_one(2);
        folded += drain_one(0);
        group->drop_token(folded);
        // task 2
        const std::int64_t base = forks->open();  // the worker loop notes it before the task
        group->hold_token();
        record(3);
        added.set();
        crew::detail::end_private_children<Policy>(*forks, base, *deque, count_child(), *group, 0);
        while (entry* e = deque->pop()) run_counted(e);  // the worker loop
    }

    void thief() {
        for (int i = 0; i < 3; ++i) {
            crew::detail::steal_result<entry> r = deque->steal();
            if (r.status == steal_status::success)
                run_counted(r.item);
            else if (r.status == steal_status::empty)
                forks->request();
        }
    }

    void waiter() {
        added.wait();
        switch (group->begin_wait(waited)) {
            case count::wait_status::done: break;
            case count::wait_status::busy: RL_ASSERT(false); return;
            case count::wait_status::must_wait:
                waited.wait();
                group->end_wait();
                break;
        }
        for (int i = 0; i < children; ++i) RL_ASSERT(work[i](RL_INFO) == 1);  // and race-checked
        group_gone(RL_INFO) = 1;
    }

    void thread(unsigned index) {
        if (index == 0)
            owner();
        else if (index == 1)
            thief();
        else
            waiter();
    }

    void after() {
        RL_ASSERT(group->unfinished() == 0);
        RL_ASSERT(forks->open() == 0);
        RL_ASSERT(!forks->has_private());
        RL_ASSERT(deque->pop() == nullptr);
        for (int i = 0; i <= children; ++i) RL_ASSERT(runs[i] == 1);  // nothing lost
    }
};

template <bug Bug>
constexpr scenario group_fork_scenario(const char* name) {
    return {name, &simulate<group_fork_model<relacy_atomics<Bug>>>};
}

}  // namespace crew_model
