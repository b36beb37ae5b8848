// crew::pool::submit and crew::future.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

class future_suite : public crew_test::pool_test {};

TEST_P(future_suite, get_returns_values_and_rethrows) {
    crew_test::watchdog dog(60s);
    auto f = pool().submit([] { return 6 * 7; });
    EXPECT_EQ(f.get(), 42);
    EXPECT_FALSE(f.valid());
    auto g = pool().submit([]() -> int { throw std::runtime_error("no"); });
    EXPECT_THROW(g.get(), std::runtime_error);
    auto v = pool().submit([] {});
    v.get();
    auto m = pool().submit([] { return std::make_unique<int>(5); });  // move-only results
    EXPECT_EQ(*m.get(), 5);
}

TEST_P(future_suite, invalid_futures_say_so) {
    crew::future<int> f;
    EXPECT_FALSE(f.valid());
    EXPECT_THROW(f.wait(), std::future_error);
    EXPECT_THROW(f.get(), std::future_error);
}

TEST_P(future_suite, get_inside_a_worker_helps_instead_of_blocking) {
    crew_test::watchdog dog(60s);
    // The tasks are submitted from inside a worker, so they sit in its own deque behind the waiting
    // job: on a one-worker pool this only finishes if get() runs them itself.
    crew::pool& p = pool();
    long sum = p.run([&] {
        std::vector<crew::future<long>> fs;
        for (long i = 0; i < 1000; ++i) fs.push_back(p.submit([i] { return i; }));
        long s = 0;
        for (auto& f : fs) s += f.get();
        return s;
    });
    EXPECT_EQ(sum, 999L * 1000 / 2);
}

TEST_P(future_suite, ten_percent_failures_each_reach_their_own_future) {
    crew_test::watchdog dog(60s);
    std::vector<crew::future<int>> fs;
    for (int i = 0; i < 10'000; ++i)
        fs.push_back(pool().submit([i] {
            if (i % 10 == 0) throw std::runtime_error(std::to_string(i));
            return i;
        }));
    int failures = 0;
    for (int i = 0; i < 10'000; ++i) {
        try {
            EXPECT_EQ(fs[static_cast<std::size_t>(i)].get(), i);
        } catch (const std::runtime_error& e) {
            EXPECT_EQ(std::string(e.what()), std::to_string(i));
            ++failures;
        }
    }
    EXPECT_EQ(failures, 1000);
    EXPECT_EQ(pool().submit([] { return 1; }).get(), 1);  // the pool keeps working
}

TEST_P(future_suite, dropping_a_future_still_runs_the_task) {
    crew_test::watchdog dog(60s);
    std::atomic<int> ran{0};
    for (int i = 0; i < 1000; ++i) (void)pool().submit([&] { ran.fetch_add(1); });
    while (ran.load() != 1000) std::this_thread::yield();
}

CREW_ALL_POOL_SIZES(future_suite);

// A worker of pool x parks while waiting for a future that a worker of pool y completes; x is
// destroyed the moment the wait returns. The setter must be done with x's parking lot by then
// (run under ASan to see a use-after-free if not).
TEST(future, waiting_across_pools_then_destroying_the_waiters_pool) {
    crew_test::watchdog dog(120s);
    crew::pool y(1);
    for (int i = 0; i < static_cast<int>(crew_test::scaled(100)); ++i) {
        crew::pool x(1);
        int got = x.run([&] {
            auto f = y.submit([] {
                std::this_thread::sleep_for(200us);  // long enough for the waiter to park
                return 7;
            });
            return f.get();
        });
        ASSERT_EQ(got, 7);
    }
}

}  // namespace
