// bench/spawn_metrics.cpp -- spawn_many_local (bench/problems/async.cpp's shape: n tasks spawned
// from inside one task, each bumps a counter, all awaited) run again and again on one pool, printing
// per run the time of the spawn loop, of the await loop and of the whole block_on, and each
// worker's metrics delta (pool.metrics() before and after): tasks run, tasks stolen / steal
// operations, failed steals, parks, LIFO-slot hits, busy / search / park time (us). It shows who
// runs the tasks (docs/BENCHMARKS.md, "Session 20: spawn_many_local at 2 workers"). Not part of
// the CMake build:
//   g++ -std=c++20 -O2 -DNDEBUG -Iinclude bench/spawn_metrics.cpp build/libcrew.a -o sm -lpthread
//   chrt -f 10 ./sm 2 15; chrt -f 10 ./sm 1 8        # usage: sm <workers> <runs>
#include <crew/crew.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
using crew::task; using u64 = unsigned long long;
task<void> bump(std::atomic<u64>* counter) { counter->fetch_add(1, std::memory_order_relaxed); co_return; }
task<u64> spawn_many_local(u64 n) {
    std::atomic<u64> counter{0};
    std::vector<crew::join_handle<void>> hs; hs.reserve(n);
    auto a = std::chrono::steady_clock::now();
    for (u64 i = 0; i < n; ++i) hs.push_back(crew::spawn(bump(&counter)));
    auto b = std::chrono::steady_clock::now();
    for (auto& h : hs) co_await std::move(h);
    auto c = std::chrono::steady_clock::now();
    using us = std::chrono::duration<double, std::micro>;
    std::printf("spawn %5.0f await %5.0f ", us(b - a).count(), us(c - b).count());
    co_return counter.load();
}
int main(int argc, char** argv) {
    unsigned w = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 2;
    int runs = argc > 2 ? std::atoi(argv[2]) : 20;
    crew::pool p(w);
    for (int r = 0; r < runs; ++r) {
        auto m0 = p.metrics();
        auto t0 = std::chrono::steady_clock::now();
        u64 s = p.block_on(spawn_many_local(10000));
        auto t1 = std::chrono::steady_clock::now();
        auto d = p.metrics() - m0;
        std::printf("%6.0f us s=%llu |", std::chrono::duration<double, std::micro>(t1 - t0).count(), s);
        for (auto& x : d.workers)
            std::printf(" run %5llu st %4llu/%3llu fail %4llu park %3llu lifo %5llu busy %4.0f srch %4.0f park %4.0f |",
                (u64)x.async_tasks_run, (u64)x.steals, (u64)x.steal_operations, (u64)x.failed_steals, (u64)x.parks, (u64)x.lifo_hits,
                x.busy_time.count() / 1e3, x.search_time.count() / 1e3, x.park_time.count() / 1e3);
        std::printf("\n");
    }
}
