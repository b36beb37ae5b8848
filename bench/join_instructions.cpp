// bench/join_instructions.cpp -- a small driver for counting instructions per fork-join operation
// (docs/OBSERVABILITY.md, "Metrics cost, session 9"): fib through crew::join, skynet through a
// 10-way crew::fork_join, and skynet through crew::task_group as the public cross-runtime suite
// writes it (9 x run, the 10th inline, wait; session 12), on a pool of one worker. Not part of the
// CMake build:
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude bench/join_instructions.cpp build/libcrew.a -o drv -lpthread
//   valgrind --tool=callgrind ./drv 18; valgrind --tool=callgrind ./drv 22
// instructions per join = (the second total - the first) / (joins(22) - joins(18)) = ... / 24476,
// where joins(n) = joins(n-1) + joins(n-2) + 1 (28656 - 4180); for skynet, `./drv 10000 s` and
// `./drv 100000 s`: per 10-way fork_join = (difference) / 10000 (11111 - 1111 fork_joins). Add
// -DCREW_METRICS=0 to the compile line for the metrics-off figure (the fast path is all in this
// translation unit; session 9 linked the same metrics-ON library). `g` instead of `s`: the
// task_group form; instructions per child = (difference) / 99990 (111110 - 11110 children, 10 per
// node), and the fork_join form's difference / 99990 is per child as well (9 forked, 1 inline).
#include <crew/crew.hpp>
#include <cstdio>
#include <cstdlib>
long fib(int n) {
    if (n < 2) return n;
    auto [a, b] = crew::join([&] { return fib(n - 1); }, [&] { return fib(n - 2); });
    return a + b;
}
long sky(long num, long size) {
    if (size == 1) return num;
    long s[10];
    auto f = [&](int i) { s[i] = sky(num + i * (size / 10), size / 10); };
    crew::fork_join([&] { f(0); }, [&] { f(1); }, [&] { f(2); }, [&] { f(3); }, [&] { f(4); },
                    [&] { f(5); }, [&] { f(6); }, [&] { f(7); }, [&] { f(8); }, [&] { f(9); });
    long t = 0;
    for (long x : s) t += x;
    return t;
}
long sky_group(long num, long size) {
    if (size == 1) return num;
    long s[10];
    crew::task_group g;
    for (int i = 0; i < 9; ++i) g.run([&s, i, num, size] { s[i] = sky_group(num + i * (size / 10), size / 10); });
    s[9] = sky_group(num + 9 * (size / 10), size / 10);
    g.wait();
    long t = 0;
    for (long x : s) t += x;
    return t;
}
int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: drv <fib n> | drv <skynet size> s|g\n");
        return 2;
    }
    const long n = std::atol(argv[1]);
    crew::pool p(1);
    if (argc > 2 && argv[2][0] == 'g') std::printf("%ld\n", p.run([&] { return sky_group(0, n); }));
    else if (argc > 2) std::printf("%ld\n", p.run([&] { return sky(0, n); }));
    else std::printf("%ld\n", p.run([&] { return fib(static_cast<int>(n)); }));
}
