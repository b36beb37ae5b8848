// bench/count_kernel_dram.cpp -- count_if leaf-loop shapes over ints from DRAM (docs/BENCHMARKS.md,
// "count_if / find_if leaf kernels, session 10"): the count_kernel shape against std::count_if,
// std::count_if in oneTBB-sized chunks, fixed blocks, lane accumulators and software prefetch.
// Standalone (no crew headers), not part of the CMake build:
//   g++ -std=c++20 -O3 -DNDEBUG bench/count_kernel_dram.cpp -o mb -lpthread   (or clang++)
//   ./mb THREADS ROUNDS [N=20000000] [INNER=1]     e.g. ./mb 1 41; ./mb 2 41
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>
#include <time.h>
struct even_t { bool operator()(int x) const { return x % 2 == 0; } };
inline constexpr std::size_t count_run = std::size_t{1} << 20;

template <class D, class It, class Pred>
__attribute__((noinline)) D k_cur(It first, std::size_t n, Pred& pred) {
    D total{0};
    while (n != 0) {
        const std::size_t m = n < count_run ? n : count_run;
        std::uint32_t c = 0;
        for (std::size_t i = 0; i != m; ++i, ++first) c += static_cast<bool>(std::invoke(pred, *first));
        total += static_cast<D>(c);
        n -= m;
    }
    return total;
}
template <class D, class It, class Pred>
__attribute__((noinline)) D k_std(It first, std::size_t n, Pred& pred) { return std::count_if(first, first + n, pred); }

template <class D, class It, class Pred>
__attribute__((noinline)) D k_tbb(It first, std::size_t n, Pred& pred) {
    D acc = 0; const std::size_t ch = 20000000/16 + 1;
    for (std::size_t b = 0; b < n; b += ch) { std::size_t e = std::min(n, b + ch); acc += std::count_if(first + b, first + e, pred); }
    return acc;
}
// chunked: fixed-length inner block of B elements, uint32 count
template <std::size_t B, class D, class It, class Pred>
__attribute__((noinline)) D k_blk(It first, std::size_t n, Pred& pred) {
    D total{0};
    while (n != 0) {
        const std::size_t m = n < count_run ? n : count_run;
        std::uint32_t c = 0;
        std::size_t i = 0;
        for (; m - i >= B; i += B) {
            std::uint32_t cb = 0;
            for (std::size_t j = 0; j != B; ++j) cb += static_cast<bool>(std::invoke(pred, first[j]));
            c += cb; first += B;
        }
        for (; i != m; ++i, ++first) c += static_cast<bool>(std::invoke(pred, *first));
        total += static_cast<D>(c);
        n -= m;
    }
    return total;
}
// independent accumulators array of L lanes (uint32)
template <std::size_t L, class D, class It, class Pred>
__attribute__((noinline)) D k_lanes(It first, std::size_t n, Pred& pred) {
    D total{0};
    while (n != 0) {
        const std::size_t m = n < count_run ? n : count_run;
        std::uint32_t acc[L] = {};
        std::size_t i = 0;
        for (; m - i >= L; i += L, first += L)
            for (std::size_t j = 0; j != L; ++j) acc[j] += static_cast<bool>(std::invoke(pred, first[j]));
        std::uint32_t c = 0;
        for (; i != m; ++i, ++first) c += static_cast<bool>(std::invoke(pred, *first));
        for (std::size_t j = 0; j != L; ++j) c += acc[j];
        total += static_cast<D>(c);
        n -= m;
    }
    return total;
}
// pointer-based simple loop (first as pointer end)
template <class D, class It, class Pred>
__attribute__((noinline)) D k_ptr(It first, std::size_t n, Pred& pred) {
    D total{0};
    while (n != 0) {
        const std::size_t m = n < count_run ? n : count_run;
        std::uint32_t c = 0;
        It last = first + m;
        for (; first != last; ++first) c += std::invoke(pred, *first) ? 1u : 0u;
        total += static_cast<D>(c);
        n -= m;
    }
    return total;
}

// block of 64 elements (4 cache lines of ints), prefetch D bytes ahead
template <std::size_t PD, class D, class It, class Pred>
__attribute__((noinline)) D k_pf(It first, std::size_t n, Pred& pred) {
    D total{0};
    while (n != 0) {
        const std::size_t m = n < count_run ? n : count_run;
        std::uint32_t c = 0;
        std::size_t i = 0;
        constexpr std::size_t B = 64;
        for (; m - i >= B; i += B) {
            const char* p = reinterpret_cast<const char*>(&*first);
            for (std::size_t l = 0; l < B * sizeof(*first); l += 64) __builtin_prefetch(p + PD + l, 0, 3);
            std::uint32_t cb = 0;
            for (std::size_t j = 0; j != B; ++j) cb += static_cast<bool>(std::invoke(pred, first[j]));
            c += cb; first += B;
        }
        for (; i != m; ++i, ++first) c += static_cast<bool>(std::invoke(pred, *first));
        total += static_cast<D>(c);
        n -= m;
    }
    return total;
}
using fn_t = long (*)(const int*, std::size_t, even_t&);
struct var { const char* name; fn_t f; };
static var vars[] = {
    {"cur", k_cur<long, const int*, even_t>},
    {"std", k_std<long, const int*, even_t>},
    {"tbb", k_tbb<long, const int*, even_t>},
    {"blk64", k_blk<64, long, const int*, even_t>},
    {"blk256", k_blk<256, long, const int*, even_t>},
    {"ptr", k_ptr<long, const int*, even_t>},
    {"pf512", k_pf<512, long, const int*, even_t>},
    {"pf1k", k_pf<1024, long, const int*, even_t>},
    {"pf2k", k_pf<2048, long, const int*, even_t>},
    {"pf4k", k_pf<4096, long, const int*, even_t>},
};

static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char** argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    int reps = argc > 2 ? atoi(argv[2]) : 21;
    std::size_t n = argc > 3 ? strtoull(argv[3], 0, 10) : 20000000;
    int inner = argc > 4 ? atoi(argv[4]) : 1;
    std::vector<int> v(n);
    for (std::size_t i = 0; i < n; ++i) { std::uint64_t x = i * 0x9E3779B97F4A7C15ull; x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 29; v[i] = int(x % 1000000u); }
    constexpr int NV = sizeof(vars) / sizeof(vars[0]);
    std::vector<double> ts[NV];
    long res[NV];
    for (int r = 0; r < reps; ++r)
      for (int k = 0; k < NV; ++k) {
        auto& V = vars[(k + r) % NV];
        double t0 = now();
        long tot = 0;
        for (int in = 0; in < inner; ++in) {
            if (threads == 1) { even_t e; tot += V.f(v.data(), n, e); }
            else {
                long a = 0, b = 0;
                std::thread th([&] { even_t e; b = V.f(v.data() + n / 2, n - n / 2, e); });
                { even_t e; a = V.f(v.data(), n / 2, e); }
                th.join(); tot += a + b;
            }
        }
        ts[(k + r) % NV].push_back((now() - t0) / inner);
        res[(k + r) % NV] = tot;
      }
    for (int k = 0; k < NV; ++k) {
        std::sort(ts[k].begin(), ts[k].end());
        printf("%-8s %d thr: median %.4f ns/elem min %.4f  (%ld)\n", vars[k].name, threads, ts[k][ts[k].size()/2]*1e9/n, ts[k][0]*1e9/n, res[k]);
    }
}
