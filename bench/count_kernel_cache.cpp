// bench/count_kernel_cache.cpp -- crew's count_kernel against std::count_if in cache, for a matrix
// of element types and predicates (docs/BENCHMARKS.md, "count_if / find_if leaf kernels, session 10").
// Not part of the CMake build; the include path chooses whose leaf_kernels.hpp is timed:
//   g++ -std=c++20 -O3 -DNDEBUG -falign-functions=64 -falign-loops=64 -Iinclude bench/count_kernel_cache.cpp -o kt
//   (clang++: the same without -falign-loops)   ./kt 100000 30   (elements, rounds)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <time.h>
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
#include <crew/algorithms/leaf_kernels.hpp>
struct even_t { template <class T> bool operator()(T x) const { return x % 2 == 0; } };
struct gt_t { template <class T> bool operator()(T x) const { return x > T(50); } };
struct lut_t { const unsigned char* t; template <class T> bool operator()(T x) const { return t[static_cast<std::size_t>(x) % 100u] != 0; } };
struct pt { int a, b; };
struct pt_gt { bool operator()(const pt& p) const { return p.a > p.b; } };
template <class V, class P> __attribute__((noinline)) long K(const V* p, std::size_t n, P pred) { return crew::detail::count_kernel<long>(p, n, pred); }
template <class V, class P> __attribute__((noinline)) long S(const V* p, std::size_t n, P pred) { return std::count_if(p, p + n, pred); }
static unsigned char lut[100];
template <class V> V mk(std::size_t i) { return static_cast<V>((i * 2654435761u >> 7) % 100); }
template <> pt mk<pt>(std::size_t i) { return pt{int((i * 2654435761u >> 7) % 100), int((i * 40503u >> 3) % 100)}; }
template <class V, class P> void go(const char* name, std::size_t n, P pred, int reps) {
    std::vector<V> v(n); for (std::size_t i = 0; i < n; ++i) v[i] = mk<V>(i);
    long a = 0, b = 0; double best = 1e9, bests = 1e9;
    for (int r = 0; r < reps; ++r) {
        double t0 = now(); for (int i = 0; i < 20; ++i) { asm volatile("" : : "r"(v.data()) : "memory"); a += K(v.data(), n, pred); } double t1 = now();
        for (int i = 0; i < 20; ++i) { asm volatile("" : : "r"(v.data()) : "memory"); b += S(v.data(), n, pred); } double t2 = now();
        best = std::min(best, (t1 - t0) / 20 / n * 1e9); bests = std::min(bests, (t2 - t1) / 20 / n * 1e9); }
    if (a != b) printf("MISMATCH %s %ld %ld\n", name, a, b);
    if (reps > 1) printf("%-14s kernel %.4f  std %.4f ns/elem\n", name, best, bests);
}
int main(int argc, char** argv) {
    std::size_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 1000000;
    int reps = argc > 2 ? atoi(argv[2]) : 1;
    for (int i = 0; i < 100; ++i) lut[i] = i % 3 == 0;
    go<int>("int even", n, even_t{}, reps); go<int>("int gt", n, gt_t{}, reps); go<int>("int lut", n, lut_t{lut}, reps);
    go<unsigned>("unsigned even", n, even_t{}, reps);
    go<long long>("i64 even", n, even_t{}, reps); go<long long>("i64 gt", n, gt_t{}, reps); go<unsigned long>("u64 gt", n, gt_t{}, reps);
    go<double>("double gt", n, gt_t{}, reps); go<float>("float gt", n, gt_t{}, reps);
    go<short>("short gt", n, gt_t{}, reps); go<unsigned short>("u16 even", n, even_t{}, reps);
    go<signed char>("i8 even", n, even_t{}, reps); go<unsigned char>("u8 gt", n, gt_t{}, reps);
    go<pt>("pair gt", n, pt_gt{}, reps);
}
