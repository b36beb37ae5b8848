// tests/reliability/model_driver.hpp -- the sleep/wake model with a worker sleeping in the I/O
// driver (crew/detail/io_driver.hpp + parking.hpp's driver sleeper), included after
// model_scenarios.hpp by model_check.cpp and model_teeth.cpp.
//
// Thread 0 submits two tasks through an injector (push, then notify_one, as registry::inject
// does); threads 1 and 2 run the worker loop of model_worker_loop, except that a worker about to
// park first tries the driver's try-lock: the winner announces itself as the driver sleeper
// (prepare_park_driver), re-checks, and sleeps on the model eventfd (a counter and a wait set)
// instead of the futex; notify's driver wake adds to the counter (io_driver::unpark). A lost
// wake-up leaves a worker asleep (in the driver or on the futex) with a task queued: Relacy
// reports the deadlock. Teeth: bug::no_driver_wake (a notify that finds only the driver sleeper
// bumps the futex instead) and bug::driver_not_counted (the driver sleeper is not marked).
#pragma once

#include "reliability/model_scenarios.hpp"

namespace crew_model {

template <class Policy>
struct parking_driver_model : rl::test_suite<parking_driver_model<Policy>, 3> {
    static constexpr int jobs = 2;
    aligned_box<crew::detail::basic_injector<job, Policy>> injector;
    aligned_box<crew::detail::basic_parking<Policy>> lot{2u};
    model_atomic<int> done{0};
    model_atomic<bool> stop{false};
    model_atomic<bool> driver_held{false};
    typename Policy::template atomic<std::uint32_t> eventfd{0};
    job items[jobs];
    int runs[jobs] = {};

    parking_driver_model() {
        for (int i = 0; i < jobs; ++i) items[i].id = i;
        lot->set_driver_wake(&unpark, this);
    }

    static void unpark(void* self) noexcept {
        auto* m = static_cast<parking_driver_model*>(self);
        m->eventfd.fetch_add(1, std::memory_order_release);
        Policy::wake_all(m->eventfd);
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

    // worker::park_in_driver_cold: false when the driver is taken (park on the futex then).
    bool park_in_driver(bool& searching) {
        bool expected = false;
        if (!driver_held.compare_exchange_strong(expected, true, std::memory_order::seq_cst, std::memory_order::seq_cst)) return false;
        lot->prepare_park_driver();
        if (stop.load(std::memory_order::acquire) || work_visible()) {
            searching = lot->cancel_park_driver();
        } else {
            // epoll_wait on the eventfd: sleep while the counter is 0, then drain it.
            while (eventfd.load(std::memory_order_acquire) == 0) Policy::wait(eventfd, 0);
            eventfd.store(0, std::memory_order_relaxed);
            searching = lot->cancel_park_driver();
        }
        driver_held.store(false, std::memory_order::seq_cst);
        return true;
    }

    void worker() {
        bool searching = false;
        for (;;) {
            if (job* j = injector->pop()) {
                if (searching) {
                    searching = false;
                    if (lot->end_search() && work_visible()) lot->notify_one();
                }
                run(j);
                continue;
            }
            if (stop.load(std::memory_order::acquire)) break;
            if (!searching) searching = lot->try_begin_search();
            if (searching) {
                searching = false;
                lot->end_search();
            }
            if (park_in_driver(searching)) continue;
            std::uint32_t key = lot->prepare_park();
            if (stop.load(std::memory_order::acquire) || work_visible() ||
                !driver_held.load(std::memory_order::seq_cst)) {  // io_driver::want(): it was let go
                searching = lot->cancel_park();
                continue;
            }
            searching = lot->park(key);
        }
        if (searching) lot->end_search();
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

template <bug Bug>
constexpr scenario parking_driver_scenario(const char* name) {
    return {name, &simulate<parking_driver_model<relacy_atomics<Bug>>>};
}

// Registered beside correct_scenarios / bugs (model_check.cpp walks both lists).
inline constexpr scenario driver_scenarios[] = {parking_driver_scenario<bug::none>("parking_with_driver")};
template <bug Bug>
constexpr scenario driver_teeth[] = {parking_driver_scenario<Bug>("parking_with_driver")};
inline constexpr bug_entry driver_bugs[] = {
    {"no_driver_wake", driver_teeth<bug::no_driver_wake>, 1},
    {"driver_not_counted", driver_teeth<bug::driver_not_counted>, 1},
};

}  // namespace crew_model
