// tests/reliability/model_parking.hpp -- Relacy scenarios for the sleep/wake protocol (parking.hpp)
// with an injector, deques and LIFO slots: no lost wake-up.
// Part of model_scenarios.hpp (which says what is checked and how a scenario runs).
#pragma once

// Before relacy.hpp (through relacy_policy.hpp) redefines `new` and friends for user code.
#include "crew/detail/frame_cache.hpp"
#include "reliability/relacy_policy.hpp"

namespace crew_model {

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

}  // namespace crew_model
