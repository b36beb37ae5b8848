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

namespace crew_model {

using crew::detail::chase_lev_deque;
using crew::detail::steal_status;

// ---------------------------------------------------------------------------------------------
// Deque scenarios

struct item {
    rl::var<int> payload;
    int id = 0;
};

constexpr int max_items = 8;
constexpr int payload_of(int id) { return 1000 + id; }

template <class Policy, class Scenario>
struct deque_model : rl::test_suite<deque_model<Policy, Scenario>, 3> {
    aligned_box<chase_lev_deque<item, Policy>> deque{Scenario::capacity};
    item items[max_items];
    int taken[max_items] = {};
    int pushed = 0;

    deque_model() {
        for (int i = 0; i < max_items; ++i) items[i].id = i;
    }

    // Owner: publish the next id.
    void push() {
        RL_ASSERT(pushed < max_items);
        item& it = items[pushed++];
        it.payload(RL_INFO) = payload_of(it.id);
        deque->push(&it);
    }
    // Owner: pop and take.
    void pop() {
        if (item* it = deque->pop()) take(it);
    }
    // Thief: one steal attempt.
    void steal() {
        crew::detail::steal_result<item> r = deque->steal();
        if (r.status == steal_status::success) {
            RL_ASSERT(r.item != nullptr);
            take(r.item);
        } else {
            RL_ASSERT(r.item == nullptr);
        }
    }
    void take(item* it) {
        RL_ASSERT(it != nullptr);
        if (it == nullptr) return;
        RL_ASSERT(it->payload(RL_INFO) == payload_of(it->id));  // and Relacy checks the access races
        RL_ASSERT(taken[it->id] == 0);                           // no id twice
        ++taken[it->id];
    }

    void thread(unsigned index) {
        if (index == 0)
            Scenario::owner(*this);
        else
            Scenario::thief(*this);
    }

    void after() {
        while (item* it = deque->pop()) take(it);
        for (int i = 0; i < pushed; ++i) RL_ASSERT(taken[i] == 1);  // no id lost
        RL_ASSERT(deque->size_hint() == 0);
    }
};

// push/pop/steal mixes; with capacity 2 the fourth live item grows the buffer.
template <int Capacity>
struct mix {
    static constexpr int capacity = Capacity;
    template <class M>
    static void owner(M& m) {
        m.push();
        m.push();
        m.pop();
        m.push();
        m.push();
        m.pop();
        m.push();
        m.pop();
        m.pop();
    }
    template <class M>
    static void thief(M& m) {
        m.steal();
        m.steal();
    }
};

// Growth while thieves steal: five pushes from capacity 2 grow it twice (2 -> 4 -> 8).
template <int Capacity>
struct growth {
    static constexpr int capacity = Capacity;
    template <class M>
    static void owner(M& m) {
        for (int i = 0; i < 5; ++i) m.push();
        m.pop();
    }
    template <class M>
    static void thief(M& m) {
        m.steal();
        m.steal();
    }
};

// The last items raced by the owner's pop and two thieves.
template <int Capacity>
struct last_item {
    static constexpr int capacity = Capacity;
    template <class M>
    static void owner(M& m) {
        m.push();
        m.push();
        m.pop();
        m.pop();
        m.push();
        m.pop();
    }
    template <class M>
    static void thief(M& m) {
        m.steal();
        m.steal();
    }
};

// ---------------------------------------------------------------------------------------------
// Sleep/wake model: thread 0 submits two tasks through an injector (push, then notify_one, as
// registry::inject does); threads 1 and 2 run a small copy of worker::run_loop / idle_cold /
// park_cold (find work, search under the half rule, announce, re-check, park). The task that
// completes the last id sets `stop` and wakes everyone (shutdown). A lost wakeup leaves a worker
// asleep with a task queued and nothing left to wake it: Relacy reports the deadlock.

struct job {
    job* next = nullptr;
    int id = 0;
};

// The worker loop both sleep/wake models run: a small copy of worker::run_loop / idle_cold /
// park_cold (find work; a searcher that finds work and was the last one wakes another when more
// work is in sight; otherwise search under the half rule, announce, re-check, park).
template <class Policy, class Find, class Run, class Visible>
void model_worker_loop(crew::detail::basic_parking<Policy>& lot, model_atomic<bool>& stop, Find find_task,
                       Run run, Visible work_visible) {
    bool searching = false;
    for (;;) {
        if (job* j = find_task()) {
            if (searching) {
                searching = false;
                if (lot.end_search() && work_visible()) lot.notify_one();
            }
            run(j);
            continue;
        }
        if (stop.load(std::memory_order::acquire)) break;
        if (!searching) searching = lot.try_begin_search();
        if (searching) {  // the spin phase found nothing: stop searching, go to sleep
            searching = false;
            lot.end_search();
        }
        std::uint32_t key = lot.prepare_park();
        if constexpr (Policy::injected_bug != crew::detail::bug::park_without_recheck) {
            if (stop.load(std::memory_order::acquire) || work_visible()) {
                searching = lot.cancel_park();
                continue;
            }
        }
        searching = lot.park(key);
    }
    if (searching) lot.end_search();
}

template <class Policy>
struct parking_model : rl::test_suite<parking_model<Policy>, 3> {
    static constexpr int jobs = 2;
    aligned_box<crew::detail::basic_injector<job, Policy>> injector;
    aligned_box<crew::detail::basic_parking<Policy>> lot{2u};
    model_atomic<int> done{0};
    model_atomic<bool> stop{false};
    job items[jobs];
    int runs[jobs] = {};

    parking_model() {
        for (int i = 0; i < jobs; ++i) items[i].id = i;
    }

    void run(job* j) {
        RL_ASSERT(runs[j->id] == 0);
        ++runs[j->id];
        if (done.fetch_add(1, std::memory_order::acq_rel) + 1 == jobs) {
            stop.store(true, std::memory_order::release);
            lot->notify_all();
        }
    }

    bool work_visible() { return !injector->empty_hint(); }

    void worker() {
        model_worker_loop<Policy>(*lot, stop, [&] { return injector->pop(); }, [&](job* j) { run(j); },
                                  [&] { return work_visible(); });
    }

    void thread(unsigned index) {
        if (index == 0) {
            for (int i = 0; i < jobs; ++i) {
                RL_ASSERT(injector->push(&items[i]));
                lot->notify_one();
            }
        } else {
            worker();
        }
    }

    void after() {
        for (int i = 0; i < jobs; ++i) RL_ASSERT(runs[i] == 1);
        RL_ASSERT(lot->searching() == 0);
        RL_ASSERT(lot->sleepers() == 0);
    }
};


// The same loop over per-worker deques as well (the whole of worker::find_task): the submitter
// injects one task; whichever worker runs it pushes a child onto its own deque with the hinted
// (fence-free) notify, as worker::push does; the child is popped by its owner or stolen (a lost
// steal retries). work_visible() looks at the injector and both deques, as the real re-check does.
template <class Policy>
struct parking_deque_model : rl::test_suite<parking_deque_model<Policy>, 3> {
    static constexpr int jobs = 2;
    using deque = chase_lev_deque<job, Policy>;
    aligned_box<crew::detail::basic_injector<job, Policy>> injector;
    aligned_box<crew::detail::basic_parking<Policy>> lot{2u};
    aligned_box<deque> deques[2] = {aligned_box<deque>(2), aligned_box<deque>(2)};
    model_atomic<int> done{0};
    model_atomic<bool> stop{false};
    job items[jobs];
    int runs[jobs] = {};

    parking_deque_model() {
        for (int i = 0; i < jobs; ++i) items[i].id = i;
    }

    void run(job* j, int self) {
        RL_ASSERT(runs[j->id] == 0);
        ++runs[j->id];
        if (j->id == 0) {  // the parent spawns the child onto its own deque
            deques[self]->push(&items[1]);
            if (lot->wake_wanted()) lot->notify_one_hinted();
        }
        if (done.fetch_add(1, std::memory_order::acq_rel) + 1 == jobs) {
            stop.store(true, std::memory_order::release);
            lot->notify_all();
        }
    }

    job* find_task(int self) {
        if (job* j = deques[self]->pop()) return j;
        for (;;) {  // steal_round: sweep again while a steal lost a race
            crew::detail::steal_result<job> r = deques[1 - self]->steal();
            if (r.status == steal_status::success) return r.item;
            if (r.status == steal_status::empty) break;
        }
        return injector->pop();
    }

    bool work_visible() {
        return !injector->empty_hint() || deques[0]->size_hint() > 0 || deques[1]->size_hint() > 0;
    }

    void worker(int self) {
        model_worker_loop<Policy>(*lot, stop, [&] { return find_task(self); }, [&](job* j) { run(j, self); },
                                  [&] { return work_visible(); });
    }

    void thread(unsigned index) {
        if (index == 0) {
            RL_ASSERT(injector->push(&items[0]));
            lot->notify_one();
        } else {
            worker(static_cast<int>(index) - 1);
        }
    }

    void after() {
        for (int i = 0; i < jobs; ++i) RL_ASSERT(runs[i] == 1);
        RL_ASSERT(lot->searching() == 0);
        RL_ASSERT(lot->sleepers() == 0);
    }
};

// A futex-style flag: the model's stand-in for detail::completion (one per wait, as crew makes a
// fresh completion per wait()).
template <class Policy>
struct model_flag {
    model_atomic<std::uint32_t> word{0};
    rl::var<int>* group_gone = nullptr;  // set() may only run while the group is alive

    void set() {
        if (group_gone != nullptr) RL_ASSERT((*group_gone)(RL_INFO) == 0);
        word.store(1, std::memory_order::release);
        Policy::wake_all(word);
    }
    void wait() {
        while (word.load(std::memory_order::acquire) == 0) Policy::wait(word, 0);
    }
};

// The coroutine scheduler's LIFO slot in the sleep/wake protocol (src/worker.cpp wake_async,
// find_async_local, steal_lifo_cold, work_visible): the submitter injects job 0; the worker that
// runs it puts job 1 into its own LIFO slot (an exchange, release) and notifies with the full
// notify_one, then BLOCKS until job 1 has run (a task running for 50 ms, in the model for ever):
// only the other worker can run job 1, by taking the slot (an exchange, acquire), so it must not
// sleep through the put. work_visible() looks at the injector and both LIFO slots. (The model
// lets a thief take a LIFO slot on every pass; the real worker waits for its last pass, which
// changes when a slot is taken, not whether the re-check sees it.) A lost wake-up leaves the
// runner blocked and the other worker asleep: Relacy reports the deadlock. Job 1's payload is
// written before the put and read by its runner: the exchange's publication is race-checked.
template <class Policy>
struct parking_lifo_model : rl::test_suite<parking_lifo_model<Policy>, 3> {
    static constexpr int jobs = 2;
    aligned_box<crew::detail::basic_injector<job, Policy>> injector;
    aligned_box<crew::detail::basic_parking<Policy>> lot{2u};
    model_atomic<job*> lifo[2];
    model_atomic<int> done{0};
    model_atomic<bool> stop{false};
    model_flag<Policy> child_done;
    rl::var<int> payload;
    job items[jobs];
    int runs[jobs] = {};

    parking_lifo_model() {
        for (int i = 0; i < jobs; ++i) items[i].id = i;
        lifo[0].store(nullptr, std::memory_order::relaxed);
        lifo[1].store(nullptr, std::memory_order::relaxed);
    }

    void run(job* j, int self) {
        RL_ASSERT(runs[j->id] == 0);
        ++runs[j->id];
        if (j->id == 0) {
            payload(RL_INFO) = 42;
            RL_ASSERT(lifo[self].exchange(&items[1], std::memory_order::acq_rel) == nullptr);
            lot->notify_one();
            child_done.wait();  // the long run: only the other worker can take job 1
        } else {
            RL_ASSERT(payload(RL_INFO) == 42);
            child_done.set();
        }
        if (done.fetch_add(1, std::memory_order::acq_rel) + 1 == jobs) {
            stop.store(true, std::memory_order::release);
            lot->notify_all();
        }
    }

    job* take_lifo(int w) {
        if (lifo[w].load(std::memory_order::relaxed) == nullptr) return nullptr;
        return lifo[w].exchange(nullptr, std::memory_order::acquire);
    }

    job* find_task(int self) {
        if (job* j = take_lifo(self)) return j;
        if (job* j = take_lifo(1 - self)) return j;  // the steal round's last pass
        return injector->pop();
    }

    bool work_visible() {
        if (!injector->empty_hint()) return true;
        if constexpr (Policy::injected_bug == crew::detail::bug::lifo_hidden_from_recheck) return false;
        return lifo[0].load(std::memory_order::relaxed) != nullptr || lifo[1].load(std::memory_order::relaxed) != nullptr;
    }

    void thread(unsigned index) {
        if (index == 0) {
            RL_ASSERT(injector->push(&items[0]));
            lot->notify_one();
        } else {
            const int self = static_cast<int>(index) - 1;
            model_worker_loop<Policy>(*lot, stop, [&] { return find_task(self); }, [&](job* j) { run(j, self); },
                                      [&] { return work_visible(); });
        }
    }

    void after() {
        for (int i = 0; i < jobs; ++i) RL_ASSERT(runs[i] == 1);
        RL_ASSERT(lot->searching() == 0);
        RL_ASSERT(lot->sleepers() == 0);
    }
};

// ---------------------------------------------------------------------------------------------
// The frame cache's remote-free list (crew/detail/frame_cache.hpp basic_remote_list): threads 0
// and 1 free two frames each onto the owner's list (Treiber push, release); thread 2, the owner,
// takes everything twice while they push (exchange, acquire) and after() takes the rest. Every
// frame must come back exactly once, and its contents (an rl::var written before the push, as a
// frame's last use) must be visible to the owner without a race.
struct remote_node {
    remote_node* next = nullptr;
    rl::var<int> payload;
    int id = 0;
};

template <class Policy>
struct remote_list_model : rl::test_suite<remote_list_model<Policy>, 3> {
    static constexpr int nodes_count = 4;
    aligned_box<crew::detail::basic_remote_list<remote_node, Policy>> list;
    remote_node nodes[nodes_count];
    int taken[nodes_count] = {};

    remote_list_model() {
        for (int i = 0; i < nodes_count; ++i) nodes[i].id = i;
    }

    void take_all() {
        for (remote_node* n = list->take_all(); n != nullptr;) {
            remote_node* next = n->next;
            RL_ASSERT(n->payload(RL_INFO) == 100 + n->id);
            RL_ASSERT(taken[n->id] == 0);
            ++taken[n->id];
            n = next;
        }
    }

    void thread(unsigned index) {
        if (index < 2) {
            for (int k = 0; k < 2; ++k) {
                remote_node& n = nodes[2 * index + static_cast<unsigned>(k)];
                n.payload(RL_INFO) = 100 + n.id;
                list->push(&n);
            }
        } else {
            take_all();
            take_all();
        }
    }

    void after() {
        take_all();
        for (int i = 0; i < nodes_count; ++i) RL_ASSERT(taken[i] == 1);
    }
};

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

// ---------------------------------------------------------------------------------------------
// Coroutine run queue (crew/detail/async_ring.hpp) at capacity 4: thread 0 owns ring 0 (push with
// overflow to a sink, pop); threads 1 and 2 own rings 1 and 2 and steal from ring 0 into them.
// Each id carries an rl::var payload written before its push and read by whoever takes it, so the
// publication is race-checked; every id must be taken exactly once, counting the sink and what
// after() drains from the three rings. The scenarios start the indices at `first` (2^32 - 2 for
// the wrap scenarios, so the 32-bit indices wrap within the run).

template <class Policy, class Scenario>
struct ring_model : rl::test_suite<ring_model<Policy, Scenario>, 3> {
    using ring = crew::detail::async_ring<item, Policy, 4>;
    static constexpr int max_ring_items = 12;
    aligned_box<ring> rings[3] = {aligned_box<ring>(Scenario::first), aligned_box<ring>(Scenario::first),
                                  aligned_box<ring>(Scenario::first)};
    item items[max_ring_items];
    int taken[max_ring_items] = {};
    static constexpr int id_begin[3] = {0, 6, 9};  // ids 0..5: the owner's; 6..8, 9..11: the thieves'
    static constexpr int id_end[3] = {6, 9, 12};
    int next_id[3] = {0, 6, 9};
    model_atomic<bool> published{false};

    ring_model() {
        for (int i = 0; i < max_ring_items; ++i) items[i].id = i;
    }

    // Ring `self`'s owner pushes its next id; an overflow "takes" what the sink receives.
    void push(int self) {
        RL_ASSERT(next_id[self] < id_end[self]);
        item& it = items[next_id[self]++];
        it.payload(RL_INFO) = payload_of(it.id);
        rings[self]->push_back(&it, [&](item** batch, std::size_t n) {
            RL_ASSERT(n == 1 || n == 3);  // the single task, or half of 4 plus the task: one call
            for (std::size_t i = 0; i < n; ++i) take(batch[i]);
        });
    }
    void pop(int self) {
        if (item* it = rings[self]->pop()) take(it);
    }
    // Ring `self`'s owner steals from ring 0. Returns the status.
    crew::detail::ring_steal steal(int self) {
        crew::detail::ring_steal_result<item> r = rings[0]->steal_into(*rings[self]);
        if (r.status == crew::detail::ring_steal::success) {
            RL_ASSERT(r.count >= 1 && r.count <= 2);
            take(r.task);
        } else {
            RL_ASSERT(r.task == nullptr && r.count == 0);
        }
        return r.status;
    }
    // Steal until ring 0 reports empty (after the owner published everything): "empty" must mean
    // that nothing is left there (seed 002: a lost race reported as nothing strands tasks).
    void drain(int self) {
        while (!published.load(std::memory_order::acquire)) rl::yield(1, RL_INFO);
        for (;;) {
            crew::detail::ring_steal st = steal(self);
            while (item* it = rings[self]->pop()) take(it);
            if (st == crew::detail::ring_steal::empty) return;
            if (st == crew::detail::ring_steal::busy) rl::yield(1, RL_INFO);
        }
    }
    void take(item* it) {
        RL_ASSERT(it != nullptr);
        if (it == nullptr) return;
        RL_ASSERT(it->payload(RL_INFO) == payload_of(it->id));
        RL_ASSERT(taken[it->id] == 0);
        ++taken[it->id];
    }

    void thread(unsigned index) {
        if (index == 0)
            Scenario::owner(*this);
        else
            Scenario::thief(*this, static_cast<int>(index));
    }

    void after() {
        if constexpr (Scenario::drained_by_thieves) RL_ASSERT(rings[0]->size_hint() == 0);
        for (int r = 0; r < 3; ++r)
            while (item* it = rings[r]->pop()) take(it);
        for (int r = 0; r < 3; ++r)
            for (int i = id_begin[r]; i < next_id[r]; ++i) RL_ASSERT(taken[i] == 1);  // no id lost
    }
};

// Push past capacity while two thieves steal: overflow of the newest half, or of the single task
// during a steal, against claims and releases.
template <std::uint32_t First>
struct ring_mix {
    static constexpr std::uint32_t first = First;
    static constexpr bool drained_by_thieves = false;
    template <class M>
    static void owner(M& m) {
        for (int i = 0; i < 5; ++i) m.push(0);
        m.pop(0);
        m.push(0);
        m.pop(0);
    }
    template <class M>
    static void thief(M& m, int self) {
        m.steal(self);
        m.pop(self);
        m.steal(self);
    }
};

// Wrap: the indices start 2 below 2^32; the owner pops before pushing across the wrap.
struct ring_wrap {
    static constexpr std::uint32_t first = 0xfffffffeu;
    static constexpr bool drained_by_thieves = false;
    template <class M>
    static void owner(M& m) {
        m.push(0);
        m.push(0);
        m.pop(0);
        m.push(0);
        m.push(0);
        m.pop(0);
        m.push(0);
    }
    template <class M>
    static void thief(M& m, int self) {
        m.steal(self);
        m.steal(self);
    }
};

// Thieves with work of their own: each pushes three tasks into its own ring first, so it must
// not steal (no room) until it popped some.
struct ring_thief_room {
    static constexpr std::uint32_t first = 0;
    static constexpr bool drained_by_thieves = false;
    template <class M>
    static void owner(M& m) {
        for (int i = 0; i < 4; ++i) m.push(0);
        m.pop(0);
    }
    template <class M>
    static void thief(M& m, int self) {
        for (int i = 0; i < 3; ++i) m.push(self);
        m.steal(self);
        m.pop(self);
        m.steal(self);
    }
};

// The owner publishes four tasks and pops one; the thieves steal until ring 0 says empty.
struct ring_drain {
    static constexpr std::uint32_t first = 0xfffffffdu;
    static constexpr bool drained_by_thieves = true;
    template <class M>
    static void owner(M& m) {
        for (int i = 0; i < 4; ++i) m.push(0);
        m.published.store(true, std::memory_order::release);
        m.pop(0);
    }
    template <class M>
    static void thief(M& m, int self) {
        m.drain(self);
    }
};

// ---------------------------------------------------------------------------------------------
// Task state word (crew/detail/task_state.hpp): one mock task, born queued. Threads 0 and 1 are
// workers that run its queue entries (a locked count: the only task); thread 1 first sends the
// message the task waits for (msg = 1, then a by-value wake). Thread 2 holds the join handle
// (Cancel = false: waits through the waker slot or reads the result, then drops it) or cancels
// the task first (Cancel = true) and then drops the handle. A run writes the frame (an rl::var:
// two concurrent runs are a data race) and completes when it sees the message; after() runs the
// entries left. Checked: the task completes exactly once (a lost wake leaves it unfinished), the
// result is destroyed exactly once, the frame is freed exactly once and never touched after.

template <class Policy, bool Cancel>
struct task_state_model : rl::test_suite<task_state_model<Policy, Cancel>, 3> {
    using state = crew::detail::task_state<Policy>;
    aligned_box<state> st{std::uint64_t{Cancel ? 4u : 3u}};  // entry, handle, sender (, canceller)
    model_mutex queue_lock;
    int entries = 1;  // guarded by queue_lock
    rl::var<int> frame;
    rl::var<int> result;
    model_atomic<int> msg{0};
    model_atomic<int> joined{0};
    int completed = 0, results_dropped = 0, freed = 0;  // ghosts (Relacy runs one fiber at a time)

    task_state_model() {
        frame(RL_INFO) = 0;
        result(RL_INFO) = 0;
    }

    void alive() { RL_ASSERT(freed == 0); }
    void free_frame() {
        RL_ASSERT(freed == 0);
        ++freed;
    }
    void submit() {
        queue_lock.lock();
        ++entries;
        queue_lock.unlock();
    }
    bool take_entry() {
        queue_lock.lock();
        bool got = entries > 0;
        if (got) --entries;
        queue_lock.unlock();
        return got;
    }

    void run() {
        alive();
        switch (st->transition_to_running()) {
            case crew::detail::run_result::failed: return;
            case crew::detail::run_result::dealloc: free_frame(); return;
            case crew::detail::run_result::cancelled: complete(); return;
            case crew::detail::run_result::success: break;
        }
        frame(RL_INFO) = frame(RL_INFO) + 1;  // never on two threads at once
        if (msg.load(std::memory_order::acquire) == 1) return complete();
        switch (st->transition_to_idle()) {
            case crew::detail::idle_result::ok: return;
            case crew::detail::idle_result::ok_notified: submit(); return;
            case crew::detail::idle_result::ok_dealloc: free_frame(); return;
            case crew::detail::idle_result::cancelled: complete(); return;
        }
    }
    void complete() {
        result(RL_INFO) = 1;
        std::uint64_t snap = st->transition_to_complete();
        ++completed;
        if ((snap & state::join_interest) == 0) {
            drop_result();
        } else if ((snap & state::join_waker) != 0) {
            joined.store(1, std::memory_order::release);
            st->unset_waker_after_complete();
        }
        if (st->transition_to_terminal(1)) free_frame();
    }
    void drop_result() {
        RL_ASSERT(result(RL_INFO) == 1);
        ++results_dropped;
    }
    void wake_by_val() {
        alive();
        crew::detail::notify_result r = st->transition_to_notified_by_val();
        if (r == crew::detail::notify_result::submit) submit();
        if (r == crew::detail::notify_result::dealloc) free_frame();
    }
    void drop_handle() {
        alive();
        crew::detail::join_drop d = st->unset_join_interested();
        if (d.drop_output) drop_result();
        if (st->ref_dec()) free_frame();
    }
    void work(int attempts) {
        for (int i = 0; i < attempts; ++i)
            if (take_entry()) run();
    }

    void thread(unsigned index) {
        if (index == 0) {
            work(3);
        } else if (index == 1) {
            msg.store(1, std::memory_order::release);
            wake_by_val();
            work(2);
        } else if (Cancel) {
            alive();
            if (st->cancel() == crew::detail::notify_result::submit) submit();
            if (st->ref_dec()) free_frame();  // the canceller's reference
            drop_handle();
        } else {
            alive();
            if (st->set_join_waker()) {
                (void)joined.load(std::memory_order::acquire);  // may or may not be woken yet
            } else {
                RL_ASSERT(result(RL_INFO) == 1);  // COMPLETE seen (acquire): the result is visible
            }
            drop_handle();
        }
    }

    void after() {
        while (take_entry()) run();
        RL_ASSERT(completed == 1);
        RL_ASSERT(results_dropped == 1);
        RL_ASSERT(freed == 1);
    }
};

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

// The correct code: every scenario (model_check.cpp).
inline constexpr int scenario_count = 21;  // + model_fork.hpp's
extern const scenario correct_scenarios[scenario_count];

// A bug and the scenarios that must catch it (model_teeth.cpp).
struct bug_entry {
    const char* name;
    const scenario* scenarios;
    int count;
};
inline constexpr int bug_count = 19;  // + model_fork.hpp's
extern const bug_entry bugs[bug_count];

}  // namespace crew_model
