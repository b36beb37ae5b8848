// bench/async_yield_probe.cpp -- crew-bench's async_yield_many shape (200 tasks x 1000 yields,
// spawned from one task) on a pool of W workers, repeated on the same pool: prints the median time
// of a burst, and with `v` each burst's time and each worker's metrics over it (docs/BENCHMARKS.md,
// "Session 23": frames on 128-byte boundaries). Not part of the CMake build:
//   g++ -std=c++20 -O2 -DNDEBUG -Iinclude bench/async_yield_probe.cpp build/libcrew.a -o yprobe -lpthread
//   ./yprobe 2 40; ./yprobe 1 20; ./yprobe 2 10 v      (workers, bursts, verbose)
#include <crew/crew.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using crew::task;
using u64 = unsigned long long;

task<u64> yielder() {
    for (int i = 0; i < 1000; ++i) co_await crew::yield_now();
    co_return 1000;
}

task<u64> burst(u64 n) {
    std::vector<crew::join_handle<u64>> handles;
    for (u64 i = 0; i < n; ++i) handles.push_back(crew::spawn(yielder()));
    u64 sum = 0;
    for (auto& h : handles) sum += co_await std::move(h);
    co_return sum;
}

int main(int argc, char** argv) {
    crew::pool_options options;
    const std::size_t workers = argc > 1 ? static_cast<std::size_t>(std::atoi(argv[1])) : 2;
    const int bursts = argc > 2 ? std::atoi(argv[2]) : 40;
    const bool verbose = argc > 3 && std::strcmp(argv[3], "v") == 0;
    options.threads = workers;
    crew::pool pool(options);
    pool.block_on(burst(200));  // warm-up: the frame caches fill
    std::vector<double> ms;
    for (int i = 0; i < bursts; ++i) {
        const crew::pool_metrics before = pool.metrics();
        const auto t0 = std::chrono::steady_clock::now();
        if (pool.block_on(burst(200)) != 200'000) return 1;
        const auto t1 = std::chrono::steady_clock::now();
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        if (!verbose) continue;
        const crew::pool_metrics d = pool.metrics() - before;
        std::printf("%.2f ms", ms.back());
        for (std::size_t w = 0; w < d.workers.size(); ++w) {
            const auto& x = d.workers[w];
            std::printf(" | w%zu runs %llu steals %llu busy %.2f ms", w, static_cast<u64>(x.async_tasks_run),
                        static_cast<u64>(x.steals), static_cast<double>(x.busy_time.count()) / 1e6);
        }
        std::printf("\n");
    }
    std::sort(ms.begin(), ms.end());
    std::printf("median %.2f ms over %d bursts of 200 x 1000 yields, workers: %zu\n", ms[ms.size() / 2], bursts,
                workers);
}
