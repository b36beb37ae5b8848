// tests/async/timer_wheel_test.cpp -- crew::detail::timer_wheel against a std::multimap model.
#include <crew/async/detail/timer_wheel.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <vector>

namespace {

using crew::detail::timer_node;
using crew::detail::timer_wheel;

std::uint64_t tick_of(std::uint64_t ns) { return (ns + 1023) >> timer_wheel::tick_shift; }

int scale_down() {
    const char* s = std::getenv("CREW_TEST_SCALE_DOWN");
    const int v = s != nullptr ? std::atoi(s) : 1;
    return v > 0 ? v : 1;
}

TEST(timer_wheel, empty_wheel_has_no_deadline) {
    timer_wheel w(5000);
    EXPECT_EQ(w.next_deadline(), timer_wheel::never);
    EXPECT_EQ(w.poll(1'000'000'000), nullptr);
}

TEST(timer_wheel, never_fires_early_and_past_deadlines_fire_at_once) {
    timer_wheel w(1'000'000);
    timer_node past, soon, later;
    past.deadline_ns = 10;
    soon.deadline_ns = 1'000'500;
    later.deadline_ns = 5'000'000;
    w.insert(later);
    w.insert(soon);
    w.insert(past);
    EXPECT_EQ(w.poll(1'000'000), &past);
    EXPECT_EQ(w.poll(1'000'499), nullptr);
    EXPECT_LE(w.next_deadline(), soon.deadline_ns + 1024);
    EXPECT_EQ(w.poll(1'000'000 + 2048), &soon);
    EXPECT_EQ(w.poll(4'999'999), nullptr);
    EXPECT_GE(5'000'000 + 1024, w.next_deadline());
    EXPECT_EQ(w.poll(5'001'024), &later);
    EXPECT_TRUE(w.empty());
}

TEST(timer_wheel, cancel_removes_and_reports) {
    timer_wheel w(0);
    timer_node a, b;
    a.deadline_ns = 70'000'000;
    b.deadline_ns = 80'000'000;
    w.insert(a);
    w.insert(b);
    EXPECT_TRUE(w.cancel(a));
    EXPECT_FALSE(w.cancel(a));
    EXPECT_EQ(w.size(), 1u);
    EXPECT_EQ(w.poll(100'000'000), &b);
    EXPECT_FALSE(w.cancel(b));
}

TEST(timer_wheel, far_deadlines_beyond_the_span_fire_on_time) {
    timer_wheel w(0);
    timer_node far;
    far.deadline_ns = (timer_wheel::span_ticks << timer_wheel::tick_shift) * 3 + 12345;
    w.insert(far);
    std::uint64_t now = 0;
    int steps = 0;
    while (w.poll(now) == nullptr) {
        const std::uint64_t next = w.next_deadline();
        ASSERT_NE(next, timer_wheel::never);
        ASSERT_LT(now, far.deadline_ns) << "polled past the deadline without firing";
        now = std::max(now + 1, next);
        ASSERT_LT(++steps, 1000);
    }
    EXPECT_GE(now, far.deadline_ns);
}

// Random inserts, cancels and advances; every poll must give exactly the model's due nodes, in
// tick order.
TEST(timer_wheel, differential_against_multimap) {
    std::mt19937_64 rng(42);
    const int rounds = 200'000 / scale_down();
    std::vector<std::unique_ptr<timer_node>> nodes;
    std::multimap<std::uint64_t, timer_node*> model;  // tick -> node
    std::set<timer_node*> late;  // inserted already due: they fire at the next poll, in any order
    std::uint64_t now = 123'456'789;
    timer_wheel w(now);
    for (int i = 0; i < rounds; ++i) {
        const unsigned op = static_cast<unsigned>(rng() % 10);
        if (op < 5) {
            auto n = std::make_unique<timer_node>();
            const unsigned magnitude = static_cast<unsigned>(rng() % 40);
            n->deadline_ns = now - 2000 + (rng() % ((std::uint64_t{1} << magnitude) + 4000));
            w.insert(*n);
            if (tick_of(n->deadline_ns) <= (now >> timer_wheel::tick_shift)) late.insert(n.get());
            model.emplace(tick_of(n->deadline_ns), n.get());
            nodes.push_back(std::move(n));
        } else if (op < 7 && !nodes.empty()) {
            timer_node* n = nodes[rng() % nodes.size()].get();
            const bool queued = n->queued();
            ASSERT_EQ(w.cancel(*n), queued);
            if (queued) {
                auto range = model.equal_range(tick_of(n->deadline_ns));
                for (auto it = range.first; it != range.second; ++it)
                    if (it->second == n) { model.erase(it); break; }
            }
        } else {
            const unsigned magnitude = static_cast<unsigned>(rng() % 34);
            now += rng() % (std::uint64_t{1} << magnitude);
            std::uint64_t last_tick = 0;
            while (timer_node* n = w.poll(now)) {
                const std::uint64_t t = tick_of(n->deadline_ns);
                ASSERT_GE(now, n->deadline_ns) << "fired early";
                if (late.erase(n) != 0) {
                    ASSERT_FALSE(model.empty());
                } else {
                    ASSERT_GE(t, last_tick) << "out of order";
                    last_tick = t;
                }
                auto range = model.equal_range(t);
                bool found = false;
                for (auto it = range.first; it != range.second; ++it)
                    if (it->second == n) { model.erase(it); found = true; break; }
                ASSERT_TRUE(found);
                if (!model.empty() && late.empty()) {
                    ASSERT_GE(model.begin()->first, last_tick) << "a due node was skipped";
                }
            }
            ASSERT_TRUE(model.empty() || model.begin()->first > (now >> timer_wheel::tick_shift))
                << "a due node was not given";
            ASSERT_EQ(w.size(), model.size());
            if (!model.empty()) {
                ASSERT_LE(w.next_deadline(), model.begin()->first << timer_wheel::tick_shift);
            }
        }
    }
}

// 1,000,000 pending timers: <= 100 bytes each (node + the wheel's share), and they fire in order.
TEST(timer_wheel, a_million_pending_timers_fit_and_fire_in_order) {
    const std::size_t count = 1'000'000;
    EXPECT_LE(sizeof(timer_node) + timer_wheel::overhead_bytes() / count, 100u);
    std::vector<timer_node> nodes(count);
    std::mt19937_64 rng(7);
    timer_wheel w(0);
    for (auto& n : nodes) {
        n.deadline_ns = 1'000'000 + rng() % 10'000'000'000ull;
        w.insert(n);
    }
    std::uint64_t now = 0, last = 0;
    std::size_t fired = 0;
    while (fired < count) {
        const std::uint64_t next = w.next_deadline();
        ASSERT_NE(next, timer_wheel::never);
        now = std::max(now, next) + 50'000;
        while (timer_node* n = w.poll(now)) {
            ASSERT_GE(tick_of(n->deadline_ns), last);
            ASSERT_GE(now, n->deadline_ns);
            last = tick_of(n->deadline_ns);
            ++fired;
        }
    }
    EXPECT_TRUE(w.empty());
}

}  // namespace
