// The memory a spawn costs (docs/ASYNC.md "Memory"): one allocation per spawn (the task header
// lives in the root coroutine's frame), frames recycled through the worker's cache after a burst,
// and the header's lifetime beyond the destroyed frame. when_all's inline last child.
//
// A counting global operator new (this TU replaces the unaligned and the aligned families with
// malloc/posix_memalign/free, so ASan sees matching pairs; the frame cache's blocks come from the
// aligned one) counts allocations on the calling thread while armed. TSan's runtime
// defines operator new itself (a replacement does not link): under TSan the scenarios run (the
// races are what TSan checks) and the allocation counts are not asserted.
#include <crew/crew.hpp>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

#if defined(__SANITIZE_THREAD__)
#define CREW_TEST_COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CREW_TEST_COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef CREW_TEST_COUNTS_ALLOCATIONS
#define CREW_TEST_COUNTS_ALLOCATIONS 1
#endif

namespace {

constexpr bool counts_allocations = CREW_TEST_COUNTS_ALLOCATIONS != 0;
thread_local bool counting = false;
thread_local std::size_t allocations = 0;

[[maybe_unused]] void* counted_alloc(std::size_t n) {
    if (counting) ++allocations;
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}

[[maybe_unused]] void* counted_aligned_alloc(std::size_t n, std::align_val_t a) {
    if (counting) ++allocations;
    void* p = nullptr;
    const std::size_t align = static_cast<std::size_t>(a) < sizeof(void*) ? sizeof(void*) : static_cast<std::size_t>(a);
    if (posix_memalign(&p, align, n == 0 ? 1 : n) == 0) return p;
    throw std::bad_alloc();
}

// Count the allocations `f` makes on this thread.
template <class F>
std::size_t count_allocations(F&& f) {
    allocations = 0;
    counting = true;
    f();
    counting = false;
    return allocations;
}

}  // namespace

#if CREW_TEST_COUNTS_ALLOCATIONS
void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    if (counting) ++allocations;
    return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    if (counting) ++allocations;
    return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_aligned_alloc(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_aligned_alloc(n, a); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    try {
        return counted_aligned_alloc(n, a);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    try {
        return counted_aligned_alloc(n, a);
    } catch (...) {
        return nullptr;
    }
}
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
#endif


namespace {

using namespace std::chrono_literals;

class spawn_memory_test : public crew_test::pool_test {};

// A frame larger than the frame cache's biggest class (1024 bytes): it comes straight from
// ::operator new, so the count sees every frame, cached or not.
crew::task<int> big(int i) {
    std::array<unsigned char, 2048> buffer{};
    buffer[static_cast<std::size_t>(i) % buffer.size()] = 1;
    co_await crew::yield_now();  // the buffer lives across a suspension: it is in the frame
    co_return buffer[static_cast<std::size_t>(i) % buffer.size()];
}

crew::task<int> small(int i) { co_return i; }

constexpr int spawns = 1000;

// Spawn `spawns` tasks made by `make`, counting the spawner's allocations, then await them all.
template <class Make>
crew::task<std::size_t> spawn_counted(Make make, long& sum) {
    std::vector<crew::join_handle<int>> handles;
    handles.reserve(spawns);
    const std::size_t n = count_allocations([&] {
        for (int i = 0; i < spawns; ++i) handles.push_back(crew::spawn(make(i)));
    });
    for (auto& h : handles) sum += co_await std::move(h);
    co_return n;
}

TEST_P(spawn_memory_test, one_allocation_per_spawn) {
    crew_test::watchdog dog(60s);
    long sum = 0;
    // The frame is the one allocation: no separate header from the frame cache or the heap.
    const std::size_t big_count = pool().block_on(spawn_counted([](int i) { return big(i); }, sum));
    if (counts_allocations) {
        EXPECT_EQ(big_count, std::size_t{spawns});
    }
    EXPECT_EQ(sum, spawns);
    // Small frames come from the worker's cache: at most one heap allocation per spawn.
    sum = 0;
    const std::size_t small_count = pool().block_on(spawn_counted([](int i) { return small(i); }, sum));
    if (counts_allocations) {
        EXPECT_LE(small_count, std::size_t{spawns});
    }
    EXPECT_EQ(sum, long{spawns} * (spawns - 1) / 2);
}

crew::task<void> bump(std::atomic<int>* counter) {
    counter->fetch_add(1, std::memory_order_relaxed);
    co_return;
}

// spawn_many_local's shape: 10,000 spawns before any of them runs (on 1 worker), then all awaited.
crew::task<std::size_t> burst(std::atomic<int>& counter) {
    std::vector<crew::join_handle<void>> handles;
    handles.reserve(10000);
    const std::size_t n = count_allocations([&] {
        for (int i = 0; i < 10000; ++i) handles.push_back(crew::spawn(bump(&counter)));
    });
    for (auto& h : handles) co_await std::move(h);
    co_return n;
}

TEST_P(spawn_memory_test, a_burst_reuses_the_frames_of_the_previous_one) {
    crew_test::watchdog dog(60s);
    std::atomic<int> counter{0};
    (void)pool().block_on(burst(counter));
    const std::size_t second = pool().block_on(burst(counter));
    EXPECT_EQ(counter.load(), 20000);
    // On one worker every frame of the first burst was freed on the spawner's worker and kept by
    // its cache (4 MiB): the second burst allocates nothing. (With more workers, frames freed
    // elsewhere go back to their owner's depot; the count depends on who ran what.)
    if (counts_allocations && workers() == 1) {
        EXPECT_EQ(second, 0u);
    }
}

// The header lives in the root frame: the frame is destroyed when the handle takes the result,
// its memory stays while the header is referenced (done(), cancel() after completion).
TEST_P(spawn_memory_test, header_outlives_the_destroyed_frame) {
    crew_test::watchdog dog(60s);
    for (int round = 0; round < 200; ++round) {
        auto h = pool().spawn(small(round));
        auto h2 = pool().spawn(small(round + 1));
        while (!h.done()) std::this_thread::yield();
        h.cancel();  // finished: a no-op
        EXPECT_EQ(h.get(), round);
        h2.detach();  // dropped, maybe before it finished: its frame goes when it completes
    }
}

crew::task<int> fail_with(int code) {
    throw std::runtime_error(std::to_string(code));
    co_return code;
}

// when_all runs its last child inline; the first exception in argument order still wins, and a
// single child works.
TEST_P(spawn_memory_test, when_all_inline_last_child) {
    crew_test::watchdog dog(60s);
    auto body = []() -> crew::task<int> {
        int score = 0;
        auto [one] = co_await crew::when_all(small(7));
        score += one == 7;
        std::vector<crew::task<int>> single;
        single.push_back(small(8));
        score += (co_await crew::when_all(std::move(single)))[0] == 8;
        try {
            (void)co_await crew::when_all(small(1), fail_with(2), fail_with(3));
        } catch (const std::runtime_error& e) {
            score += std::string(e.what()) == "2";
        }
        try {
            (void)co_await crew::when_all(small(1), fail_with(3));
        } catch (const std::runtime_error& e) {
            score += std::string(e.what()) == "3";
        }
        std::vector<crew::task<int>> v;
        v.push_back(fail_with(4));
        v.push_back(fail_with(5));
        try {
            (void)co_await crew::when_all(std::move(v));
        } catch (const std::runtime_error& e) {
            score += std::string(e.what()) == "4";
        }
        std::vector<crew::task<int>> none;
        score += (co_await crew::when_all(std::move(none))).empty();
        co_return score;
    };
    EXPECT_EQ(pool().block_on(body()), 6);
}

CREW_ALL_POOL_SIZES(spawn_memory_test);

}  // namespace
