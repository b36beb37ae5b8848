// bench/metrics_cost.cpp -- metrics on vs compiled out: fib (crew::join) and skynet
// (crew::task_group), median of 9 runs, on pools of 1 and 2 workers. Not part of the CMake build:
// compiled by hand against a CREW_METRICS=ON and a CREW_METRICS=OFF libcrew.a (the -DCREW_METRICS
// value must match the library's), see docs/OBSERVABILITY.md "Metrics on vs compiled out".
#include <crew/crew.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
long fib(int n) {
    if (n < 2) return n;
    auto [a, b] = crew::join([&] { return fib(n - 1); }, [&] { return fib(n - 2); });
    return a + b;
}
long skynet(long num, long size) {
    if (size == 1) return num;
    long sums[10] = {};
    crew::task_group g;
    for (int i = 0; i < 10; ++i) g.run([&sums, i, num, size] { sums[i] = skynet(num + i * (size / 10), size / 10); });
    g.wait();
    long t = 0;
    for (long s : sums) t += s;
    return t;
}
template <class F> double median_ms(crew::pool& p, F f) {
    std::vector<double> v;
    for (int i = 0; i < 9; ++i) {
        auto a = std::chrono::steady_clock::now();
        p.run(f);
        v.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
    }
    std::sort(v.begin(), v.end());
    return v[4];
}
int main() {
    for (int t : {1, 2}) {
        crew::pool p(t);
        std::printf("fib(30)@%d %.1f ms  ", t, median_ms(p, [] { return fib(30); }));
        std::printf("skynet(1e6)@%d %.1f ms\n", t, median_ms(p, [] { return skynet(0, 1000000); }));
    }
}
