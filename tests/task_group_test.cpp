// crew::task_group: many children, nesting, exceptions, reuse, misuse.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

class task_group_suite : public crew_test::pool_test {};

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

CREW_ALL_POOL_SIZES(task_group_suite);

}  // namespace
