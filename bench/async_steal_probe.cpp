// bench/async_steal_probe.cpp -- spawn+await on a pool of W workers with each worker's metrics over
// the timed runs (docs/BENCHMARKS.md, "Side by side after the session-11 merges": why spawn+await
// slows at 2 workers). Not part of the CMake build:
//   g++ -std=c++20 -O2 -DNDEBUG -Iinclude bench/async_steal_probe.cpp build/libcrew.a -o probe -lpthread
//   ./probe 1 10000 50; ./probe 2 10000 50      (workers, spawns per run, runs)
#include <crew/crew.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
using crew::task; using u64 = unsigned long long;
task<u64> one() { co_return 1; }
task<u64> spawn_await(u64 n) { u64 s = 0; for (u64 i = 0; i < n; ++i) s += co_await crew::spawn(one()); co_return s; }
int main(int argc, char** argv) {
    unsigned w = argc > 1 ? atoi(argv[1]) : 2; u64 n = argc > 2 ? strtoull(argv[2], 0, 10) : 10000; int it = argc > 3 ? atoi(argv[3]) : 50;
    crew::pool_options o; o.threads = w;
    crew::pool p(o);
    p.block_on(spawn_await(n));
    auto m0 = p.metrics();
    auto t0 = std::chrono::steady_clock::now();
    u64 s = 0; for (int i = 0; i < it; ++i) s += p.block_on(spawn_await(n));
    auto t1 = std::chrono::steady_clock::now();
    auto d = p.metrics() - m0;
    std::printf("ns/op %.1f (sum %llu)\n", std::chrono::duration<double, std::nano>(t1 - t0).count() / (double(n) * it), s);
    for (std::size_t i = 0; i < d.workers.size(); ++i) {
        auto& x = d.workers[i];
        std::printf("w%zu maxring %llu overflows %llu async_run %llu steals %llu steal_ops %llu failed %llu lifo %llu parks %llu unparks %llu searches %llu inj %llu busy %.2fms search %.2fms park %.2fms\n", i,
            (u64)x.max_ring_depth, (u64)x.ring_overflows, (u64)x.async_tasks_run, (u64)x.steals, (u64)x.steal_operations, (u64)x.failed_steals, (u64)x.lifo_hits, (u64)x.parks, (u64)x.unparks, (u64)x.searches, (u64)x.injector_pops,
            x.busy_time.count() / 1e6, x.search_time.count() / 1e6, x.park_time.count() / 1e6);
    }
}
