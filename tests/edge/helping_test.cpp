// What a waiting worker may run: the bound on nested unrelated work, and crew::isolate.
#include <crew/crew.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

// How many probed tasks are nested on the calling thread's stack, and the most ever seen.
thread_local int nested_here = 0;

struct depth_probe {
    std::atomic<int> deepest{0};
    std::atomic<long> started{0};
    std::atomic<long> finished{0};

    void enter() {
        started.fetch_add(1);
        int d = ++nested_here;
        int seen = deepest.load();
        while (d > seen && !deepest.compare_exchange_weak(seen, d)) {
        }
    }
    void leave() {
        --nested_here;
        finished.fetch_add(1);
    }
};

// One task that waits on a job of another pool which runs only once the gate opens.
void gated_wait(crew::pool& other, std::atomic<bool>& gate, depth_probe& probe) {
    probe.enter();
    auto f = other.submit([&gate] {
        while (!gate.load()) std::this_thread::yield();
    });
    f.get();  // a worker waiting here runs other tasks meanwhile, up to the bound
    probe.leave();
}

class helping_suite : public crew_test::pool_test {};

// The finding 6(c): 600,000 tasks that each wait for another pool overflowed the worker
// stack, each waiter nesting the next task on top of itself. Now at most help_depth_limit
// unrelated tasks nest above the first one.
TEST_P(helping_suite, nested_waits_of_injected_tasks_are_bounded) {
    crew_test::watchdog dog(300s);
    const long n = crew_test::scaled(600'000);
    crew::pool other(1);
    std::atomic<bool> gate{false};
    depth_probe probe;
    for (long i = 0; i < n; ++i) pool().spawn([&] { gated_wait(other, gate, probe); });
    // With the bound every worker stops nesting at help_depth_limit + 1 tasks and sleeps.
    const long stuck = std::min<long>(n, crew::help_depth_limit + 1);
    while (probe.started.load() < stuck) std::this_thread::yield();
    gate.store(true);
    while (probe.finished.load() < n) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(probe.started.load(), n);
    EXPECT_GE(probe.deepest.load(), 2) << "a waiting worker should help with other tasks";
    EXPECT_LE(probe.deepest.load(), static_cast<int>(crew::help_depth_limit) + 1);
}

// The finding 6(b): tasks spawned onto the worker's own deque before the wait are not the
// waiter's descendants either; they count toward the bound too.
TEST_P(helping_suite, nested_waits_of_older_local_tasks_are_bounded) {
    crew_test::watchdog dog(120s);
    const long n = 200;
    crew::pool other(1);
    std::atomic<bool> gate{false};
    depth_probe probe;
    pool().run([&] {
        for (long i = 0; i < n; ++i) crew::spawn([&] { gated_wait(other, gate, probe); });
    });
    const long stuck = std::min<long>(n, crew::help_depth_limit + 1);
    while (probe.started.load() < stuck) std::this_thread::yield();
    gate.store(true);
    while (probe.finished.load() < n) std::this_thread::sleep_for(1ms);
    EXPECT_LE(probe.deepest.load(), static_cast<int>(crew::help_depth_limit) + 1);
}

// Beyond the bound a waiter still runs its own descendants, so deep recursion through waits keeps
// working on a single worker (nothing else could run those children).
long group_depth(int depth) {
    if (depth == 0) return 1;
    long a = 0, b = 0;
    crew::task_group g;
    g.run([&] { a = group_depth(depth - 1); });
    g.run([&] { b = depth % 7 == 0 ? group_depth(depth - 1) : 0; });
    g.wait();
    return a + b + 1;
}

TEST_P(helping_suite, recursion_through_waits_deeper_than_the_bound) {
    crew_test::watchdog dog(120s);
    const int depth = 3 * static_cast<int>(crew::help_depth_limit);
    long expected = 1;
    for (int d = 1; d <= depth; ++d) expected = expected * (d % 7 == 0 ? 2 : 1) + 1;
    EXPECT_EQ(pool().run([&] { return group_depth(depth); }), expected);
}

TEST(isolate, outside_every_pool_it_just_calls) {
    EXPECT_EQ(crew::isolate([] { return 7; }), 7);
    int x = 0;
    int& r = crew::isolate([&]() -> int& { return x; });
    EXPECT_EQ(&r, &x);
}

// A wait inside isolate() never runs a task pushed before isolate began on the same thread.
TEST_P(helping_suite, isolated_wait_runs_no_outer_task) {
    crew_test::watchdog dog(60s);
    crew::pool other(1);
    std::atomic<bool> waiting{false}, violated{false};
    std::atomic<int> outer_ran{0};
    std::atomic<std::thread::id> waiter_thread{};
    pool().run([&] {
        crew::task_group outer;
        // Pushed onto this worker's own deque before the isolated region: unrelated to it.
        for (int i = 0; i < 8; ++i)
            outer.run([&] {
                if (waiting.load() && std::this_thread::get_id() == waiter_thread.load()) violated = true;
                outer_ran.fetch_add(1);
            });
        crew::isolate([&] {
            // A job elsewhere that takes a while: long enough for a waiter that helps to help.
            auto f = other.submit([] { std::this_thread::sleep_for(20ms); });
            waiter_thread = std::this_thread::get_id();
            waiting = true;
            f.get();
            waiting = false;
        });
        outer.wait();
    });
    EXPECT_FALSE(violated.load());
    EXPECT_EQ(outer_ran.load(), 8);
}

// The same without isolate: the waiting worker does pick up the outer tasks (this is what
// isolate turns off). On one worker nothing else can run them, and the awaited job needs them.
TEST(isolate, without_it_a_one_worker_waiter_helps) {
    crew_test::watchdog dog(60s);
    crew::pool p(1), other(1);
    std::atomic<int> ran{0};
    p.run([&] {
        crew::task_group outer;
        for (int i = 0; i < 8; ++i) outer.run([&] { ran.fetch_add(1); });
        auto f = other.submit([&] {
            while (ran.load() < 8) std::this_thread::yield();  // done once the waiter helped
        });
        f.get();
        outer.wait();
    });
    EXPECT_EQ(ran.load(), 8);
}

TEST_P(helping_suite, isolated_recursion_completes) {
    crew_test::watchdog dog(120s);
    const int depth = 2 * static_cast<int>(crew::help_depth_limit);
    long expected = 1;
    for (int d = 1; d <= depth; ++d) expected = expected * (d % 7 == 0 ? 2 : 1) + 1;
    EXPECT_EQ(pool().run([&] { return crew::isolate([&] { return group_depth(depth); }); }), expected);
}

// The finding 6(a): a task the worker picked up while one of a group's tasks waited lower
// on the same stack, waiting for that group, got "called from inside one of the group's own tasks"
// although it is not one. It still cannot wait (the lower task resumes only after it returns), and
// the message now says why.
TEST(helping, waiting_for_a_group_whose_task_is_lower_on_the_stack) {
    crew_test::watchdog dog(60s);
    crew::pool p(1), other(1);
    crew::task_group group(p);
    std::string message;
    std::atomic<bool> b_ran{false};
    p.run([&] {
        // B is pushed first, so it lies below A on the worker's deque: unrelated to A.
        crew::spawn([&] {
            try {
                group.wait();
            } catch (const crew::usage_error& e) {
                message = e.what();
            }
            b_ran = true;
        });
        group.run([&] {
            // A waits for a job elsewhere; meanwhile the only worker runs B on top of A.
            other.submit([&] {
                while (!b_ran.load()) std::this_thread::yield();
            }).get();
        });
    });
    group.wait();
    EXPECT_TRUE(b_ran.load());
    EXPECT_NE(message.find("lower on the same stack"), std::string::npos) << message;
    EXPECT_EQ(message.find("called from inside one of the group's own tasks"), std::string::npos) << message;
}

CREW_ALL_POOL_SIZES(helping_suite);

}  // namespace
