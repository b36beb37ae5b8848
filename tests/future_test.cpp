// crew::pool::submit and crew::future.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <variant>
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

// A gate a task blocks on until the test opens it (so a future stays pending as long as needed).
struct gate {
    std::atomic<bool> open{false};
    void pass() const {
        while (!open.load()) std::this_thread::yield();
    }
};

TEST_P(future_suite, wait_for_and_wait_until_report_ready_or_timeout_from_outside) {
    crew_test::watchdog dog(60s);
    auto ready = pool().submit([] { return 1; });
    ready.wait();
    EXPECT_EQ(ready.wait_for(0s), std::future_status::ready);
    EXPECT_EQ(ready.wait_for(std::chrono::nanoseconds::max()), std::future_status::ready);  // no overflow
    EXPECT_EQ(ready.wait_until(std::chrono::steady_clock::time_point::max()), std::future_status::ready);
    EXPECT_EQ(ready.wait_until(std::chrono::system_clock::now() - 1h), std::future_status::ready);

    gate g;
    auto pending = pool().submit([&] {
        g.pass();
        return 2;
    });
    EXPECT_EQ(pending.wait_for(0s), std::future_status::timeout);  // polls
    EXPECT_EQ(pending.wait_for(-5s), std::future_status::timeout);
    EXPECT_EQ(pending.wait_for(20ms), std::future_status::timeout);
    EXPECT_EQ(pending.wait_until(std::chrono::steady_clock::now() + 10ms), std::future_status::timeout);
    EXPECT_EQ(pending.wait_until(std::chrono::system_clock::now() + 10ms), std::future_status::timeout);
    EXPECT_EQ(pending.wait_until(std::chrono::steady_clock::time_point::min()), std::future_status::timeout);
    EXPECT_TRUE(pending.valid());
    g.open.store(true);
    EXPECT_EQ(pending.wait_for(60s), std::future_status::ready);  // wakes when set, long before
    EXPECT_EQ(pending.wait_for(std::chrono::duration<double>(0.5)), std::future_status::ready);
    EXPECT_EQ(pending.get(), 2);

    crew::future<int> empty;
    EXPECT_THROW((void)empty.wait_for(1s), std::future_error);
    EXPECT_THROW((void)empty.wait_until(std::chrono::steady_clock::now()), std::future_error);
}

// On a worker, a timed wait sleeps (it runs no other task); the task it waits for runs on another
// pool here, so the worker's pool size does not matter.
TEST_P(future_suite, wait_for_on_a_worker_times_out_then_sees_ready) {
    crew_test::watchdog dog(60s);
    crew::pool other(1);
    gate g;
    auto statuses = pool().run([&] {
        auto f = other.submit([&] {
            g.pass();
            return 3;
        });
        const auto first = f.wait_for(20ms);
        const auto second = f.wait_until(std::chrono::steady_clock::now() + 5ms);
        g.open.store(true);
        const auto third = f.wait_for(60s);
        return std::tuple{first, second, third, f.get()};
    });
    EXPECT_EQ(std::get<0>(statuses), std::future_status::timeout);
    EXPECT_EQ(std::get<1>(statuses), std::future_status::timeout);
    EXPECT_EQ(std::get<2>(statuses), std::future_status::ready);
    EXPECT_EQ(std::get<3>(statuses), 3);
    // A ready future on a worker: ready at once.
    EXPECT_EQ(pool().run([&] {
        auto f = other.submit([] { return 4; });
        f.wait();
        return f.wait_for(0s);
    }),
              std::future_status::ready);
}

struct counter_object {
    int base = 0;
    int add(int x) const { return base + x; }
    void bump(int x) { base += x; }
};

int sum_of(std::unique_ptr<int> p, int q) { return *p + q; }

TEST_P(future_suite, submit_binds_arguments_as_std_async) {
    crew_test::watchdog dog(60s);
    // Move-only argument, free function.
    EXPECT_EQ(pool().submit(sum_of, std::make_unique<int>(40), 2).get(), 42);
    // Arguments are copied at submit(): later changes to the caller's variable do not show.
    std::string text = "before";
    crew::future<std::size_t> length;
    gate g;  // outlives the task
    {
        length = pool().submit(
            [&g](const std::string& s) {
                g.pass();
                return s.size();
            },
            text);
        text = "after, much longer";
        g.open.store(true);
    }
    EXPECT_EQ(length.get(), 6u);
    // std::ref passes a reference.
    int target = 0;
    pool().submit([](int& t, int v) { t = v; }, std::ref(target), 7).get();
    EXPECT_EQ(target, 7);
    // Member function pointers: on a copy, through a pointer, through std::ref.
    counter_object obj{10};
    EXPECT_EQ(pool().submit(&counter_object::add, obj, 5).get(), 15);
    pool().submit(&counter_object::bump, &obj, 1).get();
    pool().submit(&counter_object::bump, std::ref(obj), 1).get();
    EXPECT_EQ(obj.base, 12);
    pool().submit(&counter_object::bump, obj, 100).get();  // a copy: obj unchanged
    EXPECT_EQ(obj.base, 12);
    // A throwing call reaches the future; a move-only callable with a move-only argument.
    EXPECT_THROW(pool().submit([](int) -> int { throw std::runtime_error("x"); }, 1).get(), std::runtime_error);
    auto owned = std::make_unique<int>(3);
    EXPECT_EQ(pool().submit([o = std::move(owned)](std::unique_ptr<int> q) { return *o * *q; }, std::make_unique<int>(5)).get(),
              15);
}

TEST_P(future_suite, when_all_of_ready_pending_and_void_futures) {
    crew_test::watchdog dog(60s);
    gate g;
    auto a = pool().submit([] { return 1; });
    a.wait();
    auto b = pool().submit([&] {
        g.pass();
        return std::string("two");
    });
    auto c = pool().submit([] {});
    auto all = crew::when_all(std::move(a), std::move(b), std::move(c));
    EXPECT_FALSE(a.valid());
    EXPECT_FALSE(b.valid());
    EXPECT_EQ(all.wait_for(10ms), std::future_status::timeout);
    g.open.store(true);
    std::tuple<int, std::string, std::monostate> got = all.get();
    EXPECT_EQ(std::get<0>(got), 1);
    EXPECT_EQ(std::get<1>(got), "two");

    auto none = crew::when_all();
    EXPECT_TRUE(none.is_ready());
    none.get();

    // Nested: a when_all's future is an input like any other.
    auto inner = crew::when_all(pool().submit([] { return 5; }));
    auto outer = crew::when_all(std::move(inner), pool().submit([] { return 6; }));
    auto [x, y] = outer.get();
    EXPECT_EQ(std::get<0>(x), 5);
    EXPECT_EQ(y, 6);
}

TEST_P(future_suite, when_all_rethrows_the_first_failure_in_argument_order) {
    crew_test::watchdog dog(60s);
    gate g;
    auto second = pool().submit([]() -> int { throw std::runtime_error("second"); });
    second.wait();  // fails before `first` does
    auto first = pool().submit([&]() -> int {
        g.pass();
        throw std::runtime_error("first");
    });
    auto fine = pool().submit([] { return 1; });
    auto all = crew::when_all(std::move(first), std::move(fine), std::move(second));
    g.open.store(true);
    try {
        all.get();
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "first");
    }
    crew::future<int> invalid;
    auto valid = pool().submit([] { return 1; });
    EXPECT_THROW(crew::when_all(std::move(valid), std::move(invalid)), std::future_error);
}

TEST_P(future_suite, when_all_of_a_vector) {
    crew_test::watchdog dog(60s);
    std::vector<crew::future<int>> fs;
    for (int i = 0; i < 1000; ++i) fs.push_back(pool().submit([i] { return i; }));
    std::vector<int> got = crew::when_all(std::move(fs)).get();
    ASSERT_EQ(got.size(), 1000u);
    for (int i = 0; i < 1000; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)], i);

    EXPECT_TRUE(crew::when_all(std::vector<crew::future<int>>{}).get().empty());

    std::vector<crew::future<void>> vs;
    for (int i = 0; i < 10; ++i)
        vs.push_back(pool().submit([i] {
            if (i == 3 || i == 7) throw std::runtime_error(std::to_string(i));
        }));
    try {
        crew::when_all(std::move(vs)).get();
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "3");
    }
}

// when_all never blocks a worker: on a one-worker pool, a task builds a when_all of tasks queued
// behind it and returns; the combination happens when the last input finishes.
TEST_P(future_suite, when_all_built_inside_a_task_does_not_block_its_worker) {
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    auto all = p.run([&] {
        std::vector<crew::future<long>> fs;
        for (long i = 0; i < 100; ++i) fs.push_back(p.submit([i] { return i; }));
        return crew::when_all(std::move(fs));
    });
    long sum = 0;
    for (long v : all.get()) sum += v;
    EXPECT_EQ(sum, 99L * 100 / 2);
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
