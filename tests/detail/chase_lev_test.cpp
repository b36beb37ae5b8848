// The Chase–Lev deque on its own: against a std::deque model, and under real thieves.
#include <crew/detail/chase_lev.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <random>
#include <thread>
#include <vector>

#include "support/watchdog.hpp"

namespace {

using crew::detail::chase_lev_deque;
using crew::detail::steal_status;

struct item {
    long id;
};

TEST(chase_lev, empty_deque_pops_and_steals_nothing) {
    chase_lev_deque<item> d(4);
    EXPECT_EQ(d.pop(), nullptr);
    auto r = d.steal();
    EXPECT_EQ(r.status, steal_status::empty);
    EXPECT_EQ(r.item, nullptr);
    EXPECT_EQ(d.pop(), nullptr);  // popping an empty deque twice keeps it consistent
    EXPECT_EQ(d.size_hint(), 0);
}

TEST(chase_lev, owner_is_lifo_thief_is_fifo) {
    chase_lev_deque<item> d(2);
    item a{1}, b{2}, c{3};
    d.push(&a);
    d.push(&b);
    d.push(&c);
    EXPECT_EQ(d.steal().item, &a);
    EXPECT_EQ(d.pop(), &c);
    EXPECT_EQ(d.pop(), &b);
    EXPECT_EQ(d.pop(), nullptr);
}

// The owner-only pop of a deque nobody steals from (a pool of one worker): LIFO, growth across
// the buffer boundary, empty pops that leave it consistent, and interleaving with pop().
TEST(chase_lev, pop_unshared_is_the_owners_lifo_pop) {
    chase_lev_deque<item> d(2);
    std::vector<item> items(100);
    EXPECT_EQ(d.pop_unshared(), nullptr);
    EXPECT_EQ(d.pop_unshared(), nullptr);  // twice: bottom is not lowered past top
    for (long i = 0; i < 100; ++i) {
        items[static_cast<std::size_t>(i)].id = i;
        d.push(&items[static_cast<std::size_t>(i)]);
    }
    EXPECT_EQ(d.size_hint(), 100);
    for (long i = 99; i >= 50; --i) EXPECT_EQ(d.pop_unshared()->id, i);
    EXPECT_EQ(d.pop()->id, 49);  // the fenced pop agrees on the indices
    EXPECT_EQ(d.steal().item->id, 0);
    for (long i = 48; i >= 1; --i) EXPECT_EQ(d.pop_unshared()->id, i);
    EXPECT_EQ(d.pop_unshared(), nullptr);
    EXPECT_EQ(d.pop(), nullptr);
    EXPECT_EQ(d.size_hint(), 0);
    d.push(&items[7]);
    EXPECT_EQ(d.pop_unshared(), &items[7]);
}

TEST(chase_lev, capacity_rounds_up_to_a_power_of_two) {
    chase_lev_deque<item> d(5);
    EXPECT_EQ(d.capacity(), 8);
    chase_lev_deque<item> one(0);
    EXPECT_EQ(one.capacity(), 1);
}

// Random single-threaded operation sequences against a std::deque model, growing from capacity 1.
TEST(chase_lev, matches_std_deque_model) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    for (unsigned seed = 1; seed <= 20; ++seed) {
        std::mt19937 rng(seed);
        chase_lev_deque<item> d(1);
        std::deque<item*> model;
        std::vector<item> storage(20000);
        std::size_t next = 0;
        for (int step = 0; step < 20000; ++step) {
            unsigned op = rng() % 10;
            if (op < 5 && next < storage.size()) {
                storage[next].id = static_cast<long>(next);
                d.push(&storage[next]);
                model.push_back(&storage[next]);
                ++next;
            } else if (op < 8) {
                item* got = d.pop();
                item* want = model.empty() ? nullptr : model.back();
                if (!model.empty()) model.pop_back();
                ASSERT_EQ(got, want) << "seed " << seed << " step " << step;
            } else {
                auto r = d.steal();
                item* want = model.empty() ? nullptr : model.front();
                if (!model.empty()) model.pop_front();
                ASSERT_EQ(r.item, want) << "seed " << seed << " step " << step;
                ASSERT_EQ(r.status, want ? steal_status::success : steal_status::empty);
            }
            ASSERT_EQ(d.size_hint(), static_cast<std::int64_t>(model.size()));
        }
    }
}

// One owner pushing and popping, `thieves` threads stealing: every id is taken exactly once.
void exactly_once(long ids, int thieves, std::int64_t initial_capacity) {
    chase_lev_deque<item> d(initial_capacity);
    std::vector<item> items(static_cast<std::size_t>(ids));
    std::vector<std::atomic<int>> taken(static_cast<std::size_t>(ids));
    std::atomic<bool> done{false};
    std::atomic<long> total{0};

    auto take = [&](item* it) {
        taken[static_cast<std::size_t>(it->id)].fetch_add(1, std::memory_order_relaxed);
        total.fetch_add(1, std::memory_order_relaxed);
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < thieves; ++t) {
        threads.emplace_back([&] {
            while (!done.load(std::memory_order_acquire) || d.size_hint() > 0) {
                auto r = d.steal();
                if (r.status == steal_status::success) take(r.item);
            }
        });
    }
    std::mt19937 rng(7);
    for (long i = 0; i < ids; ++i) {
        items[static_cast<std::size_t>(i)].id = i;
        d.push(&items[static_cast<std::size_t>(i)]);
        if (rng() % 3 == 0)
            if (item* it = d.pop()) take(it);
    }
    while (item* it = d.pop()) take(it);
    done.store(true, std::memory_order_release);
    for (auto& t : threads) t.join();
    while (item* it = d.pop()) take(it);
    EXPECT_EQ(total.load(), ids);
    long wrong = 0;
    for (long i = 0; i < ids; ++i)
        if (taken[static_cast<std::size_t>(i)].load() != 1) ++wrong;
    EXPECT_EQ(wrong, 0) << "ids taken zero or several times";
}

TEST(chase_lev, owner_and_three_thieves_take_every_id_exactly_once) {
    crew_test::watchdog dog(std::chrono::seconds(300));
    exactly_once(crew_test::scaled(1'000'000), 3, 256);
}

TEST(chase_lev, growth_from_capacity_two_while_thieves_steal) {
    crew_test::watchdog dog(std::chrono::seconds(300));
    exactly_once(crew_test::scaled(300'000), 3, 2);
}

// The owner keeps the deque at one or two items, so many pops race the thieves for the last
// element (the CAS path); a failed CAS there must leave the deque empty, not with a phantom item.
TEST(chase_lev, last_element_raced_by_owner_and_thieves) {
    crew_test::watchdog dog(std::chrono::seconds(300));
    const long ids = crew_test::scaled(1'000'000);
    chase_lev_deque<item> d(2);
    std::vector<item> items(static_cast<std::size_t>(ids));
    std::vector<std::atomic<int>> taken(static_cast<std::size_t>(ids));
    std::atomic<bool> done{false};
    std::vector<std::thread> thieves;
    for (int t = 0; t < 3; ++t)
        thieves.emplace_back([&] {
            while (!done.load(std::memory_order_acquire)) {
                auto r = d.steal();
                if (r.status == steal_status::success) taken[static_cast<std::size_t>(r.item->id)].fetch_add(1);
            }
        });
    for (long i = 0; i < ids; ++i) {
        items[static_cast<std::size_t>(i)].id = i;
        d.push(&items[static_cast<std::size_t>(i)]);
        if (i % 2 == 1) {
            if (item* it = d.pop()) taken[static_cast<std::size_t>(it->id)].fetch_add(1);
            if (item* it = d.pop()) taken[static_cast<std::size_t>(it->id)].fetch_add(1);
        }
        if (i % 3 == 0)
            if (item* it = d.pop()) taken[static_cast<std::size_t>(it->id)].fetch_add(1);
    }
    while (item* it = d.pop()) taken[static_cast<std::size_t>(it->id)].fetch_add(1);
    done.store(true, std::memory_order_release);
    for (auto& t : thieves) t.join();
    long wrong = 0;
    for (auto& t : taken)
        if (t.load() != 1) ++wrong;
    EXPECT_EQ(wrong, 0) << "ids taken zero or several times";
}

TEST(chase_lev, destruction_with_items_left_frees_its_buffers) {
    // Run under ASan/LSan: the deque owns only its buffers (live and retired), never the items.
    std::vector<item> items(1000);
    {
        chase_lev_deque<item> d(2);
        for (auto& it : items) d.push(&it);  // grows 2 -> 1024, retiring 9 buffers
        EXPECT_EQ(d.steal().item, &items[0]);
        EXPECT_GE(d.capacity(), 1000);
    }
    SUCCEED();
}

}  // namespace
