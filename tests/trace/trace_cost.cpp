// What tracing costs: ns per recorded event (the ring's record() alone), and the time per task of
// a spawn-heavy and a join-heavy workload with tracing off and on.
//   usage: trace_cost [tasks]     (prints a small table; docs/OBSERVABILITY_TRACE.md)
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

// Best of 5: ns per spawned task (task_group of `tasks` empty children) and per fib call.
void workloads(std::size_t threads, const std::string& trace, long tasks, double& spawn_ns, double& fib_ns) {
    crew::pool_options o;
    o.threads = threads;
    o.trace = trace;
    crew::pool p(o);
    spawn_ns = fib_ns = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
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
        if (f != 75025) std::abort();
    }
}

}  // namespace

int main(int argc, char** argv) {
    const long tasks = argc > 1 ? std::atol(argv[1]) : 200'000;
    const std::string path = "/tmp/crew-trace-cost-" + std::to_string(::getpid()) + ".json";
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
    std::printf("%-8s %-22s %-22s %s\n", "threads", "spawn ns/task off/on", "fib ns/call off/on", "");
    for (std::size_t threads : {1, 2}) {
        double s_off, f_off, s_on, f_on;
        workloads(threads, "", tasks, s_off, f_off);
        workloads(threads, path, tasks, s_on, f_on);
        // A spawned task records 3 events (spawn, begin, end).
        std::printf("%-8zu %8.1f / %-11.1f %8.2f / %-11.2f spawn: +%.1f ns per event\n", threads, s_off, s_on, f_off,
                    f_on, (s_on - s_off) / 3);
    }
    std::remove(path.c_str());
    return 0;
}
