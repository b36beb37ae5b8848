// crew_edge_child -- scenarios that must run in a process of their own (exit codes, static
// destruction, the environment), started by process_test.cpp through edge::run_helper.
//
//   crew_edge_child static_destructor   a global's destructor uses crew; prints what it computed
//   crew_edge_child exit_from_task      std::exit(3) from a task on the default pool
//   crew_edge_child endless_task        main returns while a spawned task never ends
//   crew_edge_child num_threads         prints the default pool's size, or the exception
//   crew_edge_child thread_start_failure  a pool whose 4th (or, sanitized, 1st) thread cannot start
//   crew_edge_child join_depth <n>      n nested crew::join on a worker (a measuring tool, not a test)
//   crew_edge_child startup <threads>   prints how long pool{threads} takes to start and stop
#include <crew/crew.hpp>

#include <malloc.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "support/sanitizers.hpp"

namespace {

bool use_crew_at_exit = false;

// Constructed before main, so destroyed after everything main (and crew) created.
struct uses_crew_when_destroyed {
    ~uses_crew_when_destroyed() {
        if (!use_crew_at_exit) return;
        std::vector<long> v(100'000);
        std::iota(v.begin(), v.end(), 1L);
        long sum = crew::parallel_reduce(v.begin(), v.end(), 0L);
        auto [a, b] = crew::join([] { return 1; }, [] { return 2; });
        int seven = crew::default_pool().run([] { return 7; });
        std::printf("sum=%ld join=%d run=%d\n", sum, a + b, seven);
        std::fflush(stdout);
    }
} at_exit_user;

using crew_test::sanitized;

// Address space this process has mapped (VmSize), in bytes.
std::size_t mapped_bytes() {
    std::ifstream in("/proc/self/status");
    std::string key;
    while (in >> key) {
        if (key == "VmSize:") {
            std::size_t kib = 0;
            in >> kib;
            return kib << 10;
        }
        std::getline(in, key);
    }
    return 0;
}

int thread_start_failure() {
    crew::pool_options options;
    options.threads = 16;
    if (sanitized) {
        options.stack_size = std::size_t{1} << 46;  // 64 TiB
    } else {
        mallopt(M_ARENA_MAX, 1);  // no 64 MiB malloc arena per new thread
        const std::size_t stack = std::size_t{64} << 20;
        rlimit limit{};
        limit.rlim_cur = limit.rlim_max = mapped_bytes() + 3 * stack + stack / 2;
        if (setrlimit(RLIMIT_AS, &limit) != 0) return 10;
        try {
            crew::pool three(3);  // fits under the cap
            std::printf("pool of 3 under the cap: ran %d\n", three.run([] { return 3; }));
        } catch (const std::exception& e) {
            std::printf("pool of 3 under the cap failed: %s\n", e.what());
            return 11;
        }
    }
    try {
        crew::pool p(options);
        std::puts("pool of 16 started");
        return 12;
    } catch (const std::system_error& e) {
        std::printf("pool of 16: std::system_error: %s\n", e.what());
        return 0;
    }
}

long nested(long depth) {
    if (depth == 0) return 0;
    auto [a, b] = crew::join([&] { return nested(depth - 1); }, [] { return 1L; });
    return a + b;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string scenario = argc > 1 ? argv[1] : "";
    if (scenario == "static_destructor") {
        use_crew_at_exit = true;
        auto [a, b] = crew::join([] { return 1; }, [] { return 1; });  // the default pool exists now
        return a + b == 2 ? 0 : 1;
    }
    if (scenario == "exit_from_task") {
        crew::default_pool().run([] { std::exit(3); });
        std::puts("unreachable");
        return 1;
    }
    if (scenario == "endless_task") {
        static std::atomic<bool> started{false};
        crew::spawn([] {
            started.store(true);
            for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        });
        while (!started.load()) std::this_thread::yield();
        std::puts("main returns");
        return 0;
    }
    if (scenario == "num_threads") {
        try {
            std::printf("size=%zu\n", crew::default_pool().size());
        } catch (const std::invalid_argument& e) {
            std::printf("invalid_argument: %s\n", e.what());
        }
        return 0;
    }
    if (scenario == "thread_start_failure") return thread_start_failure();
    if (scenario == "join_depth" && argc > 2) {
        long depth = std::atol(argv[2]);
        long r = crew::default_pool().run([&] { return nested(depth); });
        std::printf("depth %ld ok (%ld)\n", depth, r);
        return 0;
    }
    if (scenario == "startup" && argc > 2) {
        crew::pool_options options;
        options.threads = std::strtoul(argv[2], nullptr, 10);
        if (argc > 3) options.stack_size = std::strtoul(argv[3], nullptr, 10);
        auto t0 = std::chrono::steady_clock::now();
        {
            crew::pool p(options);
            auto t1 = std::chrono::steady_clock::now();
            std::printf("start %.3f s\n", std::chrono::duration<double>(t1 - t0).count());
            t0 = t1;
        }
        std::printf("stop %.3f s\n",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        return 0;
    }
    std::fprintf(stderr, "crew_edge_child: unknown scenario '%s'\n", scenario.c_str());
    return 2;
}
