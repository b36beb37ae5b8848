// Parallel Fibonacci with crew::join: one fork per call, no cutoff.
//   usage: fib [n] [threads]
#include <crew/crew.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>

static long fib(int n) {
    if (n < 2) return n;
    auto [a, b] = crew::join([&] { return fib(n - 1); }, [&] { return fib(n - 2); });
    return a + b;
}

static long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

int main(int argc, char** argv) {
    int n = argc > 1 ? std::atoi(argv[1]) : 32;
    std::size_t threads = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : crew::default_concurrency();
    using clock = std::chrono::steady_clock;

    auto t0 = clock::now();
    long expected = fib_serial(n);
    auto t1 = clock::now();

    crew::pool pool(threads);
    long got = pool.run([&] { return fib(n); });
    auto t2 = clock::now();

    auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    std::printf("fib(%d) = %ld  serial %.1f ms  crew on %zu workers %.1f ms\n", n, got, ms(t1 - t0),
                pool.size(), ms(t2 - t1));
    auto m = pool.metrics().total();
    std::printf("tasks run %llu, steals %llu, parks %llu\n", static_cast<unsigned long long>(m.tasks_run),
                static_cast<unsigned long long>(m.steals), static_cast<unsigned long long>(m.parks));
    return got == expected ? 0 : 1;
}
