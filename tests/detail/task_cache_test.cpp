// Task block memory (task_cache and the pool's task_depot, crew/detail/task.hpp): a cache keeps
// up to max_cached blocks, hands its surplus to the depot in chains of depot_batch, refills from
// the depot when empty, and the depot's bound sends the rest to the heap. ASan checks every
// block's life; the patterns written into each block check that no block is handed out twice.
#include <crew/crew.hpp>
#include <crew/detail/task.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "support/watchdog.hpp"

namespace {

using crew::detail::task_cache;
using crew::detail::task_depot;

constexpr std::size_t batch = task_cache::depot_batch;
constexpr std::size_t cap = task_cache::max_cached;

void fill(void* p, std::uint8_t v) { std::memset(p, v, task_cache::block_size); }

TEST(task_cache, keeps_up_to_max_cached_then_spills_chains_to_the_depot) {
    task_depot depot;
    task_cache a(&depot);
    task_cache b(&depot);
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < cap + 2 * batch; ++i) blocks.push_back(a.allocate());
    std::set<void*> distinct(blocks.begin(), blocks.end());
    EXPECT_EQ(distinct.size(), blocks.size());
    for (void* p : blocks) {
        fill(p, 0xab);
        b.deallocate(p);  // freed on another cache than the one that allocated it
    }
    EXPECT_EQ(b.cached(), cap);  // the first max_cached stay; 2 chains went to the depot
    // a is empty: it refills from the depot, one chain at a time, with blocks b returned.
    void* first = a.allocate();
    EXPECT_TRUE(distinct.count(first) == 1) << "not a recycled block";
    EXPECT_EQ(a.cached(), batch - 1);
    std::vector<void*> again{first};
    for (std::size_t i = 1; i < 2 * batch; ++i) again.push_back(a.allocate());
    for (void* p : again) EXPECT_TRUE(distinct.count(p) == 1) << "not a recycled block";
    EXPECT_EQ(std::set<void*>(again.begin(), again.end()).size(), again.size()) << "a block handed out twice";
    EXPECT_EQ(a.cached(), 0u);
    // The depot is empty now: the next comes from the heap.
    void* fresh = a.allocate();
    EXPECT_EQ(distinct.count(fresh), 0u);
    a.deallocate(fresh);
    for (void* p : again) a.deallocate(p);
}

TEST(task_cache, a_full_depot_sends_chains_to_the_heap) {
    task_depot depot;
    task_cache a(&depot);
    task_cache b(&depot);
    const std::size_t n = cap + (task_depot::max_chains + 3) * batch;
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < n; ++i) blocks.push_back(a.allocate());
    for (void* p : blocks) b.deallocate(p);  // 3 chains beyond the bound: freed (ASan/LSan check)
    EXPECT_EQ(b.cached(), cap);
    std::size_t from_depot = 0;
    const std::set<void*> distinct(blocks.begin(), blocks.end());
    std::vector<void*> again;
    for (std::size_t i = 0; i < task_depot::max_chains * batch; ++i) {
        again.push_back(a.allocate());
        from_depot += distinct.count(again.back());
    }
    EXPECT_EQ(from_depot, task_depot::max_chains * batch);
    for (void* p : again) a.deallocate(p);
}

TEST(task_cache, without_a_depot_the_surplus_goes_to_the_heap) {
    task_cache a;
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < cap + batch + 5; ++i) blocks.push_back(a.allocate());
    for (void* p : blocks) a.deallocate(p);
    EXPECT_EQ(a.cached(), cap);
}

// One thread allocates and hands blocks over, another frees them (the spawn storm's shape), both
// caches on one depot. Each block carries its sequence number while it is out: a block handed out
// twice would be overwritten (TSan reports the race; the check below sees the wrong number).
TEST(task_cache, producer_and_consumer_threads_share_the_depot) {
    crew_test::watchdog dog(std::chrono::seconds(300));
    task_depot depot;
    constexpr std::size_t n = 200'000;
    constexpr std::size_t ring = 1024;
    std::vector<std::atomic<void*>> slots(ring);
    for (auto& s : slots) s.store(nullptr);
    std::atomic<bool> ok{true};
    std::thread consumer([&] {
        task_cache c(&depot);
        for (std::size_t i = 0; i < n; ++i) {
            void* p;
            while ((p = slots[i % ring].exchange(nullptr, std::memory_order_acquire)) == nullptr) std::this_thread::yield();
            std::uint64_t seen;
            std::memcpy(&seen, p, sizeof seen);
            if (seen != i) ok.store(false);
            c.deallocate(p);
        }
    });
    {
        task_cache a(&depot);
        for (std::size_t i = 0; i < n; ++i) {
            void* p = a.allocate();
            fill(p, 0x5a);
            std::uint64_t v = i;
            std::memcpy(p, &v, sizeof v);
            while (slots[i % ring].load(std::memory_order_relaxed) != nullptr) std::this_thread::yield();
            slots[i % ring].store(p, std::memory_order_release);
        }
        consumer.join();
    }
    EXPECT_TRUE(ok.load());
}

// Through a pool: a spawn storm inside a task at 2 workers recycles blocks through the depot.
TEST(task_cache, spawn_storm_in_a_pool_runs_every_task_once) {
    crew_test::watchdog dog(std::chrono::seconds(300));
    crew::pool p(2);
    for (int round = 0; round < 3; ++round) {
        std::atomic<long> count{0};
        p.run([&] {
            crew::task_group g;
            for (int i = 0; i < 50'000; ++i) g.run([&count] { count.fetch_add(1, std::memory_order_relaxed); });
            g.wait();
        });
        EXPECT_EQ(count.load(), 50'000);
    }
}

}  // namespace
