// The outside-submission queue (crew/detail/injector.hpp) on its own: FIFO order, the batch pop's
// stopping rules, the length hint, close(), and every item exactly once under concurrent pushers
// and batch poppers.
#include <crew/detail/injector.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

#include "support/watchdog.hpp"

namespace {

struct item {
    item* next = nullptr;
    int id = 0;
    bool batchable = true;
};
using injector = crew::detail::basic_injector<item>;

std::vector<item> make_items(int n) {
    std::vector<item> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)].id = i;
    return v;
}

auto batchable = [](const item* i) { return i->batchable; };

TEST(injector, pop_is_fifo_and_the_length_hint_follows) {
    injector q;
    auto items = make_items(3);
    EXPECT_TRUE(q.empty_hint());
    EXPECT_EQ(q.pop(), nullptr);
    for (auto& i : items) ASSERT_TRUE(q.push(&i));
    EXPECT_EQ(q.size_hint(), 3u);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(q.pop()->id, i);
    EXPECT_EQ(q.pop(), nullptr);
    EXPECT_TRUE(q.empty_hint());
}

TEST(injector, a_batch_takes_the_head_then_the_run_behind_it_that_qualifies) {
    injector q;
    auto items = make_items(8);
    items[0].batchable = false;  // the head is taken whatever it is
    items[4].batchable = false;  // the run stops here
    for (auto& i : items) ASSERT_TRUE(q.push(&i));
    item* out[8] = {};
    ASSERT_EQ(q.pop_batch(out, 8, batchable), 4u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i]->id, i);
    EXPECT_EQ(q.size_hint(), 4u);
    ASSERT_EQ(q.pop_batch(out, 2, batchable), 2u);  // `max` bounds it
    EXPECT_EQ(out[0]->id, 4);
    EXPECT_EQ(out[1]->id, 5);
    ASSERT_EQ(q.pop_batch(out, 8, batchable), 2u);  // the queue's end
    EXPECT_EQ(out[0]->id, 6);
    EXPECT_EQ(out[1]->id, 7);
    EXPECT_TRUE(q.empty_hint());
    EXPECT_EQ(q.pop_batch(out, 8, batchable), 0u);
    EXPECT_EQ(q.pop_batch(out, 0, batchable), 0u);
    // Emptied by a batch, the queue links new items from its head again.
    ASSERT_TRUE(q.push(&items[2]));
    EXPECT_EQ(q.pop()->id, 2);
}

TEST(injector, close_refuses_pushes_but_keeps_what_is_queued) {
    injector q;
    auto items = make_items(5);
    ASSERT_TRUE(q.push(&items[0]));
    item* two[2] = {&items[1], &items[2]};
    ASSERT_TRUE(q.push_batch(two, 2));
    q.close();
    EXPECT_FALSE(q.push(&items[3]));
    item* refused[1] = {&items[4]};
    EXPECT_FALSE(q.push_batch(refused, 1));
    item* last[1] = {&items[3]};
    EXPECT_TRUE(q.push_batch(last, 1, /*from_worker=*/true));
    item* out[4] = {};
    ASSERT_EQ(q.pop_batch(out, 4, batchable), 4u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i]->id, i);
}

// Two pushers (single items and batches) against two batch poppers: each item comes out once, and
// each pusher's items come out in the order it pushed them.
TEST(injector, concurrent_pushers_and_batch_poppers_lose_and_repeat_nothing) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    constexpr int per_pusher = 200'000;
    injector q;
    auto items = make_items(2 * per_pusher);
    for (auto& i : items) i.batchable = i.id % 7 != 0;
    std::vector<std::atomic<int>> seen(items.size());
    std::atomic<int> popped{0};
    auto pusher = [&](int base) {
        for (int i = 0; i < per_pusher;) {
            if (i % 3 == 0 && i + 2 <= per_pusher) {
                item* two[2] = {&items[static_cast<std::size_t>(base + i)], &items[static_cast<std::size_t>(base + i + 1)]};
                ASSERT_TRUE(q.push_batch(two, 2));
                i += 2;
            } else {
                ASSERT_TRUE(q.push(&items[static_cast<std::size_t>(base + i)]));
                ++i;
            }
        }
    };
    std::atomic<int> out_of_order{0};
    auto popper = [&] {
        int last[2] = {-1, -1};  // the last id seen from each pusher, within one batch
        item* out[16];
        while (popped.load(std::memory_order_relaxed) < 2 * per_pusher) {
            const std::size_t n = q.pop_batch(out, 16, batchable);
            last[0] = last[1] = -1;
            for (std::size_t k = 0; k < n; ++k) {
                const int id = out[k]->id;
                const int from = id / per_pusher;
                if (id <= last[from]) out_of_order.fetch_add(1);
                last[from] = id;
                seen[static_cast<std::size_t>(id)].fetch_add(1, std::memory_order_relaxed);
            }
            popped.fetch_add(static_cast<int>(n), std::memory_order_relaxed);
        }
    };
    std::thread a(pusher, 0), b(pusher, per_pusher), c(popper), d(popper);
    a.join();
    b.join();
    c.join();
    d.join();
    int wrong = 0;
    for (auto& s : seen) wrong += s.load() != 1;
    EXPECT_EQ(wrong, 0);
    EXPECT_EQ(out_of_order.load(), 0);
    EXPECT_TRUE(q.empty_hint());
}

}  // namespace
