// crew::event: set/reset, releasing 100,000 waiters without recursion, cancellation against
// set(), destruction with waiters, budget. Pools of 1, 2, 4, 8.
#include <memory>
#include <vector>

#include "async/primitives_common.hpp"

namespace {

using namespace std::chrono_literals;
using prim_test::wait_until;

class event_suite : public crew_test::pool_test {};

TEST(event_basics, set_reset_is_set) {
    crew::event e;
    EXPECT_FALSE(e.is_set());
    e.set();
    EXPECT_TRUE(e.is_set());
    e.set();
    EXPECT_TRUE(e.is_set());
    e.reset();
    EXPECT_FALSE(e.is_set());
    crew::event s(true);
    EXPECT_TRUE(s.is_set());
}

crew::task<int> wait_on(crew::event& e) {
    co_await e.wait();
    co_return 1;
}

TEST_P(event_suite, wait_on_a_set_event_returns_at_once_and_set_wakes_waiters) {
    crew_test::watchdog dog(60s);
    crew::event e(true);
    EXPECT_EQ(pool().block_on(wait_on(e)), 1);
    e.reset();
    std::vector<crew::join_handle<int>> hs;
    for (int i = 0; i < 10; ++i) hs.push_back(pool().spawn(wait_on(e)));
    ASSERT_TRUE(wait_until([&] { return e.waiters() == 10; }));
    e.set();
    for (auto& h : hs) EXPECT_EQ(h.get(), 1);
    EXPECT_EQ(e.waiters(), 0u);
}

// The setter's writes before set() are visible to every waiter (TSan checks the plain int).
crew::task<int> read_after_wait(crew::event& e, const int& data) {
    co_await e.wait();
    co_return data;
}

TEST_P(event_suite, set_publishes_prior_writes) {
    crew_test::watchdog dog(60s);
    for (int round = 0; round < 200; ++round) {
        crew::event e;
        int data = 0;
        auto h = pool().spawn(read_after_wait(e, data));
        std::thread setter([&] {
            data = 42;
            e.set();
        });
        EXPECT_EQ(h.get(), 42);
        setter.join();
    }
}

crew::task<void> wait_and_check(crew::event& e, std::atomic<int>& nested) {
    co_await e.wait();
    if (prim_test::inside_release) nested.fetch_add(1);
}
crew::task<void> set_from_task(crew::event& e) {
    prim_test::release_scope scope;
    e.set();
    co_return;
}

TEST_P(event_suite, set_releases_100k_waiters_without_recursion) {
    crew_test::watchdog dog(120s);
    const long n = crew_test::scaled(100'000);
    crew::event e;
    std::atomic<int> nested{0};
    std::vector<crew::join_handle<void>> hs;
    hs.reserve(static_cast<std::size_t>(n));
    for (long i = 0; i < n; ++i) hs.push_back(pool().spawn(wait_and_check(e, nested)));
    ASSERT_TRUE(wait_until([&] { return e.waiters() == static_cast<std::size_t>(n); }, 60s));
    pool().block_on(set_from_task(e));
    for (auto& h : hs) h.get();
    EXPECT_EQ(nested.load(), 0);
}

// cancel vs set: the waiter either returns (set won) or throws cancelled_error; it leaves the list.
TEST_P(event_suite, cancel_races_set) {
    crew_test::watchdog dog(120s);
    const long rounds = crew_test::scaled(2000);
    long woke = 0, cancelled = 0;
    for (long r = 0; r < rounds; ++r) {
        crew::event e;
        auto h = pool().spawn(wait_on(e));
        ASSERT_TRUE(wait_until([&] { return e.waiters() == 1; }));
        std::thread setter([&] { e.set(); });
        h.cancel();
        setter.join();
        try {
            woke += h.get();
        } catch (const crew::cancelled_error&) {
            ++cancelled;
        }
        EXPECT_EQ(e.waiters(), 0u);
    }
    EXPECT_EQ(woke + cancelled, rounds);
}

crew::task<int> wait_expect_abandoned(crew::event& e) {
    try {
        co_await e.wait();
    } catch (const crew::usage_error&) {
        co_return 1;
    }
    co_return 0;
}

TEST_P(event_suite, destroy_with_waiters_throws_usage_error_in_them) {
    crew_test::watchdog dog(60s);
    auto e = std::make_unique<crew::event>();
    std::vector<crew::join_handle<int>> hs;
    for (int i = 0; i < 8; ++i) hs.push_back(pool().spawn(wait_expect_abandoned(*e)));
    ASSERT_TRUE(wait_until([&] { return e->waiters() == 8; }));
    e.reset();
    for (auto& h : hs) EXPECT_EQ(h.get(), 1);
}

// Destruction racing with cancellation of a waiter (use-after-free check for ASan/TSan).
TEST_P(event_suite, destroy_races_cancel) {
    crew_test::watchdog dog(120s);
    const long rounds = crew_test::scaled(1000);
    for (long r = 0; r < rounds; ++r) {
        auto e = std::make_unique<crew::event>();
        auto h = pool().spawn(wait_expect_abandoned(*e));
        ASSERT_TRUE(wait_until([&] { return e->waiters() == 1; }));
        std::thread canceller([&] { h.cancel(); });
        e.reset();
        canceller.join();
        try {
            EXPECT_EQ(h.get(), 1);
        } catch (const crew::cancelled_error&) {
        }
    }
}

// Budget: waiting on a set event in a loop is preempted.
crew::task<long> spin_on_set_event(crew::event& e, std::atomic<bool>& victim_ran) {
    long rounds = 0;
    while (!victim_ran.load(std::memory_order_acquire) && rounds < 2'000'000) {
        co_await e.wait();
        ++rounds;
    }
    co_return rounds;
}
crew::task<void> mark(std::atomic<bool>& ran) {
    ran.store(true, std::memory_order_release);
    co_return;
}
crew::task<long> spin_with_victim(crew::event& e, std::atomic<bool>& ran) {
    auto v = crew::spawn(mark(ran));
    long rounds = co_await spin_on_set_event(e, ran);
    co_await v;
    co_return rounds;
}

TEST_P(event_suite, set_event_loop_is_preempted_by_the_budget) {
    crew_test::watchdog dog(60s);
    crew::event e(true);
    std::atomic<bool> ran{false};
    const long rounds = pool().block_on(spin_with_victim(e, ran));
    EXPECT_TRUE(ran.load());
    if (workers() == 1) {
        EXPECT_LE(rounds, 200);
    }
}

CREW_ALL_POOL_SIZES(event_suite);

}  // namespace
