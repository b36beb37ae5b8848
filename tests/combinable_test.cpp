// crew::combinable (and its alias enumerable_thread_specific): per-thread values on workers of
// pools of 1, 2, 4 and 8 and on outside threads, combine/combine_each/iteration, clear, move-only
// and non-default-constructible values, and a combinable destroyed and another built at its address.
#include <crew/crew.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

constexpr long n = 200'000;
constexpr long expected_sum = n * (n - 1) / 2;

class combinable_test : public crew_test::pool_test {};

TEST_P(combinable_test, parallel_for_contributions_sum_exactly) {
    crew_test::watchdog dog(60s);
    crew::combinable<long> sum;
    pool().run([&] { crew::parallel_for(0L, n, [&](long i) { sum.local() += i; }); });
    EXPECT_EQ(sum.combine(std::plus<>{}), expected_sum);
    EXPECT_GE(sum.size(), 1u);
    EXPECT_LE(sum.size(), workers());  // only this pool's workers called local()
    long each = 0;
    sum.combine_each([&](long v) { each += v; });
    EXPECT_EQ(each, expected_sum);
    long iterated = 0;
    for (long v : sum) iterated += v;
    EXPECT_EQ(iterated, expected_sum);
}

TEST_P(combinable_test, each_value_belongs_to_one_thread_and_has_its_own_cache_lines) {
    crew_test::watchdog dog(60s);
    crew::combinable<std::thread::id> owner([] { return std::this_thread::get_id(); });
    crew::combinable<char> bytes;
    std::atomic<bool> wrong{false};
    pool().run([&] {
        crew::parallel_for(0, 10'000, [&](int) {
            if (owner.local() != std::this_thread::get_id()) wrong = true;  // finit ran on this thread
            bytes.local() = 1;
        });
    });
    EXPECT_FALSE(wrong.load());
    std::set<std::thread::id> distinct(owner.begin(), owner.end());
    EXPECT_EQ(distinct.size(), owner.size());
    for (const char& b : bytes)
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&b) % crew::detail::cache_line, 0u);
}

TEST_P(combinable_test, outside_threads_and_workers_each_get_a_slot_that_outlives_the_thread) {
    crew_test::watchdog dog(60s);
    crew::enumerable_thread_specific<long> sum;  // the same type
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (long i = t; i < n; i += 4) sum.local() += i;
        });
    for (auto& t : threads) t.join();  // the values stay after their threads are gone
    EXPECT_EQ(sum.size(), 4u);
    pool().run([&] { crew::parallel_for(0L, n, [&](long i) { sum.local() += i; }); });
    EXPECT_EQ(sum.combine(std::plus<>{}), 2 * expected_sum);
    EXPECT_LE(sum.size(), 4u + workers());
}

TEST_P(combinable_test, clear_starts_every_thread_afresh) {
    crew_test::watchdog dog(60s);
    crew::combinable<long> sum([] { return 5L; });
    pool().run([&] { crew::parallel_for(0L, n, [&](long i) { sum.local() += i; }); });
    std::size_t slots = sum.size();
    EXPECT_EQ(sum.combine(std::plus<>{}), expected_sum + 5 * static_cast<long>(slots));
    sum.clear();
    EXPECT_EQ(sum.size(), 0u);
    EXPECT_EQ(sum.begin(), sum.end());
    bool exists = true;
    EXPECT_EQ(sum.local(exists), 5);  // a fresh value, not the old one
    EXPECT_FALSE(exists);
    sum.clear();
    pool().run([&] { crew::parallel_for(0L, n, [&](long i) { sum.local() += i; }); });
    EXPECT_EQ(sum.combine(std::plus<>{}), expected_sum + 5 * static_cast<long>(sum.size()));
}

TEST_P(combinable_test, a_combinable_built_where_a_dead_one_was_starts_empty) {
    crew_test::watchdog dog(60s);
    using C = crew::combinable<long>;
    alignas(C) unsigned char storage[sizeof(C)];
    for (int round = 0; round < 20; ++round) {
        C* c = new (storage) C;  // the same address (and, reused, the same key index) every round
        EXPECT_EQ(c->size(), 0u);
        bool exists = true;
        EXPECT_EQ(c->local(exists), 0);  // not the previous round's value
        EXPECT_FALSE(exists);
        pool().run([&] { crew::parallel_for(0L, n / 20, [&](long i) { c->local() += i; }); });
        EXPECT_EQ(c->combine(std::plus<>{}), (n / 20) * (n / 20 - 1) / 2);
        c->~C();
    }
}

TEST_P(combinable_test, many_live_combinables_stay_independent) {
    crew_test::watchdog dog(60s);
    std::vector<std::unique_ptr<crew::combinable<long>>> all;
    for (int k = 0; k < 50; ++k) all.push_back(std::make_unique<crew::combinable<long>>());
    pool().run([&] {
        crew::parallel_for(0, 50 * 1000, [&](int i) { all[static_cast<std::size_t>(i % 50)]->local() += i % 50; });
    });
    for (int k = 0; k < 50; ++k) EXPECT_EQ(all[static_cast<std::size_t>(k)]->combine(std::plus<>{}), 1000L * k);
    all.erase(all.begin(), all.begin() + 25);  // free some keys, then reuse them
    for (int k = 0; k < 25; ++k) all.push_back(std::make_unique<crew::combinable<long>>());
    pool().run([&] { crew::parallel_for(0, 50 * 100, [&](int i) { all[static_cast<std::size_t>(i % 50)]->local() += 1; }); });
    for (auto& c : all) {
        long total = c->combine(std::plus<>{});
        EXPECT_TRUE(total == 100 || total >= 1000) << total;  // the 25 new ones hold exactly 100
    }
    for (std::size_t k = 25; k < 50; ++k) EXPECT_EQ(all[k]->combine(std::plus<>{}), 100);
}

CREW_ALL_POOL_SIZES(combinable_test);

TEST(combinable, combine_on_empty_makes_a_fresh_value) {
    crew::combinable<int> plain;
    EXPECT_EQ(plain.combine(std::plus<>{}), 0);
    EXPECT_TRUE(plain.empty());
    crew::combinable<int> seven([] { return 7; });
    EXPECT_EQ(seven.combine(std::plus<>{}), 7);
    int calls = 0;
    seven.combine_each([&](int) { ++calls; });
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(seven.size(), 0u);  // combine made no slot
}

TEST(combinable, local_reports_whether_the_value_existed) {
    crew::combinable<int> c;
    bool exists = true;
    c.local(exists) = 3;
    EXPECT_FALSE(exists);
    EXPECT_EQ(c.local(exists), 3);
    EXPECT_TRUE(exists);
    EXPECT_EQ(&c.local(), &c.local());
}

struct no_default {
    explicit no_default(int v) : value(v) {}
    int value;
};

TEST(combinable, move_only_and_non_default_values_with_finit) {
    crew::pool p(4);
    crew::combinable<std::unique_ptr<long>> boxes([] { return std::make_unique<long>(0); });
    p.run([&] { crew::parallel_for(0L, n, [&](long i) { *boxes.local() += i; }); });
    long total = 0;
    boxes.combine_each([&](const std::unique_ptr<long>& b) { total += *b; });
    EXPECT_EQ(total, expected_sum);

    crew::combinable<no_default> odd([] { return no_default(1); });
    p.run([&] { crew::parallel_for(0, 1000, [&](int) { odd.local().value += 1; }); });
    no_default all = odd.combine([](no_default a, const no_default& b) { return no_default(a.value + b.value); });
    EXPECT_EQ(all.value, 1000 + static_cast<int>(odd.size()));
}

TEST(combinable, a_throwing_finit_reaches_the_caller_and_changes_nothing) {
    int attempts = 0;
    crew::combinable<int> c([&] {
        if (++attempts == 1) throw std::runtime_error("first init fails");
        return 42;
    });
    EXPECT_THROW(c.local(), std::runtime_error);
    EXPECT_EQ(c.size(), 0u);
    EXPECT_EQ(c.local(), 42);  // tried again
    EXPECT_EQ(c.size(), 1u);
}

TEST(combinable, first_local_calls_race_on_many_threads) {
    crew_test::watchdog dog(60s);
    for (int round = 0; round < 20; ++round) {
        crew::combinable<int> c;
        std::atomic<bool> go{false};
        std::vector<std::thread> threads;
        for (int t = 0; t < 8; ++t)
            threads.emplace_back([&] {
                while (!go.load()) std::this_thread::yield();
                for (int i = 0; i < 100; ++i) c.local() += 1;
                (void)c.size();  // safe alongside local()
            });
        go = true;
        for (auto& t : threads) t.join();
        EXPECT_EQ(c.size(), 8u);
        EXPECT_EQ(c.combine(std::plus<>{}), 800);
    }
}

// The docs/API.md example.
TEST(combinable, api_example) {
    crew::pool pool(4);
    // --- example: combinable
    crew::combinable<long> sum;                   // one long per thread, starting at 0
    pool.run([&] { crew::parallel_for(0, 100'000, [&](int i) { sum.local() += i; }); });
    long total = sum.combine(std::plus<>{});      // 4999950000
    std::size_t threads = sum.size();             // how many threads contributed
    long again = 0;
    for (long part : sum) again += part;          // the enumerable form
    // ---
    EXPECT_EQ(total, 4999950000L);
    EXPECT_EQ(again, total);
    EXPECT_GE(threads, 1u);
    EXPECT_LE(threads, 4u);
}

}  // namespace
