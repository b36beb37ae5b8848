// tests/reliability/model_async_notify.hpp -- the notify rule of the coroutine scheduler (session 6,
// src/worker.cpp push_async / wake_async / notify_async_running) in the sleep/wake protocol.
// Part of model_check.cpp / model_teeth.cpp (model_scenarios.hpp says what is checked and how).
//
// The rule: a task queued by a task that goes on running (a spawn, a wake from a channel) gets the
// full notify_one (its seq_cst fence pairs with prepare_park's); a task woken by a task whose run
// is over (a completion waking its joiner, async_wake::wake_at_end) gets the hinted notify (no
// fence), because its worker goes straight back to its queues and takes it itself if nobody else
// does. The LIFO put is a plain release store when the slot is empty (only the owner puts).
//
// Scenario: thread 0 injects job 0 (push, notify_one). Threads 1 and 2 run the worker loop of
// model_parking.hpp over the injector and two LIFO slots (a thief may take the other worker's slot,
// as steal_lifo_cold does). Job 0 puts job 1 into its worker's slot with the *running* notify and
// then blocks until job 1 has finished (a run that never ends, in the model: only the other worker
// can take job 1, so it must not sleep through the put). Job 1 puts job 2 into its worker's slot
// with the *run-over* notify and returns (its run ends); job 2 runs on either worker. Checked:
// every job runs exactly once (the puts lose no job: payloads are race-checked rl::vars written
// before the put), no deadlock (Relacy reports a worker asleep beside a blocked job 0), and the
// lot ends with no searcher and no sleeper. Teeth: bug::async_running_hinted_notify gives job 0 the
// hinted notify: the sleeper can miss the put (store-buffer race, no fence on the putter's side)
// and Relacy finds the deadlock -- so the full notify is what makes the running case safe.
#pragma once

// Before relacy.hpp (through relacy_policy.hpp) redefines `new` and friends for user code.
#include "crew/detail/frame_cache.hpp"
#include "reliability/model_parking.hpp"
#include "reliability/model_scenarios.hpp"
#include "reliability/relacy_policy.hpp"

namespace crew_model {

template <class Policy>
struct async_notify_model : rl::test_suite<async_notify_model<Policy>, 3> {
    static constexpr int jobs = 3;
    aligned_box<crew::detail::basic_injector<job, Policy>> injector;
    aligned_box<crew::detail::basic_parking<Policy>> lot{2u};
    model_atomic<job*> lifo[2];
    model_atomic<int> done{0};
    model_atomic<bool> stop{false};
    model_flag<Policy> child_done;
    rl::var<int> payload[jobs];
    job items[jobs];
    int runs[jobs] = {};

    async_notify_model() {
        for (int i = 0; i < jobs; ++i) items[i].id = i;
        lifo[0].store(nullptr, std::memory_order::relaxed);
        lifo[1].store(nullptr, std::memory_order::relaxed);
    }

    // worker::wake_async's put: a plain store into an empty slot, else an exchange (the previous
    // occupant would go to the ring; the model's slots are empty at every put, see run()).
    void put(int self, job* j) {
        payload[j->id](RL_INFO) = 40 + j->id;
        if (lifo[self].load(std::memory_order::relaxed) == nullptr) {
            lifo[self].store(j, std::memory_order::release);
        } else {
            job* previous = lifo[self].exchange(j, std::memory_order::acq_rel);
            RL_ASSERT(previous == nullptr);  // a thief emptied it after our load
        }
    }

    void run(job* j, int self) {
        RL_ASSERT(runs[j->id] == 0);
        ++runs[j->id];
        if (j->id != 0) RL_ASSERT(payload[j->id](RL_INFO) == 40 + j->id);
        if (j->id == 0) {
            put(self, &items[1]);
            if constexpr (Policy::injected_bug == crew::detail::bug::async_running_hinted_notify)
                lot->notify_one_hinted();
            else
                lot->notify_one();  // the running notify: the run goes on
            child_done.wait();      // ... for ever: only the other worker can take job 1
        } else if (j->id == 1) {
            put(self, &items[2]);
            lot->notify_one_hinted();  // the run-over notify: this run ends now
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
        return !injector->empty_hint() || lifo[0].load(std::memory_order::relaxed) != nullptr ||
               lifo[1].load(std::memory_order::relaxed) != nullptr;
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

template <bug Bug>
constexpr scenario async_notify_scenario(const char* name) {
    return {name, &simulate<async_notify_model<relacy_atomics<Bug>>>};
}

// Registered beside correct_scenarios / bugs (model_check.cpp walks these lists too).
inline constexpr scenario async_notify_scenarios[] = {async_notify_scenario<bug::none>("async_notify_rule")};
template <bug Bug>
constexpr scenario async_notify_teeth[] = {async_notify_scenario<Bug>("async_notify_rule")};
inline constexpr bug_entry async_notify_bugs[] = {
    {"async_running_hinted_notify", async_notify_teeth<bug::async_running_hinted_notify>, 1},
};

}  // namespace crew_model
