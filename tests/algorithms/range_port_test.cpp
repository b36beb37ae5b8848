// oneTBB ports in crew, beyond the range algorithms (range_test.cpp): the step form of parallel_for,
// the partitioner-last overloads of every algorithm with oneTBB's partitioner spellings, and a
// oneTBB program ported line by line, against serial results on pools of 1, 2, 4 and 8 workers.
#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <vector>

#include "algorithms/common.hpp"

namespace {

using namespace alg_test;

template <class F>
void each_range_partitioner(F&& f) {
    f(crew::auto_partitioner());
    f(crew::simple_partitioner());
    f(crew::static_partitioner());
    crew::affinity_partitioner ap;
    f(ap);
}

class range_ports : public crew_test::pool_test {};

// ---- the step form ----

// The serial reference: first, first + step, ... < last, computed with unsigned offsets.
template <class I>
std::vector<I> serial_steps(I first, I last, std::uint64_t step) {
    std::vector<I> out;
    using U = std::make_unsigned_t<I>;
    const std::uint64_t n = static_cast<U>(static_cast<U>(last) - static_cast<U>(first));
    for (std::uint64_t off = 0; off < n;) {
        out.push_back(static_cast<I>(static_cast<U>(static_cast<U>(first) + static_cast<U>(off))));
        if (step > n - off) break;
        off += step;
    }
    return out;
}

template <class I, class S>
void check_steps(I first, I last, S step) {
    auto want = serial_steps<I>(first, last, static_cast<std::uint64_t>(step));
    auto run = [&](auto call) {
        std::mutex m;
        std::vector<I> got;
        call([&](I i) {
            std::lock_guard<std::mutex> lock(m);
            got.push_back(i);
        });
        std::sort(got.begin(), got.end());
        EXPECT_EQ(got, want) << +first << " " << +last << " " << +step;
    };
    run([&](auto f) { crew::parallel_for(first, last, step, f); });
    each_range_partitioner([&](auto part) {
        run([&](auto f) { crew::parallel_for(first, last, step, f, part); });
        run([&](auto f) { crew::parallel_for(part, first, last, step, f); });
    });
    run([&](auto f) { crew::parallel_for(first, last, step, f, crew::simple_partition{3}); });
}

TEST_P(range_ports, step_form_matches_the_serial_loop) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        check_steps(0, 100, 7);
        check_steps(5, 5, 3);
        check_steps(0, 1, 1);
        check_steps(-50, 50, 3);
        check_steps(0, 10, 100);
        check_steps(0, 3000, 1);
        check_steps<std::int8_t>(-128, 127, 5);
        check_steps<std::int8_t>(-128, 127, std::int8_t{127});
        check_steps(INT_MIN, INT_MAX, 1 << 28);
        check_steps(INT_MIN, INT_MAX, INT_MAX);
        check_steps<std::uint64_t>(0, UINT64_MAX, std::uint64_t{1} << 60);
        check_steps<std::uint64_t>(UINT64_MAX - 10, UINT64_MAX, 3);
        check_steps<std::int64_t>(INT64_MIN, INT64_MAX, INT64_MAX);
        EXPECT_THROW(crew::parallel_for(0, 10, 0, [](int) {}), std::invalid_argument);
        EXPECT_THROW(crew::parallel_for(0, 10, -2, [](int) {}), std::invalid_argument);
        EXPECT_THROW(crew::parallel_for(10, 0, 1, [](int) {}), std::invalid_argument);
        EXPECT_THROW(crew::parallel_for(0, 10, 0, [](int) {}, crew::simple_partitioner()), std::invalid_argument);
        std::atomic<int> calls{0};
        EXPECT_THROW(crew::parallel_for(0, 100, 3, [&](int i) {
            calls.fetch_add(1);
            if (i == 51) throw test_error("step");
        }), test_error);
    });
}

// ---- the partitioner-last overloads of crew's other algorithms ----

template <class F>
void each_algorithm_partitioner(F&& f) {
    each_range_partitioner(f);
    f(crew::auto_partition);
    f(crew::static_partition);
    f(crew::simple_partition{7});
}

TEST_P(range_ports, partitioner_last_overloads_match_serial) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{17}, std::size_t{5000}}) {
            auto v = random_ints(n, 5);
            auto part_check = [&](auto part, bool reduction) {
                std::vector<int> hits(n, 0);
                crew::parallel_for(std::size_t{0}, n, [&](std::size_t i) { ++hits[i]; }, part);
                EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
                std::vector<long> w(v.begin(), v.end());
                crew::parallel_for_each(w.begin(), w.end(), [](long& x) { x *= 2; }, part);
                std::vector<long> out(n), want(n);
                std::transform(v.begin(), v.end(), want.begin(), [](int x) { return 2L * x; });
                EXPECT_EQ(w, want);
                crew::parallel_transform(v.begin(), v.end(), out.begin(), [](int x) { return 2L * x; }, part);
                EXPECT_EQ(out, want);
                crew::parallel_transform(v.begin(), v.end(), w.begin(), out.begin(), [](int x, long y) { return x + y; }, part);
                std::transform(v.begin(), v.end(), want.begin(), [](int x) { return 3L * x; });
                EXPECT_EQ(out, want);
                const long long sum = std::accumulate(v.begin(), v.end(), 0LL);
                EXPECT_EQ(crew::parallel_reduce(v.begin(), v.end(), 0LL, std::plus<>(), part), sum);
                EXPECT_EQ(crew::parallel_reduce(v.begin(), v.end(), 0LL, part), sum);
                EXPECT_EQ(crew::parallel_transform_reduce(v.begin(), v.end(), 0LL, std::plus<>(),
                                                          [](int x) { return 2LL * x; }, part),
                          2 * sum);
                std::vector<long long> scan(n), wscan(n);
                std::inclusive_scan(v.begin(), v.end(), wscan.begin(), std::plus<>(), 0LL);
                crew::parallel_inclusive_scan(v.begin(), v.end(), scan.begin(), std::plus<>(), 0LL, part);
                EXPECT_EQ(scan, wscan);
                std::vector<int> iscan(n), wiscan(n);
                std::inclusive_scan(v.begin(), v.end(), wiscan.begin());
                crew::parallel_inclusive_scan(v.begin(), v.end(), iscan.begin(), part);
                EXPECT_EQ(iscan, wiscan);
                crew::parallel_inclusive_scan(v.begin(), v.end(), iscan.begin(), std::plus<>(), part);
                EXPECT_EQ(iscan, wiscan);
                std::exclusive_scan(v.begin(), v.end(), wscan.begin(), 4LL);
                crew::parallel_exclusive_scan(v.begin(), v.end(), scan.begin(), 4LL, part);
                EXPECT_EQ(scan, wscan);
                crew::parallel_exclusive_scan(v.begin(), v.end(), scan.begin(), 4LL, std::plus<>(), part);
                EXPECT_EQ(scan, wscan);
                if (!reduction) {
                    auto sorted = v;
                    std::sort(sorted.begin(), sorted.end());
                    auto s1 = v, s2 = v, s3 = v, s4 = v;
                    crew::parallel_sort(s1.begin(), s1.end(), part);
                    crew::parallel_sort(s2.begin(), s2.end(), std::less<>(), part);
                    crew::parallel_stable_sort(s3.begin(), s3.end(), part);
                    crew::parallel_stable_sort(s4.begin(), s4.end(), std::less<>(), part);
                    EXPECT_EQ(s1, sorted);
                    EXPECT_EQ(s2, sorted);
                    EXPECT_EQ(s3, sorted);
                    EXPECT_EQ(s4, sorted);
                }
            };
            each_algorithm_partitioner([&](auto part) { part_check(part, false); });
            // crew::deterministic is accepted by the reductions and scans only.
            const long long sum = std::accumulate(v.begin(), v.end(), 0LL);
            EXPECT_EQ(crew::parallel_reduce(v.begin(), v.end(), 0LL, std::plus<>(), crew::deterministic), sum);
            EXPECT_EQ(crew::parallel_reduce(v.begin(), v.end(), 0LL, crew::deterministic), sum);
            std::vector<int> iscan(n), wiscan(n);
            std::inclusive_scan(v.begin(), v.end(), wiscan.begin());
            crew::parallel_inclusive_scan(v.begin(), v.end(), iscan.begin(), crew::deterministic_partition{3});
            EXPECT_EQ(iscan, wiscan);
        }
    });
}

// ---- a oneTBB program, ported line by line: only the namespace changes ----

namespace tbb = crew;

// oneTBB's documentation example of the imperative parallel_reduce, as written there.
long Foo(long x) { return x % 13 - 6; }

struct SumFoo {
    const long* my_a;
    long my_sum;
    void operator()(const tbb::blocked_range<size_t>& r) {
        const long* a = my_a;
        long sum = my_sum;
        size_t end = r.end();
        for (size_t i = r.begin(); i != end; ++i) sum += Foo(a[i]);
        my_sum = sum;
    }
    SumFoo(SumFoo& x, tbb::split) : my_a(x.my_a), my_sum(0) {}
    void join(const SumFoo& y) { my_sum += y.my_sum; }
    SumFoo(const long a[]) : my_a(a), my_sum(0) {}
};

struct MinIndexFoo {
    const long* const my_a;
    long value_of_min;
    long index_of_min;
    void operator()(const tbb::blocked_range<size_t>& r) {
        const long* a = my_a;
        for (size_t i = r.begin(); i != r.end(); ++i) {
            long value = Foo(a[i]);
            if (value < value_of_min || (value == value_of_min && static_cast<long>(i) < index_of_min)) {
                value_of_min = value;
                index_of_min = static_cast<long>(i);
            }
        }
    }
    MinIndexFoo(MinIndexFoo& x, tbb::split) : my_a(x.my_a), value_of_min(LONG_MAX), index_of_min(-1) {}
    void join(const MinIndexFoo& y) {
        if (y.value_of_min < value_of_min) {
            value_of_min = y.value_of_min;
            index_of_min = y.index_of_min;
        }
    }
    MinIndexFoo(const long a[]) : my_a(a), value_of_min(LONG_MAX), index_of_min(-1) {}
};

void ported_program() {
    const size_t n = 100003;
    std::vector<long> a(n), x(n), y(n);
    for (size_t i = 0; i < n; ++i) a[i] = static_cast<long>((i * 2654435761u) % 1000);
    // saxpy with a blocked_range loop.
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n), [&](const tbb::blocked_range<size_t>& r) {
        for (size_t i = r.begin(); i != r.end(); ++i) y[i] = 3 * a[i] + 1;
    });
    // The index form, and the step form.
    tbb::parallel_for(size_t(0), n, [&](size_t i) { x[i] = a[i] * 2; });
    tbb::parallel_for(size_t(0), n, size_t(2), [&](size_t i) { x[i] += 1; });
    // Functional parallel_reduce: a dot product.
    long dot = tbb::parallel_reduce(
        tbb::blocked_range<size_t>(0, n), 0L,
        [&](const tbb::blocked_range<size_t>& r, long init) -> long {
            for (size_t i = r.begin(); i != r.end(); ++i) init += x[i] * y[i];
            return init;
        },
        std::plus<long>());
    // Imperative parallel_reduce, with a partitioner last as oneTBB writes it.
    SumFoo sf(a.data());
    tbb::parallel_reduce(tbb::blocked_range<size_t>(0, n), sf, tbb::auto_partitioner());
    static tbb::affinity_partitioner ap;
    MinIndexFoo mif(a.data());
    tbb::parallel_reduce(tbb::blocked_range<size_t>(0, n, 1000), mif, ap);
    // A 2D loop: C = A * B.
    const int m = 37, k = 23, p = 41;
    std::vector<long> A(m * k), B(k * p), C(m * p, 0);
    for (int i = 0; i < m * k; ++i) A[static_cast<size_t>(i)] = i % 11 - 5;
    for (int i = 0; i < k * p; ++i) B[static_cast<size_t>(i)] = i % 7 - 3;
    tbb::parallel_for(tbb::blocked_range2d<int>(0, m, 4, 0, p, 4), [&](const tbb::blocked_range2d<int>& r) {
        for (int i = r.rows().begin(); i != r.rows().end(); ++i)
            for (int j = r.cols().begin(); j != r.cols().end(); ++j) {
                long sum = 0;
                for (int t = 0; t < k; ++t) sum += A[static_cast<size_t>(i * k + t)] * B[static_cast<size_t>(t * p + j)];
                C[static_cast<size_t>(i * p + j)] = sum;
            }
    }, tbb::simple_partitioner());
    // A deterministic floating-point sum over iterators.
    std::vector<double> d(n);
    for (size_t i = 0; i < n; ++i) d[i] = 1.0 / static_cast<double>(i + 1);
    double h = tbb::parallel_deterministic_reduce(
        tbb::blocked_range<std::vector<double>::iterator>(d.begin(), d.end(), 512), 0.0,
        [](const tbb::blocked_range<std::vector<double>::iterator>& r, double acc) {
            return std::accumulate(r.begin(), r.end(), acc);
        },
        std::plus<double>());
    tbb::parallel_sort(a.begin(), a.end());

    // The serial results, exactly.
    long want_dot = 0, want_sum = 0, want_min = LONG_MAX, want_idx = -1;
    std::vector<long> aa(n);
    for (size_t i = 0; i < n; ++i) aa[i] = static_cast<long>((i * 2654435761u) % 1000);
    for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(y[i], 3 * aa[i] + 1);
        EXPECT_EQ(x[i], aa[i] * 2 + (i % 2 == 0 ? 1 : 0));
        want_dot += x[i] * y[i];
        want_sum += Foo(aa[i]);
        if (Foo(aa[i]) < want_min) {
            want_min = Foo(aa[i]);
            want_idx = static_cast<long>(i);
        }
    }
    EXPECT_EQ(dot, want_dot);
    EXPECT_EQ(sf.my_sum, want_sum);
    EXPECT_EQ(mif.value_of_min, want_min);
    EXPECT_EQ(mif.index_of_min, want_idx);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < p; ++j) {
            long sum = 0;
            for (int t = 0; t < k; ++t) sum += A[static_cast<size_t>(i * k + t)] * B[static_cast<size_t>(t * p + j)];
            ASSERT_EQ(C[static_cast<size_t>(i * p + j)], sum);
        }
    tbb::blocked_range<std::vector<double>::iterator> whole(d.begin(), d.end(), 512);
    std::vector<double> tree(d);  // the same split tree, folded serially
    auto fold = [&](auto& self, tbb::blocked_range<std::vector<double>::iterator> r) -> double {
        if (!r.is_divisible()) return std::accumulate(r.begin(), r.end(), 0.0);
        tbb::blocked_range<std::vector<double>::iterator> upper(r, tbb::split());
        double left = self(self, r);
        return left + self(self, upper);
    };
    EXPECT_EQ(std::bit_cast<std::uint64_t>(h), std::bit_cast<std::uint64_t>(fold(fold, whole)));
    std::sort(aa.begin(), aa.end());
    EXPECT_EQ(a, aa);
}

TEST_P(range_ports, a_onetbb_program_ported_line_by_line_gives_the_serial_results) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([] { ported_program(); });
}

TEST(range_ports_outside_a_pool, a_onetbb_program_runs_on_the_default_pool) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    ported_program();
}

CREW_ALL_POOL_SIZES(range_ports);

}  // namespace
