// matmul(n): recursive divide-and-conquer product of two n x n matrices of ones: four quadrant
// products in parallel, wait, the other four, down to a 32 x 32 serial base case. Every entry of
// the result must equal n (the check value is n when all do, 0 otherwise).
#include <string>
#include <vector>

#include "fork_join.hpp"

namespace crew_bench {

namespace {

struct matrices {
    int n;
    std::vector<int> a, b, c;
    explicit matrices(int size)
        : n(size), a(static_cast<std::size_t>(size) * size, 1), b(a), c(a.size(), 0) {}
};

void multiply_base(const int* a, const int* b, int* c, int n, int stride) {
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < n; ++k) {
            int aik = a[i * stride + k];
            for (int j = 0; j < n; ++j) c[i * stride + j] += aik * b[k * stride + j];
        }
}

template <class Fork>
void multiply(const int* a, const int* b, int* c, int n, int s) {
    if (n <= 32) {
        multiply_base(a, b, c, n, s);
        return;
    }
    int h = n / 2;
    // c11 += a11 b11, c12 += a11 b12, c21 += a21 b11, c22 += a21 b12 ...
    Fork::for_each(4, [&](int q) {
        int r = q / 2, col = q % 2;
        multiply<Fork>(a + r * h * s, b + col * h, c + r * h * s + col * h, h, s);
    });
    // ... then c11 += a12 b21, c12 += a12 b22, c21 += a22 b21, c22 += a22 b22.
    Fork::for_each(4, [&](int q) {
        int r = q / 2, col = q % 2;
        multiply<Fork>(a + r * h * s + h, b + h * s + col * h, c + r * h * s + col * h, h, s);
    });
}

std::uint64_t verify(const matrices& m) {
    for (int v : m.c)
        if (v != m.n) return 0;
    return static_cast<std::uint64_t>(m.n);
}

}  // namespace

problem make_matmul(const config& cfg, std::vector<std::string>& notes) {
    int n = cfg.quick ? 1024 : 2048;
    problem p;
    p.name = "matmul";
    p.title = "matmul(" + std::to_string(n) + ")";
    p.size_note = cfg.quick ? "quick mode: n = 1024 (full: 2048)" : "";
    p.what = "recursive 8-way divide and conquer, two phases of four, 32 x 32 base case";
    double calls = 0, level = 1;
    for (int s = n; s > 32; s /= 2) calls += (level *= 8);
    p.tasks = calls;
    auto input = make_lazy<matrices>(p, [n] { return std::make_unique<matrices>(n); });
    add_fork_join_impls(
        p, notes,
        [input]<class Fork>() {
            matrices& m = input->get();
            multiply<Fork>(m.a.data(), m.b.data(), m.c.data(), m.n, m.n);
            return verify(m);
        },
        [input] { std::fill(input->get().c.begin(), input->get().c.end(), 0); });
    return p;
}

}  // namespace crew_bench
