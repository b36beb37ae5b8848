// The task-API examples of docs/API.md (cancellation, run_and_wait, timed waits, submit with
// arguments, when_all), compiled and checked. Keep the two in step: each block between
// "// --- example: <name>" and "// ---" is the snippet the document shows.
#include <crew/crew.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <variant>
#include <vector>

#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

TEST(task_api_examples, cancel_and_is_canceling) {
    crew_test::watchdog dog(60s);
    crew::pool pool(2);
    std::vector<int> data(1'000'000, 1);
    data[123'456] = 42;
    // --- example: cancel
    crew::task_group search(pool);
    std::atomic<long> found{-1};
    for (long chunk = 0; chunk < 100; ++chunk)
        search.run([&, chunk] {
            for (long i = chunk * 10'000; i < (chunk + 1) * 10'000; ++i) {
                if (crew::is_canceling()) return;  // another chunk found it: stop early
                if (data[static_cast<std::size_t>(i)] == 42) {
                    found.store(i);
                    search.cancel();               // chunks not started yet are dropped
                    return;
                }
            }
        });
    crew::task_group_status status = search.wait();  // canceled; the group is reusable now
    // ---
    EXPECT_EQ(status, crew::task_group_status::canceled);
    EXPECT_EQ(found.load(), 123'456);
    EXPECT_FALSE(search.is_canceling());
}

TEST(task_api_examples, run_and_wait) {
    crew_test::watchdog dog(60s);
    // --- example: run_and_wait
    crew::task_group g;
    std::atomic<int> leaves{0};
    auto status = g.run_and_wait([&] {               // f runs here, on the calling thread
        for (int i = 0; i < 8; ++i) g.run([&] { leaves.fetch_add(1); });
    });                                              // ...then waits for all 8: complete
    // ---
    EXPECT_EQ(status, crew::task_group_status::complete);
    EXPECT_EQ(leaves.load(), 8);
}

TEST(task_api_examples, nested_cancellation) {
    crew_test::watchdog dog(60s);
    crew::pool pool(2);
    // --- example: nested_cancellation
    crew::task_group outer(pool);
    std::atomic<bool> started{false}, inner_saw{false};
    outer.run([&] {
        crew::task_group inner;                      // nested in `outer`: made inside its child
        inner.run([&] {
            started = true;
            while (!crew::is_canceling()) std::this_thread::yield();
            inner_saw = true;                        // outer.cancel() reached the inner group
        });
        inner.wait();                                // returns canceled
    });
    while (!started) std::this_thread::yield();
    outer.cancel();
    outer.wait();
    // ---
    EXPECT_TRUE(inner_saw.load());
}

TEST(task_api_examples, wait_for) {
    crew_test::watchdog dog(60s);
    crew::pool pool(2);
    // --- example: wait_for
    std::atomic<bool> go{false};
    crew::future<int> f = pool.submit([&] {
        while (!go) std::this_thread::yield();
        return 7;
    });
    std::future_status s1 = f.wait_for(10ms);       // timeout: the task is still running
    go = true;
    std::future_status s2 = f.wait_until(std::chrono::steady_clock::now() + 10s);  // ready
    int v = f.get();                                 // 7
    // ---
    EXPECT_EQ(s1, std::future_status::timeout);
    EXPECT_EQ(s2, std::future_status::ready);
    EXPECT_EQ(v, 7);
}

struct account {
    long balance = 100;
    long withdraw(long amount) {
        balance -= amount;
        return balance;
    }
};

TEST(task_api_examples, submit_with_arguments) {
    crew_test::watchdog dog(60s);
    crew::pool pool(2);
    // --- example: submit_args
    auto sum = pool.submit([](std::unique_ptr<int> a, int b) { return *a + b; },
                           std::make_unique<int>(40), 2);          // move-only argument: 42
    std::vector<int> out;
    pool.submit([](std::vector<int>& v) { v.push_back(1); }, std::ref(out)).get();  // by reference
    account acc;
    auto left = pool.submit(&account::withdraw, &acc, 30);           // acc.withdraw(30): 70
    // ---
    EXPECT_EQ(sum.get(), 42);
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(left.get(), 70);
}

TEST(task_api_examples, when_all) {
    crew_test::watchdog dog(60s);
    crew::pool pool(2);
    // --- example: when_all
    crew::future<int> a = pool.submit([] { return 1; });
    crew::future<std::string> b = pool.submit([] { return std::string("two"); });
    crew::future<void> c = pool.submit([] {});
    crew::future<std::tuple<int, std::string, std::monostate>> all =
        crew::when_all(std::move(a), std::move(b), std::move(c));  // does not wait
    auto [one, two, nothing] = all.get();                          // 1, "two", monostate

    std::vector<crew::future<int>> many;
    for (int i = 0; i < 10; ++i) many.push_back(pool.submit([i] { return i * i; }));
    std::vector<int> squares = crew::when_all(std::move(many)).get();  // 0, 1, 4, ..., 81
    // ---
    EXPECT_EQ(one, 1);
    EXPECT_EQ(two, "two");
    (void)nothing;
    EXPECT_EQ(squares[9], 81);
}

}  // namespace
