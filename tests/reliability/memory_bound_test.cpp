// tests/reliability/memory_bound_test.cpp -- what crew's memory is bounded by, and that it comes
// back after a drain (docs/GUARANTEES.md, "memory").
//
// Live heap bytes are counted by this binary's own operator new/delete (malloc_usable_size of each
// block), so the figures do not depend on the allocator; under a sanitizer (whose runtime owns
// operator new) the sanitizer allocator's own count is used. Peak RSS is reported too.
//
// 1. spawn_from_outside: one outside thread spawns 10,000,000 tasks while every worker is held at
//    a gate (so none runs before all are queued), then the gate opens and the pool drains. Peak is
//    reported against the theoretical minimum (tasks x sizeof(task object)); after the drain the
//    live heap must be within 10 % of the baseline (a warmed-up pool: full per-worker caches).
// 2. spawn_from_a_worker: a worker spawns n tasks onto its own deque before any runs (one-worker
//    pool), then drains. The deque keeps its grown buffer (crew does not shrink deques), so after
//    the drain the live heap may exceed the baseline by at most the documented bound: buffers of
//    at most twice the peak depth's power-of-two capacity (8-byte slots), plus the pool's block
//    depot (at most task_depot::max_chains chains of depot_batch blocks), which the drain's frees
//    fill once the worker's cache is full and which the warm-up's outside spawns leave empty.
#include <crew/crew.hpp>
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <thread>

#include "reliability/stress_support.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CREW_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CREW_TEST_SANITIZED 1
#endif
#endif
#if defined(CREW_TEST_SANITIZED)
#include <sanitizer/allocator_interface.h>
#endif

#if !defined(CREW_TEST_SANITIZED)
namespace {
std::atomic<long long> live_bytes{0};
std::atomic<long long> peak_bytes{0};

void count_alloc(void* p) noexcept {
    long long now = live_bytes.fetch_add(static_cast<long long>(malloc_usable_size(p)), std::memory_order_relaxed) +
                    static_cast<long long>(malloc_usable_size(p));
    long long peak = peak_bytes.load(std::memory_order_relaxed);
    while (now > peak && !peak_bytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
}
void count_free(void* p) noexcept {
    if (p != nullptr)
        live_bytes.fetch_sub(static_cast<long long>(malloc_usable_size(p)), std::memory_order_relaxed);
}
void* counted_malloc(std::size_t n) {
    void* p = std::malloc(n == 0 ? 1 : n);
    if (p == nullptr) throw std::bad_alloc();
    count_alloc(p);
    return p;
}
void* counted_aligned(std::size_t n, std::size_t align) {
    void* p = nullptr;
    if (posix_memalign(&p, align < sizeof(void*) ? sizeof(void*) : align, n == 0 ? 1 : n) != 0) throw std::bad_alloc();
    count_alloc(p);
    return p;
}
void counted_free(void* p) noexcept {
    count_free(p);
    std::free(p);
}
}  // namespace

void* operator new(std::size_t n) { return counted_malloc(n); }
void* operator new[](std::size_t n) { return counted_malloc(n); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_aligned(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_aligned(n, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }

namespace {
long long live_heap() { return live_bytes.load(); }
long long peak_heap() { return peak_bytes.load(); }
void reset_peak(long long to) { peak_bytes.store(to); }
}  // namespace
#else
namespace {
long long live_heap() { return static_cast<long long>(__sanitizer_get_current_allocated_bytes()); }
long long sampled_peak = 0;  // sampled where the peak is: when everything is queued
long long peak_heap() { return sampled_peak > live_heap() ? sampled_peak : live_heap(); }
void reset_peak(long long to) { sampled_peak = to; }
}  // namespace
#endif

namespace {

void sample_peak() {
#if defined(CREW_TEST_SANITIZED)
    if (live_heap() > sampled_peak) sampled_peak = live_heap();
#endif
}

double mib(long long bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

long long peak_rss_bytes() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<long long>(u.ru_maxrss) * 1024;
}

// Waits until the live heap is within `allowed` of `target` (tasks free their memory just after
// they report done), or 30 s pass; returns the last reading.
long long settle(long long target, long long allowed) {
    long long now = live_heap();
    for (int i = 0; i < 3000 && now > target + allowed; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        now = live_heap();
    }
    return now;
}

// The smallest task crew::spawn can make: the header plus one captured pointer plus the owner.
struct minimal_task_size {
    static constexpr std::size_t value = sizeof(crew::detail::task) + 2 * sizeof(void*);
};

void warm_up(crew::pool& p, long tasks) {
    std::atomic<long> done{0};
    for (long i = 0; i < tasks; ++i) p.spawn([&done] { done.fetch_add(1); });
    while (done.load() != tasks) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// Holds every worker at a gate, queues n tasks from this (outside) thread, opens the gate and
// waits until all ran. Returns false if a task ran before the gate opened.
bool gated_burst(crew::pool& p, std::size_t workers, long n) {
    std::atomic<bool> open{false};
    std::atomic<long> held{0}, done{0};
    for (std::size_t w = 0; w < workers; ++w)
        p.spawn([&] {
            held.fetch_add(1);
            while (!open.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        });
    while (held.load() != static_cast<long>(workers)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (long i = 0; i < n; ++i) p.spawn([&done] { done.fetch_add(1, std::memory_order_relaxed); });
    sample_peak();
    const bool none_early = done.load() == 0;
    open.store(true, std::memory_order_release);
    while (done.load() != n) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return none_early;
}

TEST(memory_bound, spawn_from_outside_then_drain) {
    crew_test::watchdog dog(std::chrono::seconds(900));
    const long n = crew_test::scaled(10'000'000);
    const std::size_t workers = 2;
    crew::pool p(workers);
    // Warm up with the same shape, smaller: both workers drain together and fill their task caches
    // (at most 4096 blocks each, kept for the pool's life), which belong in the baseline.
    ASSERT_TRUE(gated_burst(p, workers, 200'000));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const long long baseline = live_heap();
    reset_peak(baseline);

    EXPECT_TRUE(gated_burst(p, workers, n)) << "a task ran before the gate opened";

    const long long after = settle(baseline, baseline / 10);
    const long long peak = peak_heap();
    const long long minimum = n * static_cast<long long>(minimal_task_size::value);
    std::printf("[ memory   ] %ld tasks queued from outside: peak live heap %.1f MiB (%.1f B/task), theoretical "
                "minimum %.1f MiB (%zu B/task), ratio %.2f; peak RSS %.1f MiB; baseline %.2f MiB, after drain "
                "%.2f MiB\n",
                n, mib(peak - baseline), static_cast<double>(peak - baseline) / static_cast<double>(n), mib(minimum),
                minimal_task_size::value, static_cast<double>(peak - baseline) / static_cast<double>(minimum),
                mib(peak_rss_bytes()), mib(baseline), mib(after));
    EXPECT_LE(after, baseline + baseline / 10) << "memory did not return within 10 % of the baseline";
    // Each queued task costs one cache block (128 B) plus the allocator's header: bounded per task.
    EXPECT_LE(peak - baseline, n * static_cast<long long>(crew::detail::task_cache::block_size + 32));
}

TEST(memory_bound, spawn_from_a_worker_then_drain) {
    crew_test::watchdog dog(std::chrono::seconds(900));
    const long n = crew_test::tier_count(2'000'000, 10'000'000);
    crew::pool p(1);
    warm_up(p, 4 * static_cast<long>(crew::detail::task_cache::max_cached));
    p.run([] {});  // the worker's deque exists; whatever it allocated is in the baseline
    const long long baseline = live_heap();
    reset_peak(baseline);
    std::atomic<long> done{0};
    p.run([&] {
        for (long i = 0; i < n; ++i) crew::spawn([&done] { done.fetch_add(1, std::memory_order_relaxed); });
        EXPECT_EQ(done.load(), 0);  // one worker, and it is busy here: nothing ran yet
        sample_peak();
    });
    while (done.load() != n) std::this_thread::sleep_for(std::chrono::milliseconds(5));

    long long capacity = 1;
    while (capacity < n) capacity <<= 1;
    const long long deque_bound = 2 * capacity * static_cast<long long>(sizeof(void*));  // live + retired buffers
    constexpr long long depot_bound = static_cast<long long>(crew::detail::task_depot::max_chains *
                                                             crew::detail::task_cache::depot_batch *
                                                             crew::detail::task_cache::block_size);
    const long long after = settle(baseline + deque_bound + depot_bound, baseline / 10);
    std::printf("[ memory   ] %ld tasks on one deque: peak live heap %.1f MiB above baseline, peak RSS %.1f MiB; "
                "after drain %.1f MiB above baseline (documented bound: deque buffers <= %.1f MiB + block depot "
                "<= %.1f MiB)\n",
                n, mib(peak_heap() - baseline), mib(peak_rss_bytes()), mib(after - baseline), mib(deque_bound),
                mib(depot_bound));
    EXPECT_LE(after, baseline + deque_bound + depot_bound + baseline / 10);
}

}  // namespace
