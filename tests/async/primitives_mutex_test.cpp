// crew::async_mutex: mutual exclusion across co_await, FIFO hand-off, a 100,000-long hand-off
// chain without recursion, cancellation that never loses the lock, destruction with waiters.
// Pools of 1, 2, 4, 8.
#include <memory>
#include <vector>

#include "async/primitives_common.hpp"

namespace {

using namespace std::chrono_literals;
using prim_test::wait_until;

class mutex_suite : public crew_test::pool_test {};

TEST(async_mutex_basics, try_lock_and_guard_moves) {
    crew::async_mutex m;
    EXPECT_FALSE(m.is_locked());
    EXPECT_TRUE(m.try_lock());
    EXPECT_FALSE(m.try_lock());
    m.unlock();
    EXPECT_TRUE(m.try_lock());
    m.unlock();
    crew::async_mutex::guard g;
    EXPECT_FALSE(g.owns_lock());
}

crew::task<void> add_under_lock(crew::async_mutex& m, long& counter, long times) {
    for (long i = 0; i < times; ++i) {
        auto lock = co_await m.lock();
        const long seen = counter;
        if (i % 16 == 0) co_await crew::yield_now();  // hold the lock across a suspension
        counter = seen + 1;
    }
}

TEST_P(mutex_suite, mutual_exclusion_across_suspension) {
    crew_test::watchdog dog(120s);
    crew::async_mutex m;
    long counter = 0;  // plain: the mutex orders every access (TSan checks)
    const long tasks = 16, times = crew_test::scaled(5000);
    std::vector<crew::join_handle<void>> hs;
    for (long t = 0; t < tasks; ++t) hs.push_back(pool().spawn(add_under_lock(m, counter, times)));
    for (auto& h : hs) h.get();
    EXPECT_EQ(counter, tasks * times);
    EXPECT_FALSE(m.is_locked());
}

crew::task<void> lock_and_record(crew::async_mutex& m, std::vector<int>& order, int id) {
    auto lock = co_await m.lock();
    order.push_back(id);
}

TEST_P(mutex_suite, fifo_hand_off) {
    crew_test::watchdog dog(60s);
    crew::async_mutex m;
    std::vector<int> order;
    ASSERT_TRUE(m.try_lock());
    std::vector<crew::join_handle<void>> hs;
    for (int i = 0; i < 10; ++i) {
        hs.push_back(pool().spawn(lock_and_record(m, order, i)));
        ASSERT_TRUE(wait_until([&] { return m.waiters() == static_cast<std::size_t>(i + 1); }));
    }
    m.unlock();
    for (auto& h : hs) h.get();
    ASSERT_EQ(order.size(), 10u);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
    EXPECT_FALSE(m.is_locked());
}

crew::task<void> guard_moves(crew::async_mutex& m) {
    auto a = co_await m.lock();
    crew::async_mutex::guard b = std::move(a);
    EXPECT_FALSE(a.owns_lock());
    EXPECT_TRUE(b.owns_lock());
    EXPECT_EQ(b.mutex(), &m);
    b.unlock();
    EXPECT_FALSE(m.is_locked());
    auto c = co_await m.lock();
    EXPECT_TRUE(m.is_locked());
}

TEST_P(mutex_suite, guard_is_movable) {
    crew_test::watchdog dog(60s);
    crew::async_mutex m;
    pool().block_on(guard_moves(m));
    EXPECT_FALSE(m.is_locked());
}

// A chain of 100,000 hand-offs: each holder's unlock wakes the next through the scheduler, never
// on its own stack.
crew::task<void> chain_link(crew::async_mutex& m, std::atomic<long>& done, std::atomic<int>& nested) {
    auto lock = co_await m.lock();
    if (prim_test::inside_release) nested.fetch_add(1);
    done.fetch_add(1, std::memory_order_relaxed);
    prim_test::release_scope scope;
    lock.unlock();
}

TEST_P(mutex_suite, hand_off_chain_of_100k_without_recursion) {
    crew_test::watchdog dog(120s);
    const long n = crew_test::scaled(100'000);
    crew::async_mutex m;
    std::atomic<long> done{0};
    std::atomic<int> nested{0};
    ASSERT_TRUE(m.try_lock());
    std::vector<crew::join_handle<void>> hs;
    hs.reserve(static_cast<std::size_t>(n));
    for (long i = 0; i < n; ++i) hs.push_back(pool().spawn(chain_link(m, done, nested)));
    ASSERT_TRUE(wait_until([&] { return m.waiters() == static_cast<std::size_t>(n); }, 60s));
    m.unlock();
    for (auto& h : hs) h.get();
    EXPECT_EQ(done.load(), n);
    EXPECT_EQ(nested.load(), 0);
    EXPECT_FALSE(m.is_locked());
}

crew::task<int> lock_briefly(crew::async_mutex& m) {
    auto lock = co_await m.lock();
    co_return 1;
}

// Cancel a waiter while the holder unlocks: either the waiter got the lock (and released it) or
// it threw cancelled_error -- the lock is never lost, so afterwards it is free.
TEST_P(mutex_suite, cancel_waiter_races_unlock_never_loses_the_lock) {
    crew_test::watchdog dog(120s);
    const long rounds = crew_test::scaled(2000);
    long got = 0;
    for (long r = 0; r < rounds; ++r) {
        crew::async_mutex m;
        ASSERT_TRUE(m.try_lock());
        auto a = pool().spawn(lock_briefly(m));
        ASSERT_TRUE(wait_until([&] { return m.waiters() == 1; }));
        auto b = pool().spawn(lock_briefly(m));  // the next in line, for a cancelled a's hand-off
        ASSERT_TRUE(wait_until([&] { return m.waiters() == 2; }));
        std::thread canceller([&] { a.cancel(); });
        m.unlock();
        canceller.join();
        try {
            got += a.get();
        } catch (const crew::cancelled_error&) {
        }
        EXPECT_EQ(b.get(), 1);
        EXPECT_FALSE(m.is_locked());
        EXPECT_EQ(m.waiters(), 0u);
    }
    EXPECT_LE(got, rounds);
}

crew::task<int> lock_expect_abandoned(crew::async_mutex& m) {
    try {
        auto lock = co_await m.lock();
    } catch (const crew::usage_error&) {
        co_return 1;
    }
    co_return 0;
}

TEST_P(mutex_suite, destroy_with_waiters_throws_usage_error_in_them) {
    crew_test::watchdog dog(60s);
    auto m = std::make_unique<crew::async_mutex>();
    ASSERT_TRUE(m->try_lock());
    std::vector<crew::join_handle<int>> hs;
    for (int i = 0; i < 8; ++i) hs.push_back(pool().spawn(lock_expect_abandoned(*m)));
    ASSERT_TRUE(wait_until([&] { return m->waiters() == 8; }));
    m.reset();  // (destroying a locked mutex is otherwise undefined; nobody unlocks it here)
    for (auto& h : hs) EXPECT_EQ(h.get(), 1);
}

CREW_ALL_POOL_SIZES(mutex_suite);

}  // namespace
