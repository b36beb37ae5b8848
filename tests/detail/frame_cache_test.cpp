// Coroutine frame memory (allocate_frame / free_frame, crew/detail/frame_cache.hpp): per-worker size
// classes, frees on other threads returned to the owning worker, outside threads on the heap,
// frames that outlive their pool. ASan checks every block's life; the patterns written into each
// frame check that no block is handed out twice.
#include <crew/crew.hpp>
#include <crew/detail/async_schedule.hpp>
#include <crew/detail/frame_cache.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using crew::detail::allocate_frame;
using crew::detail::free_frame;

struct frame {
    void* p;
    std::size_t size;
};

void fill(frame f, unsigned char tag) { std::memset(f.p, tag, f.size); }
bool intact(frame f, unsigned char tag) {
    const auto* b = static_cast<const unsigned char*>(f.p);
    return std::all_of(b, b + f.size, [tag](unsigned char c) { return c == tag; });
}

TEST(frame_cache, size_classes) {
    using crew::detail::frame_class_of;
    EXPECT_EQ(frame_class_of(1), 0u);
    EXPECT_EQ(frame_class_of(64), 0u);
    EXPECT_EQ(frame_class_of(65), 1u);
    EXPECT_EQ(frame_class_of(1024), 4u);
    EXPECT_EQ(crew::detail::frame_block_size(4), 1024u);
}

TEST(frame_cache, outside_threads_use_the_heap_for_every_size) {
    for (std::size_t size : {1u, 16u, 48u, 100u, 1008u, 1009u, 5000u, 1u << 20}) {
        frame f{allocate_frame(size), size};
        ASSERT_NE(f.p, nullptr);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.p) % __STDCPP_DEFAULT_NEW_ALIGNMENT__, 0u);
        fill(f, 0x5a);
        EXPECT_TRUE(intact(f, 0x5a));
        free_frame(f.p, size);
    }
}

TEST(frame_cache, a_worker_reuses_its_own_frames) {
    crew::pool p(1);
    p.run([] {
        void* a = allocate_frame(200);
        free_frame(a, 200);
        void* b = allocate_frame(190);  // same class (256)
        EXPECT_EQ(a, b);
        free_frame(b, 190);
        void* big = allocate_frame(4000);  // beyond the classes: the heap
        free_frame(big, 4000);
    });
}

TEST(frame_cache, frames_freed_elsewhere_return_to_their_owner) {
    crew::pool p(1);
    std::vector<void*> first(64);
    p.run([&] {
        for (auto& f : first) f = allocate_frame(100);
    });
    std::thread([&] {  // an outside thread frees them: they go back to the worker's depot
        for (void* f : first) free_frame(f, 100);
    }).join();
    std::vector<void*> second(64);
    p.run([&] {
        for (auto& f : second) f = allocate_frame(100);
    });
    std::set<void*> a(first.begin(), first.end()), b(second.begin(), second.end());
    EXPECT_EQ(a, b) << "the worker should take back the frames freed on another thread";
    p.run([&] {
        for (void* f : second) free_frame(f, 100);
    });
}

TEST(frame_cache, frames_may_outlive_their_pool) {
    std::vector<frame> frames;
    {
        crew::pool p(2);
        p.run([&] {
            for (std::size_t i = 0; i < 100; ++i) {
                frame f{allocate_frame(16 + i * 9), 16 + i * 9};
                fill(f, 0x11);
                frames.push_back(f);
            }
        });
    }
    for (frame f : frames) {  // the pool is gone; its depots wait for the next owner
        EXPECT_TRUE(intact(f, 0x11));
        free_frame(f.p, f.size);
    }
    crew::pool q(2);  // adopts a recycled depot with the frames above on it
    q.run([] {
        for (int i = 0; i < 1000; ++i) free_frame(allocate_frame(100), 100);
    });
}

// Frames handed between every kind of thread: workers allocate and free (their own and others'),
// an outside thread frees and allocates too. Each frame carries a tag checked before it is freed.
class frame_cache_test : public crew_test::pool_test {};

TEST_P(frame_cache_test, frames_cross_threads_exactly_once) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    const long rounds = crew_test::scaled(200'000);
    std::mutex m;
    std::vector<frame> shared;  // guarded by m
    std::atomic<long> freed{0}, corrupt{0};
    auto take_one = [&]() -> frame {
        std::lock_guard lock(m);
        if (shared.empty()) return {nullptr, 0};
        frame f = shared.back();
        shared.pop_back();
        return f;
    };
    auto free_checked = [&](frame f) {
        if (!intact(f, static_cast<unsigned char>(f.size))) corrupt.fetch_add(1);
        fill(f, 0xdd);
        free_frame(f.p, f.size);
        freed.fetch_add(1);
    };
    std::atomic<bool> producing{true};
    std::thread drainer([&] {
        std::mt19937 rng(7);
        while (producing.load() || freed.load() < rounds) {
            if (frame f = take_one(); f.p != nullptr) {
                free_checked(f);
            } else {
                const std::size_t size = 1 + rng() % 1200;
                frame mine{allocate_frame(size), size};
                fill(mine, static_cast<unsigned char>(size));
                std::lock_guard lock(m);
                shared.push_back(mine);  // a worker may free it: it goes back to the heap/cache
            }
        }
    });
    pool().run([&] { crew::parallel_for(0L, rounds, [&](long i) {
        const std::size_t size = 1 + static_cast<std::size_t>(i * 7919) % 1200;
        frame f{allocate_frame(size), size};
        fill(f, static_cast<unsigned char>(size));
        {
            std::lock_guard lock(m);
            shared.push_back(f);
        }
        if (frame g = take_one(); g.p != nullptr) free_checked(g);
    }); });
    producing.store(false);
    drainer.join();
    for (frame f : shared) free_checked(f);
    EXPECT_EQ(corrupt.load(), 0);
    EXPECT_GE(freed.load(), rounds);
}

CREW_ALL_POOL_SIZES(frame_cache_test);

}  // namespace
