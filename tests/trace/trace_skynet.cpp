// The program the trace viewer check runs (tests/trace/render_trace.sh): skynet (every task spawns
// ten children until 10^4 leaves; the leaves' numbers are summed) on the default pool of
// CREW_NUM_THREADS workers, traced through CREW_TRACE, so the trace is written at process exit.
// Runs until the pool's counters saw a steal (at least 3 runs, at most 50), sleeping between runs
// so that the workers park.
#include <crew/crew.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace {

// A little work per leaf (about a microsecond), so that an idle worker has time to steal.
long leaf(long num) {
    volatile long x = num;
    for (int i = 0; i < 200; ++i) x = x + 1;
    return x - 200;
}

long skynet(long num, long size) {
    if (size == 1) return leaf(num);
    const long step = size / 10;
    std::atomic<long> sum{0};
    crew::task_group g;
    for (long i = 0; i < 10; ++i)
        g.run([&sum, num, step, i] { sum.fetch_add(skynet(num + i * step, step), std::memory_order_relaxed); });
    g.wait();
    return sum.load();
}

}  // namespace

int main() {
    crew::pool_options options;
    options.trace_events = std::size_t{1} << 17;  // the path comes from CREW_TRACE
    crew::configure_default_pool(options);
    if (!crew::default_pool().tracing()) {
        std::fputs("trace_skynet: set CREW_TRACE=path.json\n", stderr);
        return 2;
    }
    const long size = 10'000;
    const long expected = size * (size - 1) / 2;
    std::uint64_t steals = 0;
    int runs = 0;
    while (runs < 50 && (runs < 3 || steals == 0)) {
        const long got = crew::default_pool().run([&] { return skynet(0, size); });
        if (got != expected) {
            std::fprintf(stderr, "trace_skynet: wrong sum %ld, expected %ld\n", got, expected);
            return 1;
        }
        ++runs;
        steals = 0;
        for (const auto& w : crew::default_pool().metrics().workers) steals += w.steals;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::printf("trace_skynet: %d runs of skynet(%ld) on %zu workers, %llu steals\n", runs, size,
                crew::default_pool().size(), static_cast<unsigned long long>(steals));
    return steals > 0 || crew::default_pool().size() == 1 ? 0 : 3;
}
