// bench/find_kernel_cache.cpp -- crew's find_kernel against std::find_if in cache, no match, for ints,
// doubles, bytes, 64-bit integers and strings (docs/BENCHMARKS.md, "count_if / find_if leaf kernels,
// session 10"). Not part of the CMake build:
//   g++ -std=c++20 -O3 -DNDEBUG -Werror -Wall -Wextra -Iinclude bench/find_kernel_cache.cpp -o ft   (or clang++)
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include <time.h>
#include <crew/algorithms/leaf_kernels.hpp>
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
struct eqm2 { bool operator()(int x) const { return x == -2; } };
struct dgt { bool operator()(double x) const { return x > 1e9; } };
struct ceq { bool operator()(char x) const { return x == 'z'; } };
struct lgt { bool operator()(long long x) const { return x > 1000000; } };
struct seq { bool operator()(const std::string& s) const { return s == "zz"; } };
template <class V, class P> __attribute__((noinline)) std::size_t K(const V* p, std::size_t n) { P pr; return crew::detail::find_kernel(p, 0, n, pr); }
template <class V, class P> void go(const char* nm, std::size_t n, int reps, V fill) {
    std::vector<V> v(n, fill); double best = 1e9;
    for (int r = 0; r < reps; ++r) { double t0 = now(); std::size_t s = 0;
        for (int i = 0; i < 20; ++i) { asm volatile("" : : "r"(v.data()) : "memory"); s += K<V, P>(v.data(), n); }
        if (s != 20 * n) printf("BAD\n");
        best = std::min(best, (now() - t0) / 20 / n * 1e9); }
    printf("%-8s %.4f ns/elem\n", nm, best);
}
int main() { go<int, eqm2>("int", 100000, 40, 5); go<double, dgt>("double", 100000, 40, 5.0); go<char, ceq>("char", 100000, 40, 'a'); go<long long, lgt>("int64", 100000, 40, 5); go<std::string, seq>("string", 10000, 10, "ab"); }
