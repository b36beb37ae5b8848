// What tracing costs: ns per recorded event (the ring's record() alone), and the time per task of
// a spawn-heavy and a join-heavy workload with tracing off and on.
//   usage: trace_cost [tasks]     (prints a small table; docs/OBSERVABILITY.md, "Trace")
#include <crew/crew.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using clock_type = std::chrono::steady_clock;

double ns_since(clock_type::time_point start, long count) {
    return std::chrono::duration<double, std::nano>(clock_type::now() - start).count() / static_cast<double>(count);
}

long fib(int n) {
    if (n < 2) return n;
    auto [a, b] = crew::join([n] { return fib(n - 1); }, [n] { return fib(n - 2); });
    return a + b;
}

// Best of 7, off and on alternating (both pools alive at once, so both see the same machine):
// ns per spawned task (a task_group of `tasks` empty children) and per fib(25) call.
struct costs {
    double spawn_off = 1e30, spawn_on = 1e30, fib_off = 1e30, fib_on = 1e30;
};

void measure(crew::pool& p, long tasks, double& spawn_ns, double& fib_ns) {
    std::atomic<long> ran{0};
    auto start = clock_type::now();
    p.run([&] {
        crew::task_group g;
        for (long i = 0; i < tasks; ++i) g.run([&] { ran.fetch_add(1, std::memory_order_relaxed); });
        g.wait();
    });
    spawn_ns = std::min(spawn_ns, ns_since(start, tasks));
    start = clock_type::now();
    const long f = p.run([] { return fib(25); });
    fib_ns = std::min(fib_ns, ns_since(start, 242785));  // calls of fib(25)
    if (f != 75025 || ran.load() != tasks) std::abort();
}

costs workloads(std::size_t threads, const std::string& trace, long tasks) {
    crew::pool_options off, on;
    off.threads = on.threads = threads;
    on.trace = trace;
    on.trace_events = std::size_t{1} << 20;
    crew::pool p_off(off), p_on(on);
    costs c;
    double ignore_a = 1e30, ignore_b = 1e30;
    measure(p_off, tasks, ignore_a, ignore_b);  // warm-up
    measure(p_on, tasks, ignore_a, ignore_b);
    for (int rep = 0; rep < 7; ++rep) {
        measure(p_off, tasks, c.spawn_off, c.fib_off);
        measure(p_on, tasks, c.spawn_on, c.fib_on);
    }
    return c;
}

}  // namespace

int main(int argc, char** argv) {
    const long tasks = argc > 1 ? std::atol(argv[1]) : 200'000;
    const std::string path = "/tmp/crew-trace-cost-" + std::to_string(::getpid()) + ".json";
    {
        const long n = 10'000'000;
        std::uint64_t sink = 0;
        auto start = clock_type::now();
        for (long i = 0; i < n; ++i) sink += crew::detail::trace::now_ticks();
        const double tick_ns = ns_since(start, n);
        start = clock_type::now();
        for (long i = 0; i < n; ++i) sink += static_cast<std::uint64_t>(clock_type::now().time_since_epoch().count());
        std::printf("clock: now_ticks() %.1f ns, steady_clock::now() %.1f ns (%llu)\n", tick_ns, ns_since(start, n),
                    static_cast<unsigned long long>(sink % 10));
    }
    {
        crew::detail::trace::session s(path, 1, 1 << 16, "cost");
        crew::detail::trace::ring& r = s.ring_of(0);
        const long n = 10'000'000;
        double best = 1e30;
        for (int rep = 0; rep < 5; ++rep) {
            auto start = clock_type::now();
            for (long i = 0; i < n; ++i) r.record(crew::detail::trace::event_type::spawn);
            best = std::min(best, ns_since(start, n));
        }
        std::printf("record(): %.1f ns per event (best of 5 x %ld)\n", best, n);
    }
    std::printf("%-8s %-24s %-24s %s\n", "threads", "spawn ns/task off/on", "fib ns/call off/on", "");
    for (std::size_t threads : {1, 2}) {
        const costs c = workloads(threads, path, tasks);
        // A spawned task records 3 events (spawn, begin, end); fib's joins record none unless stolen.
        std::printf("%-8zu %9.1f / %-12.1f %9.2f / %-12.2f spawn: %+.1f ns per event\n", threads, c.spawn_off,
                    c.spawn_on, c.fib_off, c.fib_on, (c.spawn_on - c.spawn_off) / 3);
    }
    std::remove(path.c_str());
    return 0;
}
