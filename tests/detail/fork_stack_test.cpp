// crew::detail::fork_stack (private forks, promoted on request) on its own, and through crew::join
// and crew::fork_join on pools of 1, 2, 4 and 8 workers: every fork runs exactly once, promoted forks
// reach idle workers while the owner keeps forking, and a sleeping pool is woken by private work.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "crew/detail/fork_stack.hpp"
#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using crew::detail::fork_stack;

struct fake_deque {
    std::vector<int*> items;
    void push(int* p) { items.push_back(p); }
};

TEST(fork_stack, forks_are_taken_back_privately_without_a_request) {
    fork_stack<int> s(2);
    int v[5] = {};
    for (int& x : v) EXPECT_FALSE(s.fork(&x));  // grows past 2
    EXPECT_EQ(s.open(), 5);
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(s.take_back());
    EXPECT_EQ(s.open(), 0);
    EXPECT_FALSE(s.has_private());
}

TEST(fork_stack, a_request_promotes_the_oldest_and_the_join_then_finds_it_promoted) {
    fork_stack<int> s(4);
    fake_deque d;
    int a = 0, b = 0, c = 0;
    EXPECT_FALSE(s.fork(&a));
    s.request();
    EXPECT_TRUE(s.requested());
    EXPECT_TRUE(s.fork(&b));  // the fork reports the request
    EXPECT_TRUE(s.promote_oldest(d));
    EXPECT_FALSE(s.requested());  // answered
    ASSERT_EQ(d.items.size(), 1u);
    EXPECT_EQ(d.items[0], &a);  // the oldest, not the newest
    EXPECT_TRUE(s.take_back());   // b: still private
    EXPECT_FALSE(s.take_back());  // a: promoted
    EXPECT_FALSE(s.has_private());
    // After a promoted take-back, new forks are private again.
    EXPECT_FALSE(s.fork(&c));
    EXPECT_TRUE(s.has_private());
    EXPECT_TRUE(s.take_back());
}

// The fork's fast path reads no request flag: a request zeroes the limit, so even a fork below the
// high-water depth (which would otherwise stay on the fast path) goes cold and reports it. A
// request answered elsewhere (a promotion before a wait) leaves a zero limit behind: the next fork
// only restores it.
TEST(fork_stack, a_request_sends_a_fork_below_the_high_water_depth_cold) {
    fork_stack<int> s(4);
    fake_deque d;
    int a = 0, b = 0, c = 0;
    EXPECT_FALSE(s.fork(&a));
    EXPECT_FALSE(s.fork(&b));
    EXPECT_TRUE(s.take_back());
    EXPECT_TRUE(s.take_back());  // high-water depth 2, depth 0
    EXPECT_TRUE(s.request_reaches_owner());
    s.request();
    EXPECT_TRUE(s.request_reaches_owner());  // the limit is zero
    EXPECT_TRUE(s.fork(&c));                 // depth 0 < 2, still reports the request
    EXPECT_TRUE(s.promote_oldest(d));
    EXPECT_FALSE(s.requested());
    EXPECT_FALSE(s.take_back());  // c was promoted
    s.request_wake();
    EXPECT_TRUE(s.request_reaches_owner());
    EXPECT_FALSE(s.promote_oldest(d));  // nothing private: only clears the request
    EXPECT_FALSE(s.fork(&a));           // cold (the zero limit), nothing pending: restored
    EXPECT_FALSE(s.fork(&b));
    EXPECT_TRUE(s.take_back());
    EXPECT_TRUE(s.take_back());
}

// The take-back count lives above the depth in one word; with 60 depth bits it wraps every 16
// take-backs, so the wrap path (and the count across it) is exercised here.
TEST(fork_stack, private_take_backs_are_counted_exactly_across_the_count_wrapping) {
    fork_stack<int, crew::detail::std_atomics, true, 60> s(2);
    fake_deque d;
    int v[3] = {};
    std::uint64_t expected = 0;
    for (int round = 0; round < 50; ++round) {
        for (int& x : v) s.fork(&x);  // three deep: grows once, then the limit is the capacity
        if (round % 7 == 3) {
            s.request();
            EXPECT_TRUE(s.fork(&v[0]));
            EXPECT_TRUE(s.promote_oldest(d));  // v[0] at depth 0: promoted, not counted
            EXPECT_TRUE(s.take_back());
            ++expected;
            for (int i = 0; i < 2; ++i) EXPECT_TRUE(s.take_back());
            expected += 2;
            EXPECT_FALSE(s.take_back());  // the promoted one
        } else {
            for (int i = 0; i < 3; ++i) EXPECT_TRUE(s.take_back());
            expected += 3;
        }
        EXPECT_EQ(s.open(), 0);
        EXPECT_EQ(s.inline_runs(), expected);
    }
    EXPECT_GT(expected, 16u * 4);  // wrapped several times
}

// crew::fork_join's take-backs, across the count's wrap (60 depth bits: every 16): 40 rounds of a
// 5-job fork_many; on every 5th round a request promotes the batch's oldest job (v[0], taken back
// last) after an extra fork, which is taken back and counted at once. `take_backs(s, promoted,
// expected)` takes the 5 jobs back its way and returns the inline runs it added.
template <class TakeBacks>
void wrapping_fork_join_rounds(TakeBacks take_backs) {
    fork_stack<int, crew::detail::std_atomics, true, 60> s(2);
    fake_deque d;
    int v[5] = {};
    std::uint64_t expected = 0;
    for (int round = 0; round < 40; ++round) {
        int* const batch[5] = {&v[0], &v[1], &v[2], &v[3], &v[4]};
        EXPECT_FALSE(s.fork_many(batch, [](std::uint64_t) noexcept {}));
        const bool promoted = round % 5 == 2;
        if (promoted) {
            s.request();
            EXPECT_TRUE(s.fork(&v[0]));        // answered: the oldest (v[0] of the batch) goes
            EXPECT_TRUE(s.promote_oldest(d));  // to the deque
            EXPECT_TRUE(s.take_back());        // the extra fork, counted by take_back itself
            ++expected;
        }
        expected += take_backs(s, promoted, expected);
        EXPECT_EQ(s.open(), 0);
        EXPECT_EQ(s.inline_runs(), expected);
    }
    EXPECT_GT(expected, 16u * 8);  // wrapped several times, some inside one count
}

// Take-backs without counting, then one count_inline for the private ones.
TEST(fork_stack, uncounted_take_backs_counted_at_once_across_the_count_wrapping) {
    wrapping_fork_join_rounds([](auto& s, bool promoted, std::uint64_t expected) {
        std::uint64_t ran = 0;
        for (int i = 0; i < (promoted ? 4 : 5); ++i) ran += s.take_back_uncounted() ? 1 : 0;
        if (promoted) {
            EXPECT_FALSE(s.take_back_uncounted());  // the promoted one: taken off, not private
        }
        EXPECT_EQ(s.inline_runs(), expected);                 // nothing counted before count_inline
        s.count_inline(ran);
        return ran;
    });
}

// The last job's take_back_counting(m) counts the m - 1 uncounted take-backs before it and its own
// in one add; when the last job was promoted it counts nothing (the caller's count_inline counts
// the others).
TEST(fork_stack, the_last_take_back_counts_the_uncounted_ones_across_the_count_wrapping) {
    wrapping_fork_join_rounds([](auto& s, bool promoted, std::uint64_t expected) -> std::uint64_t {
        for (int i = 0; i < 4; ++i) EXPECT_TRUE(s.take_back_uncounted());
        EXPECT_EQ(s.inline_runs(), expected);
        if (!promoted) {
            EXPECT_TRUE(s.take_back_counting(5));
            return 5;
        }
        EXPECT_FALSE(s.take_back_counting(5));  // promoted: counts nothing
        EXPECT_EQ(s.inline_runs(), expected);
        s.count_inline(4);
        return 4;
    });
}

TEST(fork_stack, an_uncounted_stack_reports_no_inline_runs) {
    fork_stack<int, crew::detail::std_atomics, false> s(2);
    int v[3] = {};
    for (int& x : v) s.fork(&x);
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(s.take_back());
    EXPECT_EQ(s.open(), 0);
    EXPECT_EQ(s.inline_runs(), 0u);
}

TEST(fork_stack, the_high_water_callback_sees_each_new_depth_once) {
    fork_stack<int> s(2);
    std::vector<std::uint64_t> seen;
    int v[5] = {};
    auto note = [&](std::uint64_t depth) { seen.push_back(depth); };
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 3 + round; ++i) s.fork(&v[i], note);
        for (int i = 0; i < 3 + round; ++i) EXPECT_TRUE(s.take_back());
    }
    EXPECT_EQ(seen, (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
    EXPECT_EQ(s.inline_runs(), 3u + 4u + 5u);
}

// fork_many(items) is K fork() calls in one: the same order (items[0] oldest), growth past the
// capacity and new high-water depths (cold), one request check for the batch.
TEST(fork_stack, forking_many_at_once_is_forking_them_one_by_one) {
    fork_stack<int> s(2);
    fake_deque d;
    std::vector<std::uint64_t> seen;
    auto note = [&](std::uint64_t depth) { seen.push_back(depth); };
    int a = 0, b = 0, c = 0, e = 0;
    int* const first[3] = {&a, &b, &c};
    EXPECT_FALSE(s.fork_many(first, note));  // grows past 2; depths 1..3 are new
    EXPECT_EQ(s.open(), 3);
    EXPECT_EQ(seen, (std::vector<std::uint64_t>{1, 2, 3}));
    s.request();
    int* const second[1] = {&e};
    EXPECT_TRUE(s.fork_many(second, note));  // reports the request
    EXPECT_TRUE(s.promote_oldest(d));
    ASSERT_EQ(d.items.size(), 1u);
    EXPECT_EQ(d.items[0], &a);  // items[0] of the first batch is the oldest
    EXPECT_TRUE(s.take_back());   // e
    EXPECT_TRUE(s.take_back());   // c
    EXPECT_TRUE(s.take_back());   // b
    EXPECT_FALSE(s.take_back());  // a: promoted
    EXPECT_EQ(s.open(), 0);
    EXPECT_EQ(s.inline_runs(), 3u);
    // Within the capacity and below the high-water depth: the batch's fast path.
    EXPECT_FALSE(s.fork_many(first, note));
    EXPECT_EQ(seen, (std::vector<std::uint64_t>{1, 2, 3, 4}));
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(s.take_back());
    EXPECT_FALSE(s.has_private());
}

TEST(fork_stack, promoting_with_nothing_private_only_clears_the_request) {
    fork_stack<int> s;
    fake_deque d;
    s.request();
    EXPECT_FALSE(s.promote_oldest(d));
    EXPECT_FALSE(s.requested());
    EXPECT_TRUE(d.items.empty());
}

// A binary tree of joins over [lo, hi) whose leaves count themselves; a slow leaf now and then
// gives thieves time to ask. Every third level forks three ways through fork_join.
// take_back(item, ...): the array need not nest (task_group children may lie above a join's job).
TEST(fork_stack, a_named_take_back_is_private_only_when_the_entry_is_the_newest) {
    fork_stack<int> s(2);
    fake_deque d;
    int counted = 0;
    const auto count = [&counted](int*) noexcept { ++counted; };
    int a = 0, job = 0, left = 0;
    EXPECT_FALSE(s.fork(&a));
    EXPECT_FALSE(s.fork(&job));
    EXPECT_FALSE(s.fork(&left));  // recorded above the job, never taken back by its frame
    EXPECT_FALSE(s.take_back(&job, d, count));  // not the newest: everything is published
    ASSERT_EQ(d.items.size(), 3u);
    EXPECT_EQ(d.items[0], &a);  // oldest first
    EXPECT_EQ(d.items[1], &job);
    EXPECT_EQ(d.items[2], &left);
    EXPECT_EQ(counted, 3);      // each counted before its push
    EXPECT_EQ(s.open(), 1);     // the depth dropped to the job's index: a stays open
    EXPECT_FALSE(s.has_private());
    EXPECT_EQ(s.inline_runs(), 0u);
    int c = 0;
    EXPECT_FALSE(s.fork(&c));   // private again above the promoted ones
    EXPECT_TRUE(s.take_back(&c, d, count));
    EXPECT_EQ(s.inline_runs(), 1u);  // counted as take_back() counts
    EXPECT_FALSE(s.take_back(&a, d, count));  // promoted
    EXPECT_EQ(s.open(), 0);
    EXPECT_EQ(d.items.size(), 3u);
}

TEST(fork_stack, leaving_a_task_publishes_what_it_left_and_restores_the_depth) {
    fork_stack<int> s(4);
    fake_deque d;
    int counted = 0;
    const auto count = [&counted](int*) noexcept { ++counted; };
    int outer = 0, x = 0, y = 0;
    EXPECT_FALSE(s.fork(&outer));  // an enclosing join's job
    const std::int64_t base = s.open();
    s.leave_task(base, d, count);  // nothing left: nothing happens
    EXPECT_TRUE(d.items.empty());
    EXPECT_FALSE(s.fork(&x));
    EXPECT_FALSE(s.fork(&y));
    s.leave_task(base, d, count);
    ASSERT_EQ(d.items.size(), 3u);  // everything private, oldest first
    EXPECT_EQ(d.items[1], &x);
    EXPECT_EQ(d.items[2], &y);
    EXPECT_EQ(counted, 3);
    EXPECT_EQ(s.open(), base);
    EXPECT_FALSE(s.take_back(&outer, d, count));  // the enclosing join finds its job promoted
    EXPECT_EQ(s.open(), 0);
}

void count_leaves(std::atomic<std::uint32_t>* hits, std::uint32_t lo, std::uint32_t hi, unsigned level) {
    if (hi - lo == 1) {
        hits[lo].fetch_add(1, std::memory_order_relaxed);
        if (lo % 1024 == 0) std::this_thread::sleep_for(std::chrono::microseconds(20));
        return;
    }
    if (hi - lo >= 3 && level % 3 == 2) {
        const std::uint32_t third = (hi - lo) / 3;
        crew::fork_join([&] { count_leaves(hits, lo, lo + third, level + 1); },
                        [&] { count_leaves(hits, lo + third, lo + 2 * third, level + 1); },
                        [&] { count_leaves(hits, lo + 2 * third, hi, level + 1); });
        return;
    }
    const std::uint32_t mid = lo + (hi - lo) / 2;
    crew::join([&] { count_leaves(hits, lo, mid, level + 1); }, [&] { count_leaves(hits, mid, hi, level + 1); });
}

class fork_stack_pool : public crew_test::pool_test {};

TEST_P(fork_stack_pool, every_fork_runs_exactly_once) {
    crew_test::watchdog dog(120s);
    const auto n = static_cast<std::uint32_t>(crew_test::scaled(1 << 18));
    auto hits = std::make_unique<std::atomic<std::uint32_t>[]>(n);
    for (int round = 0; round < 3; ++round) {
        for (std::uint32_t i = 0; i < n; ++i) hits[i].store(0, std::memory_order_relaxed);
        pool().run([&] { count_leaves(hits.get(), 0, n, 0); });
        std::uint32_t wrong = 0;
        for (std::uint32_t i = 0; i < n; ++i) wrong += hits[i].load(std::memory_order_relaxed) != 1;
        ASSERT_EQ(wrong, 0u) << "round " << round;
    }
}

TEST_P(fork_stack_pool, exceptions_from_private_and_promoted_halves_arrive) {
    crew_test::watchdog dog(60s);
    const long rounds = crew_test::scaled(2000);
    long caught = 0;
    pool().run([&] {
        for (long i = 0; i < rounds; ++i) {
            try {
                crew::join([&] { crew::join([] {}, [] {}); },
                           [&] {
                               if (i % 2 == 0) throw 7;
                           });
            } catch (int x) {
                EXPECT_EQ(x, 7);
                ++caught;
            }
        }
    });
    EXPECT_EQ(caught, (rounds + 1) / 2);
}

// With more than one worker, a job forked by an owner that keeps forking reaches another worker,
// which starts asleep: the owner's forks must wake it and, when it asks, promote the job. The inline
// half waits for the forked half, so this only finishes if the job is promoted and stolen.
TEST_P(fork_stack_pool, an_idle_worker_gets_a_forked_job_while_the_owner_keeps_forking) {
    if (workers() < 2) GTEST_SKIP() << "needs a second worker to take the job";
    crew_test::watchdog dog(60s);
    for (int round = 0; round < 20; ++round) {
        pool().run([] {
            std::atomic<bool> ran{false};
            crew::join(
                [&] {
                    while (!ran.load(std::memory_order_acquire)) crew::join([] {}, [] {});  // forks answer requests
                },
                [&] { ran.store(true, std::memory_order_release); });
        });
    }
}

CREW_ALL_POOL_SIZES(fork_stack_pool);

}  // namespace
