// crew::sleep_for / sleep_until / timeout on pools of 1, 2, 4, 8: never early, ordering, past
// deadlines, timeouts that fire / do not fire / see the inner exception, cancellation while
// sleeping, 10,000 concurrent sleeps, shutdown with pending timers, a busy pool still firing
// timers (the 61-tick poll), and ~0 CPU for an idle pool with pending timers.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "async/primitives_common.hpp"

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using prim_test::wait_until;

int scale_down() {
    const char* s = std::getenv("CREW_TEST_SCALE_DOWN");
    const int v = s != nullptr ? std::atoi(s) : 1;
    return v > 0 ? v : 1;
}

class time_suite : public crew_test::pool_test {};

crew::task<clock_type::time_point> sleep_and_stamp(std::chrono::microseconds d) {
    co_await crew::sleep_for(d);
    co_return clock_type::now();
}

TEST_P(time_suite, sleep_for_never_returns_early) {
    crew_test::watchdog dog(60s);
    for (auto d : {0us, 1us, 100us, 1000us, 5000us}) {
        const auto start = clock_type::now();
        const auto woke = pool().block_on(sleep_and_stamp(d));
        EXPECT_GE(woke - start, d);
    }
}

crew::task<void> sleep_then_record(std::chrono::microseconds d, std::mutex& m, std::vector<int>& order, int id) {
    co_await crew::sleep_for(d);
    std::lock_guard lock(m);
    order.push_back(id);
}

TEST_P(time_suite, many_sleeps_wake_in_deadline_order) {
    crew_test::watchdog dog(60s);
    std::mutex m;
    std::vector<int> order;
    std::vector<crew::join_handle<void>> hs;
    // 20 ms apart: far beyond any scheduling jitter, so the order is the deadlines' order.
    for (int i = 5; i >= 0; --i) hs.push_back(pool().spawn(sleep_then_record(i * 20ms, m, order, i)));
    for (auto& h : hs) h.get();
    ASSERT_EQ(order.size(), 6u);
    EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
}

crew::task<int> sleep_until_then(clock_type::time_point t) {
    co_await crew::sleep_until(t);
    co_return 7;
}

TEST_P(time_suite, sleep_until_in_the_past_and_zero_complete_at_once) {
    crew_test::watchdog dog(60s);
    EXPECT_EQ(pool().block_on(sleep_until_then(clock_type::now() - 1s)), 7);
    EXPECT_EQ(pool().block_on(sleep_until_then(clock_type::time_point{})), 7);
    const auto t = clock_type::now() + 3ms;
    EXPECT_EQ(pool().block_on(sleep_until_then(t)), 7);
    EXPECT_GE(clock_type::now(), t);
}

// A sleep of <= 0 spends budget: a loop of them still lets other tasks run (it yields).
crew::task<int> zero_sleeps(int n) {
    for (int i = 0; i < n; ++i) co_await crew::sleep_for(-1ms);
    co_return n;
}

TEST_P(time_suite, non_positive_sleeps_spend_budget) {
    crew_test::watchdog dog(60s);
    EXPECT_EQ(pool().block_on(zero_sleeps(10'000)), 10'000);
}

crew::task<int> value_after(std::chrono::microseconds d, int v) {
    co_await crew::sleep_for(d);
    co_return v;
}

crew::task<int> with_timeout(std::chrono::microseconds limit, std::chrono::microseconds work) {
    co_return co_await crew::timeout(limit, value_after(work, 5));
}

TEST_P(time_suite, timeout_does_not_fire_for_a_fast_task) {
    crew_test::watchdog dog(60s);
    EXPECT_EQ(pool().block_on(with_timeout(10s, 1ms)), 5);
    EXPECT_EQ(pool().block_on(with_timeout(10s, 0us)), 5);
}

TEST_P(time_suite, timeout_fires_and_cancels_the_inner_task) {
    crew_test::watchdog dog(60s);
    const auto start = clock_type::now();
    EXPECT_THROW(pool().block_on(with_timeout(2ms, 60s)), crew::timeout_error);
    EXPECT_GE(clock_type::now() - start, 2ms);
    EXPECT_LT(clock_type::now() - start, 30s);  // the 60 s inner sleep was cancelled
}

crew::task<int> throws_after(std::chrono::microseconds d) {
    co_await crew::sleep_for(d);
    throw std::runtime_error("inner");
}

crew::task<int> timeout_of_thrower() { co_return co_await crew::timeout(10s, throws_after(1ms)); }

TEST_P(time_suite, timeout_passes_the_inner_exception) {
    crew_test::watchdog dog(60s);
    EXPECT_THROW(pool().block_on(timeout_of_thrower()), std::runtime_error);
}

crew::task<void> timeout_void() { co_await crew::timeout(10s, crew::task<void>([]() -> crew::task<void> { co_await crew::sleep_for(1ms); }())); }

TEST_P(time_suite, timeout_of_a_void_task) {
    crew_test::watchdog dog(60s);
    EXPECT_NO_THROW(pool().block_on(timeout_void()));
}

crew::task<int> long_sleep(std::atomic<bool>& started) {
    started.store(true);
    co_await crew::sleep_for(3600s);
    co_return 1;
}

TEST_P(time_suite, cancel_while_sleeping_throws_cancelled_promptly) {
    crew_test::watchdog dog(60s);
    for (int i = 0; i < 20; ++i) {
        std::atomic<bool> started{false};
        auto h = pool().spawn(long_sleep(started));
        ASSERT_TRUE(wait_until([&] { return started.load(); }));
        if (i % 2 == 0) std::this_thread::sleep_for(1ms);  // surely suspended by now
        h.cancel();
        EXPECT_THROW(h.get(), crew::cancelled_error);
    }
}

crew::task<int> timeout_outer_cancelled(std::atomic<bool>& started) {
    co_return co_await crew::timeout(3600s, long_sleep(started));
}

TEST_P(time_suite, cancelling_a_timeout_cancels_the_inner_task) {
    crew_test::watchdog dog(60s);
    std::atomic<bool> started{false};
    auto h = pool().spawn(timeout_outer_cancelled(started));
    ASSERT_TRUE(wait_until([&] { return started.load(); }));
    h.cancel();
    EXPECT_THROW(h.get(), crew::cancelled_error);
}

crew::task<void> sleep_count(std::chrono::microseconds d, std::atomic<int>& woke, clock_type::time_point start) {
    co_await crew::sleep_for(d);
    if (clock_type::now() - start >= d) woke.fetch_add(1);
}

TEST_P(time_suite, ten_thousand_concurrent_sleeps_all_wake) {
    crew_test::watchdog dog(60s);
    const int n = 10'000 / scale_down();
    std::atomic<int> woke{0};
    std::vector<crew::join_handle<void>> hs;
    hs.reserve(n);
    const auto start = clock_type::now();
    for (int i = 0; i < n; ++i)
        hs.push_back(pool().spawn(sleep_count(std::chrono::microseconds(1000 + (i % 97) * 37), woke, start)));
    for (auto& h : hs) h.get();
    EXPECT_EQ(woke.load(), n);
}

TEST_P(time_suite, pool_destroyed_with_pending_timers_frees_them) {
    crew_test::watchdog dog(60s);
    std::atomic<bool> started{false};
    auto p = std::make_unique<crew::pool>(workers());
    std::vector<crew::join_handle<int>> hs;
    for (int i = 0; i < 100; ++i) hs.push_back(p->spawn(long_sleep(started)));
    ASSERT_TRUE(wait_until([&] { return started.load(); }));
    p.reset();  // frames (and their timers) go first, then the driver; ASan checks the rest
    for (auto& h : hs) EXPECT_THROW(h.get(), crew::cancelled_error);
}

// Every worker loops on fork-join work (coroutine tasks that each run a join and yield, so no
// worker ever runs out of work and parks); a timer still fires (the busy poll every 61 ticks).
// (Fork-join tasks on a deque run before coroutine tasks on the same worker: a pool busy with
// endless deque work delays a woken coroutine however it is woken, so the load is coroutines.)
crew::task<void> busy_loop(std::atomic<bool>& stop, std::atomic<long>& spins) {
    while (!stop.load(std::memory_order_relaxed)) {
        crew::join([&] { spins.fetch_add(1, std::memory_order_relaxed); },
                   [&] { spins.fetch_add(1, std::memory_order_relaxed); });
        co_await crew::yield_now();
    }
}

TEST_P(time_suite, a_busy_pool_still_fires_timers) {
    crew_test::watchdog dog(60s);
    std::atomic<bool> stop{false};
    std::atomic<long> spins{0};
    std::vector<crew::join_handle<void>> busy;
    for (std::size_t i = 0; i < 2 * workers(); ++i) busy.push_back(pool().spawn(busy_loop(stop, spins)));
    ASSERT_TRUE(wait_until([&] { return spins.load() > 10'000; }));
    const auto start = clock_type::now();
    auto h = pool().spawn(sleep_and_stamp(2000us));
    ASSERT_TRUE(wait_until([&] { return h.done(); }, 30s));
    const long spins_at_wake = spins.load();
    EXPECT_GE(h.get() - start, 2ms);
    EXPECT_GT(spins_at_wake, 10'000);  // the pool was busy all along
    stop.store(true);
    for (auto& b : busy) b.get();
}

double process_cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

TEST_P(time_suite, idle_pool_with_pending_timers_uses_almost_no_cpu) {
    crew_test::watchdog dog(60s);
    std::atomic<bool> started{false};
    std::vector<crew::join_handle<int>> hs;
    for (int i = 0; i < 50; ++i) hs.push_back(pool().spawn(long_sleep(started)));
    ASSERT_TRUE(wait_until([&] { return started.load(); }));
    std::this_thread::sleep_for(100ms);  // let the workers park
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(200ms);
    const double used = process_cpu_seconds() - before;
    EXPECT_LT(used, 0.02) << "CPU seconds over 200 ms of idleness";
    for (auto& h : hs) h.cancel();
    for (auto& h : hs) EXPECT_THROW(h.get(), crew::cancelled_error);
}

CREW_ALL_POOL_SIZES(time_suite);

TEST(time_outside, block_on_from_an_outside_thread_uses_the_default_pool) {
    crew_test::watchdog dog(60s);
    const auto start = clock_type::now();
    const auto woke = crew::block_on(sleep_and_stamp(2000us));
    EXPECT_GE(woke - start, 2ms);
}

}  // namespace
