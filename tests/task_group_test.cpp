// crew::task_group: many children, nesting, exceptions, reuse, misuse.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

class task_group_suite : public crew_test::pool_test {};

// Busy-waits about `d` (a child that keeps its worker, as real work does).
void spin_for(std::chrono::nanoseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) {
    }
}

TEST_P(task_group_suite, a_hundred_thousand_children) {
    crew_test::watchdog dog(120s);
    const long n = crew_test::scaled(100'000);
    std::atomic<long> sum{0};
    pool().run([&] {
        crew::task_group g;
        for (long i = 0; i < n; ++i) g.run([&, i] { sum.fetch_add(i, std::memory_order_relaxed); });
        g.wait();
    });
    EXPECT_EQ(sum.load(), n * (n - 1) / 2);
}

TEST_P(task_group_suite, from_an_outside_thread) {
    crew_test::watchdog dog(60s);
    std::atomic<int> count{0};
    crew::task_group g(pool());
    for (int i = 0; i < 1000; ++i) g.run([&] { count.fetch_add(1); });
    g.wait();
    EXPECT_EQ(count.load(), 1000);
}

TEST_P(task_group_suite, runs_lvalue_callables) {
    crew_test::watchdog dog(60s);
    std::atomic<int> count{0};
    auto child = [&] { count.fetch_add(1); };
    crew::task_group g(pool());
    for (int i = 0; i < 10; ++i) g.run(child);
    g.wait();
    EXPECT_EQ(count.load(), 10);
}

TEST_P(task_group_suite, children_can_add_children) {
    crew_test::watchdog dog(60s);
    std::atomic<int> count{0};
    crew::task_group g(pool());
    for (int i = 0; i < 100; ++i)
        g.run([&] {
            for (int k = 0; k < 10; ++k) g.run([&] { count.fetch_add(1); });
        });
    g.wait();
    EXPECT_EQ(count.load(), 1000);
}

TEST_P(task_group_suite, ten_percent_throwing_children_rethrow_at_wait_and_the_group_is_reusable) {
    crew_test::watchdog dog(60s);
    crew::task_group g(pool());
    std::atomic<int> ran{0};
    for (int i = 0; i < 1000; ++i)
        g.run([&, i] {
            ran.fetch_add(1);
            if (i % 10 == 3) throw std::runtime_error("child");
        });
    EXPECT_THROW(g.wait(), std::runtime_error);
    EXPECT_EQ(ran.load(), 1000);  // no child was dropped
    g.run([&] { ran.fetch_add(1); });
    EXPECT_NO_THROW(g.wait());
    EXPECT_EQ(ran.load(), 1001);
}

TEST_P(task_group_suite, waiting_from_inside_the_groups_own_task_is_a_usage_error) {
    crew_test::watchdog dog(60s);
    crew::task_group g(pool());
    std::atomic<bool> refused{false};
    g.run([&] {
        try {
            g.wait();
        } catch (const crew::usage_error&) {
            refused.store(true);
        }
    });
    g.wait();
    EXPECT_TRUE(refused.load());
}

TEST_P(task_group_suite, destroying_an_unwaited_group_waits_for_its_children) {
    crew_test::watchdog dog(60s);
    std::atomic<int> count{0};
    {
        crew::task_group g(pool());
        for (int i = 0; i < 100; ++i)
            g.run([&] {
                std::this_thread::sleep_for(50us);
                count.fetch_add(1);
            });
    }
    EXPECT_EQ(count.load(), 100);
}

TEST_P(task_group_suite, nested_groups_recursively) {
    crew_test::watchdog dog(60s);
    struct tree {
        static long count(int depth) {
            if (depth == 0) return 1;
            std::atomic<long> total{0};
            crew::task_group g;
            for (int i = 0; i < 4; ++i) g.run([&] { total.fetch_add(count(depth - 1)); });
            g.wait();
            return total.load();
        }
    };
    EXPECT_EQ(pool().run([] { return tree::count(6); }), 4096);
}

// Regression (hardening issue, part B): run() from a producer thread while the owner calls wait()
// in a loop. The old wait() reset the count with a plain store over concurrent increments, so the
// final wait() (after the producer was joined) could return while children still ran, and
// destroying the group then let a child touch freed memory (ASan: heap-use-after-free in
// child_done). Every final wait() must see every child finished.
TEST_P(task_group_suite, final_wait_after_a_concurrent_producer_sees_every_child_done) {
    crew_test::watchdog dog(300s);
    constexpr int children = 20;
    const long cycles = crew_test::scaled(3000);
    long early_returns = 0;
    for (long cycle = 0; cycle < cycles; ++cycle) {
        std::atomic<int> finished{0};
        {
            crew::task_group g(pool());
            std::atomic<bool> produced{false};
            std::thread producer([&] {
                for (int i = 0; i < children; ++i)
                    g.run([&finished] {
                        spin_for(5us);
                        finished.fetch_add(1, std::memory_order_relaxed);
                    });
                produced.store(true, std::memory_order_release);
            });
            while (!produced.load(std::memory_order_acquire)) g.wait();
            producer.join();
            g.wait();
            if (finished.load(std::memory_order_relaxed) != children) ++early_returns;
        }  // the group dies here: no child may still touch it
    }
    EXPECT_EQ(early_returns, 0) << "of " << cycles << " cycles";
}

CREW_ALL_POOL_SIZES(task_group_suite);

}  // namespace
