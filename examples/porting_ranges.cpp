// examples/porting_ranges.cpp -- oneTBB's range/body model (and the Rayon equivalents) in crew,
// one numbered section per row of docs/PORTING.md. Each section checks its result against a
// serial loop; the program prints them and exits with 1 on any mismatch.
#include <crew/algorithms.hpp>
#include <crew/crew.hpp>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <numeric>
#include <vector>

namespace {

int failures = 0;

void report(const char* row, bool ok) {
    std::printf("%-58s %s\n", row, ok ? "ok" : "MISMATCH");
    if (!ok) ++failures;
}

// [row 7] oneTBB's imperative reduction body, unchanged but for the namespace.
struct sum_squares {
    const std::vector<long>* v;
    long sum = 0;
    explicit sum_squares(const std::vector<long>& x) : v(&x) {}
    sum_squares(sum_squares& other, crew::split) : v(other.v) {}  // may run while `other` works
    void operator()(const crew::blocked_range<std::size_t>& r) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) sum += (*v)[i] * (*v)[i];
    }
    void join(const sum_squares& rhs) { sum += rhs.sum; }
};

// [row 12] A user-defined range: the odd numbers in [lo, hi), split in the middle.
struct odd_range {
    long lo, hi;
    odd_range(long l, long h) : lo(l), hi(h) {}
    odd_range(odd_range& r, crew::split) : lo(r.lo + (r.hi - r.lo) / 2), hi(r.hi) { r.hi = lo; }
    bool empty() const { return lo >= hi; }
    bool is_divisible() const { return hi - lo > 64; }
};

}  // namespace

int main() {
    const std::size_t n = 100000;
    std::vector<long> v(n);
    std::iota(v.begin(), v.end(), 1L);
    const long serial_sum = std::accumulate(v.begin(), v.end(), 0L);
    long serial_sq = 0;
    for (long x : v) serial_sq += x * x;

    // [row 1] tbb::blocked_range<T>(first, last, grainsize)
    crew::blocked_range<std::size_t> r(0, n, 1000);
    report("[1] blocked_range size/grainsize/is_divisible", r.size() == n && r.grainsize() == 1000 && r.is_divisible());

    // [row 2] tbb::parallel_for(range, body)  /  Rayon: v.par_iter_mut().with_min_len(1000).for_each(f)
    std::vector<long> w(n);
    crew::parallel_for(crew::blocked_range<std::size_t>(0, n, 1000), [&](const crew::blocked_range<std::size_t>& piece) {
        for (std::size_t i = piece.begin(); i != piece.end(); ++i) w[i] = 2 * v[i];
    });
    report("[2] parallel_for(blocked_range, body)", std::accumulate(w.begin(), w.end(), 0L) == 2 * serial_sum);

    // [row 3] tbb::parallel_for(range, body, tbb::simple_partitioner())  /  Rayon: par_chunks(1000)
    std::atomic<bool> pieces_ok{true};
    crew::parallel_for(crew::blocked_range<std::size_t>(0, n, 1000), [&](const crew::blocked_range<std::size_t>& piece) {
        if (piece.size() > 1000) pieces_ok = false;  // simple: never more than the grainsize
    }, crew::simple_partitioner());
    crew::parallel_for(crew::simple_partitioner(), crew::blocked_range<std::size_t>(0, n, 1000),
                       [&](const crew::blocked_range<std::size_t>& piece) {
                           if (piece.size() > 1000) pieces_ok = false;
                       });
    report("[3] simple_partitioner, last or first", pieces_ok.load());

    // [row 4] tbb::static_partitioner() and tbb::affinity_partitioner (auto in crew)
    static crew::affinity_partitioner ap;
    std::vector<long> s1(n), s2(n);
    crew::parallel_for(crew::blocked_range<std::size_t>(0, n), [&](const crew::blocked_range<std::size_t>& piece) {
        for (std::size_t i = piece.begin(); i != piece.end(); ++i) s1[i] = v[i] + 1;
    }, crew::static_partitioner());
    crew::parallel_for(crew::blocked_range<std::size_t>(0, n), [&](const crew::blocked_range<std::size_t>& piece) {
        for (std::size_t i = piece.begin(); i != piece.end(); ++i) s2[i] = v[i] + 1;
    }, ap);
    report("[4] static_partitioner / affinity_partitioner", s1 == s2 && s1[n - 1] == static_cast<long>(n) + 1);

    // [row 5] tbb::blocked_range2d: C = A * B over rows x columns
    const int m = 64;
    std::vector<long> A(m * m), B(m * m), C(m * m);
    for (int i = 0; i < m * m; ++i) A[static_cast<std::size_t>(i)] = i % 5, B[static_cast<std::size_t>(i)] = i % 3;
    crew::parallel_for(crew::blocked_range2d<int>(0, m, 8, 0, m, 8), [&](const crew::blocked_range2d<int>& b) {
        for (int i = b.rows().begin(); i != b.rows().end(); ++i)
            for (int j = b.cols().begin(); j != b.cols().end(); ++j) {
                long s = 0;
                for (int k = 0; k < m; ++k) s += A[static_cast<std::size_t>(i * m + k)] * B[static_cast<std::size_t>(k * m + j)];
                C[static_cast<std::size_t>(i * m + j)] = s;
            }
    });
    long c_ok = 1;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) {
            long s = 0;
            for (int k = 0; k < m; ++k) s += A[static_cast<std::size_t>(i * m + k)] * B[static_cast<std::size_t>(k * m + j)];
            if (C[static_cast<std::size_t>(i * m + j)] != s) c_ok = 0;
        }
    report("[5] parallel_for(blocked_range2d, body)", c_ok == 1);

    // [row 6] tbb::parallel_reduce(range, identity, body, join)  /  Rayon: fold(|| 0, f).reduce(|| 0, +)
    long sum = crew::parallel_reduce(
        crew::blocked_range<std::size_t>(0, n), 0L,
        [&](const crew::blocked_range<std::size_t>& piece, long acc) {
            for (std::size_t i = piece.begin(); i != piece.end(); ++i) acc += v[i];
            return acc;
        },
        std::plus<long>());
    report("[6] parallel_reduce(range, identity, body, join)", sum == serial_sum);

    // [row 7] tbb::parallel_reduce(range, body) -- the imperative form
    sum_squares body(v);
    crew::parallel_reduce(crew::blocked_range<std::size_t>(0, n), body);
    report("[7] parallel_reduce(range, body&)", body.sum == serial_sq);

    // [row 8] tbb::parallel_deterministic_reduce: the same bits on any number of workers
    std::vector<double> d(n);
    for (std::size_t i = 0; i < n; ++i) d[i] = 1.0 / static_cast<double>(i + 1);
    auto harmonic = [&] {
        return crew::parallel_deterministic_reduce(
            crew::blocked_range<std::size_t>(0, n, 512), 0.0,
            [&](const crew::blocked_range<std::size_t>& piece, double acc) {
                for (std::size_t i = piece.begin(); i != piece.end(); ++i) acc += d[i];
                return acc;
            },
            std::plus<double>());
    };
    crew::pool one(1), three(3);
    const double h1 = one.run(harmonic), h3 = three.run(harmonic);
    report("[8] parallel_deterministic_reduce: 1 vs 3 workers bitwise", h1 == h3);

    // [row 9] tbb::parallel_for(first, last, step, f)  /  Rayon: (0..n).into_par_iter().step_by(3)
    std::vector<int> hit(n, 0);
    crew::parallel_for(std::size_t{0}, n, std::size_t{3}, [&](std::size_t i) { hit[i] = 1; });
    long hits = std::accumulate(hit.begin(), hit.end(), 0L);
    report("[9] parallel_for(first, last, step, f)", hits == static_cast<long>((n + 2) / 3) && hit[3] == 1 && hit[4] == 0);

    // [row 10] tbb::parallel_for(first, last, f, partitioner) and crew's partitioner-first spelling
    std::vector<long> p1(n), p2(n);
    crew::parallel_for(std::size_t{0}, n, [&](std::size_t i) { p1[i] = v[i] * 3; }, crew::static_partitioner());
    crew::parallel_for(crew::static_partition, std::size_t{0}, n, [&](std::size_t i) { p2[i] = v[i] * 3; });
    report("[10] partitioner last (oneTBB) == partitioner first (crew)", p1 == p2 && p1[n - 1] == 3 * static_cast<long>(n));

    // [row 11] the other algorithms take a partitioner last too
    std::vector<long> sorted(v.rbegin(), v.rend());
    crew::parallel_sort(sorted.begin(), sorted.end(), std::less<>(), crew::auto_partitioner());
    long red = crew::parallel_reduce(v.begin(), v.end(), 0L, std::plus<>(), crew::simple_partition{4096});
    report("[11] parallel_sort / parallel_reduce, partitioner last", sorted == v && red == serial_sum);

    // [row 12] a user-defined range works wherever blocked_range does
    long odd = crew::parallel_reduce(
        odd_range(0, 10001), 0L,
        [](const odd_range& piece, long acc) {
            for (long i = piece.lo; i < piece.hi; ++i) acc += i % 2;
            return acc;
        },
        std::plus<long>());
    report("[12] parallel_reduce over a user-defined range", odd == 5000);

    std::printf("%s\n", failures == 0 ? "all rows ok" : "some rows failed");
    return failures == 0 ? 0 : 1;
}
