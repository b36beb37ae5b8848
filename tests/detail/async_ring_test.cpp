// The coroutine run queue (crew/detail/async_ring.hpp) on its own: exact behaviour single-threaded,
// a differential test against std::deque (push, pop, overflow, steal into another ring, across the
// 2^32 index wrap), and a short owner + 2 thieves run (the long one: async_ring_stress_test.cpp).
#include <crew/detail/async_ring.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <random>
#include <stdexcept>
#include <vector>

#include "detail/async_ring_support.hpp"
#include "support/watchdog.hpp"

namespace {

using crew::detail::async_ring;
using crew::detail::ring_push;
using crew::detail::ring_steal;
using crew_test::ring_item;

template <std::size_t C>
using ring = async_ring<ring_item, crew::detail::std_atomics, C>;

// A sink that records every call.
struct recording_sink {
    std::vector<std::vector<ring_item*>> calls;
    void operator()(ring_item** items, std::size_t n) { calls.emplace_back(items, items + n); }
};

TEST(async_ring, empty_ring_pops_and_steals_nothing) {
    ring<4> r, dst;
    EXPECT_EQ(r.pop(), nullptr);
    auto s = r.steal_into(dst);
    EXPECT_EQ(s.status, ring_steal::empty);
    EXPECT_EQ(s.task, nullptr);
    EXPECT_EQ(s.count, 0u);
    EXPECT_TRUE(r.empty_hint());
    EXPECT_EQ(ring<4>::capacity(), 4u);
}

TEST(async_ring, owner_pops_fifo) {
    ring<8> r;
    ring_item a{1}, b{2}, c{3};
    recording_sink sink;
    for (ring_item* p : {&a, &b, &c}) EXPECT_EQ(r.push_back(p, sink), ring_push::pushed);
    EXPECT_EQ(r.size_hint(), 3u);
    EXPECT_EQ(r.pop(), &a);
    EXPECT_EQ(r.pop(), &b);
    EXPECT_EQ(r.pop(), &c);
    EXPECT_EQ(r.pop(), nullptr);
    EXPECT_TRUE(sink.calls.empty());
}

// Full ring, no steal in progress: the newest half and the new task go out in ONE call, in order.
TEST(async_ring, overflow_moves_the_newest_half_and_the_task_in_one_call) {
    ring<8> r;
    std::vector<ring_item> items(9);
    recording_sink sink;
    for (int i = 0; i < 9; ++i) items[i].id = i;
    for (int i = 0; i < 8; ++i) ASSERT_EQ(r.push_back(&items[i], sink), ring_push::pushed);
    EXPECT_EQ(r.push_back(&items[8], sink), ring_push::overflow_half);
    ASSERT_EQ(sink.calls.size(), 1u);
    ASSERT_EQ(sink.calls[0].size(), 5u);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(sink.calls[0][i], &items[4 + i]);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(r.pop(), &items[i]);  // the oldest half stays, in order
    EXPECT_EQ(r.pop(), nullptr);
}

TEST(async_ring, a_throwing_sink_leaves_the_ring_as_it_was) {
    ring<4> r;
    std::vector<ring_item> items(5);
    recording_sink ok;
    for (int i = 0; i < 4; ++i) r.push_back(&items[i], ok);
    auto throwing = [](ring_item**, std::size_t) { throw std::runtime_error("sink full"); };
    EXPECT_THROW(r.push_back(&items[4], throwing), std::runtime_error);
    EXPECT_EQ(r.size_hint(), 4u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(r.pop(), &items[i]);
}

TEST(async_ring, steal_takes_half_rounded_up_and_returns_the_last) {
    ring<8> r, dst;
    std::vector<ring_item> items(7);
    recording_sink sink;
    for (int i = 0; i < 7; ++i) r.push_back(&items[i], sink);
    auto s = r.steal_into(dst);  // 7 -> takes 4: ids 0..3, returns 3, dst holds 0..2
    ASSERT_EQ(s.status, ring_steal::success);
    EXPECT_EQ(s.count, 4u);
    EXPECT_EQ(s.task, &items[3]);
    EXPECT_EQ(dst.size_hint(), 3u);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(dst.pop(), &items[i]);
    EXPECT_EQ(r.size_hint(), 3u);
    EXPECT_EQ(r.pop(), &items[4]);
}

TEST(async_ring, steal_takes_at_most_half_the_capacity_and_needs_room) {
    ring<8> r, dst;
    std::vector<ring_item> items(16);
    recording_sink sink;
    for (int i = 0; i < 8; ++i) r.push_back(&items[i], sink);
    auto s = r.steal_into(dst);
    EXPECT_EQ(s.count, 4u);  // 8 - 8/2 = 4 = Capacity/2
    // dst now holds 3; give it 5 so it is more than half full: a thief with work must not steal.
    for (int i = 8; i < 10; ++i) dst.push_back(&items[i], sink);
    EXPECT_EQ(r.steal_into(dst).status, ring_steal::no_room);
}

// Random operations on two rings (A, B) against two std::deques, starting at index `first`.
void differential(std::uint32_t first, unsigned seed) {
    constexpr std::size_t cap = 16;
    ring<cap> a(first), b(first + 7);
    std::deque<ring_item*> ma, mb, injected;
    std::vector<ring_item> storage(30000);
    std::size_t next = 0;
    std::mt19937 rng(seed);
    auto sink_for = [&](std::deque<ring_item*>& model) {
        return [&injected, mp = &model](ring_item** items, std::size_t n) {
            ASSERT_TRUE(n == 1 || n == cap / 2 + 1);
            for (std::size_t i = 0; i < n; ++i) injected.push_back(items[i]);
            if (n > 1) mp->erase(mp->end() - static_cast<long>(cap / 2), mp->end());  // newest half
        };
    };
    for (int step = 0; step < 30000; ++step) {
        const unsigned op = rng() % 12;
        const bool on_a = rng() & 1;
        auto& r = on_a ? a : b;
        auto& other = on_a ? b : a;
        auto& m = on_a ? ma : mb;
        auto& mo = on_a ? mb : ma;
        if (op < 6 && next < storage.size()) {
            ring_item* p = &storage[next++];
            const bool full = m.size() == cap;
            ring_push got = r.push_back(p, sink_for(m));
            ASSERT_EQ(got, full ? ring_push::overflow_half : ring_push::pushed) << "step " << step;
            if (!full) m.push_back(p);
        } else if (op < 9) {
            ring_item* want = m.empty() ? nullptr : m.front();
            if (!m.empty()) m.pop_front();
            ASSERT_EQ(r.pop(), want) << "step " << step;
        } else {
            // `r` steals from `other` into itself.
            auto s = other.steal_into(r);
            if (m.size() > cap / 2) {
                ASSERT_EQ(s.status, ring_steal::no_room);
            } else if (mo.empty()) {
                ASSERT_EQ(s.status, ring_steal::empty);
            } else {
                std::size_t k = mo.size() - mo.size() / 2;
                if (k > cap / 2) k = cap / 2;
                ASSERT_EQ(s.status, ring_steal::success);
                ASSERT_EQ(s.count, k);
                for (std::size_t i = 0; i + 1 < k; ++i) m.push_back(mo[i]);
                ASSERT_EQ(s.task, mo[k - 1]);
                mo.erase(mo.begin(), mo.begin() + static_cast<long>(k));
            }
        }
        ASSERT_EQ(a.size_hint(), ma.size()) << "step " << step;
        ASSERT_EQ(b.size_hint(), mb.size()) << "step " << step;
    }
    while (ring_item* p = a.pop()) {
        ASSERT_EQ(p, ma.front());
        ma.pop_front();
    }
    EXPECT_TRUE(ma.empty());
}

TEST(async_ring, matches_std_deque_model) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    for (unsigned seed = 1; seed <= 8; ++seed) differential(0, seed);
}

// The same across the 2^32 wrap of the indices: starting just below it, the first few thousand
// operations cross it (and the second ring starts 7 further, so the two wrap at different times).
TEST(async_ring, matches_std_deque_model_across_the_index_wrap) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    for (std::uint32_t back : {1u, 5u, 16u, 300u, 4000u})
        for (unsigned seed = 1; seed <= 3; ++seed) differential(0u - back, seed * 97 + back);
}

TEST(async_ring, owner_and_two_thieves_take_each_task_once) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    for (std::uint32_t first : {0u, 0u - 1000u}) {
        crew_test::ring_exactly_once<64> run(std::max(crew_test::scaled(200'000), 100'000L), first);
        run.go();
        run.expect_exactly_once();
    }
}

}  // namespace
