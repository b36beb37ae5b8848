// The vectorizable leaf loops (leaf_kernels.hpp) behind count_if, find_if, min/max/minmax_element
// and copy_if: each against its std:: counterpart at the sizes where their runs and groups turn
// over (64-element find groups, 4,096-element min/max runs, 2^20-element 32-bit count runs), with
// the answer planted at every interesting position, equal extremes in several runs, every integer
// width and signedness, the plain-less comparators that take the vectorized path, and outputs
// guarded against writes past the end. Directly (deterministic) and through the parallel
// algorithms on pools of 1, 2, 4 and 8 workers.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "algorithms/common.hpp"

namespace {

using namespace alg_test;

const std::vector<std::size_t> kernel_sizes{1, 2, 63, 64, 65, 127, 129, 4095, 4096, 4097, 3 * 4096 + 1, 20000};

template <class T>
std::vector<T> random_of(std::size_t n, std::uint32_t seed, long long lo, long long hi) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<long long> d(lo, hi);
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(d(rng));
    return v;
}

// min/max/minmax kernels directly: random values with few distinct ones (equal extremes in many
// runs), the extreme planted at the start, at a run's end and at the very end, and all equal.
template <class T>
void check_extreme_kernels(std::size_t n, std::uint32_t seed) {
    using lim = std::numeric_limits<T>;
    for (int shape = 0; shape < 5; ++shape) {
        std::vector<T> v = random_of<T>(n, seed, 0, 3);
        if (shape == 1) v.assign(n, T(2));
        if (shape == 2) v[0] = lim::min();
        if (shape == 3) v[std::min<std::size_t>(n - 1, 4095)] = lim::max();
        if (shape == 4) {
            v[n - 1] = lim::min();
            v[n / 2] = lim::max();
        }
        const T* p = v.data();
        SCOPED_TRACE(testing::Message() << "n " << n << " shape " << shape);
        EXPECT_EQ(p + crew::detail::first_extreme_kernel<false>(p, n), std::min_element(p, p + n));
        EXPECT_EQ(p + crew::detail::first_extreme_kernel<true>(p, n), std::max_element(p, p + n));
        EXPECT_EQ(p + crew::detail::last_max_kernel(p, n), std::minmax_element(p, p + n).second);
    }
}

TEST(leaf_kernels, extremes_match_std_for_every_integer_type) {
    for (std::size_t n : kernel_sizes)
        for (std::uint32_t seed : {1u, 2u}) {
            check_extreme_kernels<std::int8_t>(n, seed);
            check_extreme_kernels<std::uint8_t>(n, seed);
            check_extreme_kernels<short>(n, seed);
            check_extreme_kernels<unsigned short>(n, seed);
            check_extreme_kernels<int>(n, seed);
            check_extreme_kernels<unsigned>(n, seed);
            check_extreme_kernels<long long>(n, seed);
            check_extreme_kernels<unsigned long long>(n, seed);
            check_extreme_kernels<char>(n, seed);
        }
}

TEST(leaf_kernels, plain_less_is_only_taken_for_integers_under_less) {
    using It = std::vector<int>::iterator;
    static_assert(crew::detail::plain_integer_less<It, std::less<>>);
    static_assert(crew::detail::plain_integer_less<It, std::less<int>>);
    static_assert(crew::detail::plain_integer_less<const int*, std::ranges::less>);
    static_assert(!crew::detail::plain_integer_less<It, std::greater<>>);
    static_assert(!crew::detail::plain_integer_less<It, std::less<long>>);  // converts: keep std's path
    static_assert(!crew::detail::plain_integer_less<std::vector<double>::iterator, std::less<>>);  // NaN
    static_assert(!crew::detail::plain_integer_less<std::vector<bool>::iterator, std::less<>>);
    static_assert(!crew::detail::plain_integer_less<volatile int*, std::less<>>);
    static_assert(crew::detail::branchless_copyable<const int*, int*>);
    static_assert(!crew::detail::branchless_copyable<volatile int*, int*>);
    static_assert(!crew::detail::branchless_copyable<const int*, volatile int*>);
    static_assert(!crew::detail::branchless_copyable<const int*, long*>);
    static_assert(!crew::detail::branchless_copyable<std::vector<std::string>::iterator, std::string*>);
}

// The first match at every position around the find groups' edges, and none: ints, bytes,
// doubles, 64-bit integers and strings (a predicate no compiler vectorizes).
template <class V>
void check_find_kernel(V zero, V one_value) {
    for (std::size_t n : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{65}, std::size_t{200}}) {
        for (std::size_t at = 0; at <= n; ++at) {
            std::vector<V> v(n, zero);
            if (at < n) v[at] = one_value;
            if (at + 3 < n) v[at + 3] = one_value;  // a later match must not win
            auto one = [&](const V& x) { return x == one_value; };
            for (std::size_t b : {std::size_t{0}, std::size_t{1}, n / 2}) {
                if (b > n) continue;
                const std::size_t want = static_cast<std::size_t>(std::find_if(v.begin() + static_cast<long>(b), v.end(), one) - v.begin());
                EXPECT_EQ(crew::detail::find_kernel(v.begin(), b, n, one), want) << "n " << n << " at " << at << " b " << b;
            }
        }
    }
}

TEST(leaf_kernels, find_kernel_returns_the_first_match) {
    check_find_kernel<int>(0, 1);
    check_find_kernel<signed char>(0, -1);
    check_find_kernel<double>(0.0, 1.5);
    check_find_kernel<long long>(0, std::numeric_limits<long long>::min());
    check_find_kernel<std::string>("no", "yes");
}

// The count over more than one run of each counter width (8 bits: 192 elements, 16 bits: 65,472,
// 32 and 64 bits: 2^20; a struct counts in 32 bits), exactly at the edges, with every element
// counted (a counter that wrapped would lose a multiple of its range).
template <class V, class Pred>
void check_count_runs(V yes, V no, Pred pred) {
    using C = crew::detail::count_lane<V>;
    const std::size_t run = crew::detail::count_run_of<C>;
    std::vector<V> v(2 * run + 5, yes);
    v[run - 1] = no;
    v[run] = no;
    for (std::size_t n : {std::size_t{1}, run - 1, run, run + 1, 2 * run, 2 * run + 5}) {
        SCOPED_TRACE(testing::Message() << "element size " << sizeof(V) << " counter size " << sizeof(C) << " n " << n);
        const auto want = std::count_if(v.begin(), v.begin() + static_cast<long>(n), pred);
        EXPECT_EQ(crew::detail::count_kernel<long>(v.begin(), n, pred), want);
        if constexpr (!std::is_same_v<V, bool>) {  // vector<bool>: only its proxy iterator
            EXPECT_EQ(crew::detail::count_kernel<long>(v.data(), n, pred), want);
        }
    }
    std::vector<V> all(2 * run + 5, yes);  // every element counted: no wrap within a run
    EXPECT_EQ(crew::detail::count_kernel<long>(all.begin(), all.size(), pred), static_cast<long>(all.size()));
}

struct count_pair {
    int a, b;
};

TEST(leaf_kernels, count_kernel_crosses_its_runs) {
    static_assert(std::is_same_v<crew::detail::count_lane<std::uint8_t>, std::uint8_t>);
    static_assert(std::is_same_v<crew::detail::count_lane<short>, std::uint16_t>);
    static_assert(std::is_same_v<crew::detail::count_lane<float>, std::uint32_t>);
    static_assert(std::is_same_v<crew::detail::count_lane<double>, std::uint64_t>);
    static_assert(std::is_same_v<crew::detail::count_lane<const int*>, std::uint64_t> || sizeof(const int*) != 8);
    static_assert(std::is_same_v<crew::detail::count_lane<count_pair>, std::uint32_t>);  // not scalar
    static_assert(crew::detail::count_run_of<std::uint8_t> == 192);
    static_assert(crew::detail::count_run_of<std::uint16_t> == 65472);
    check_count_runs<std::uint8_t>(1, 0, [](std::uint8_t x) { return x == 1; });
    check_count_runs<signed char>(-2, 3, [](signed char x) { return x % 2 == 0; });
    check_count_runs<bool>(true, false, [](bool x) { return x; });
    check_count_runs<short>(7, -7, [](short x) { return x > 0; });
    check_count_runs<std::uint16_t>(2, 1, [](std::uint16_t x) { return x % 2 == 0; });
    check_count_runs<int>(4, 5, [](int x) { return x % 2 == 0; });
    check_count_runs<float>(1.5f, -1.5f, [](float x) { return x > 0; });
    check_count_runs<long long>(-4, 5, [](long long x) { return x % 2 == 0; });
    check_count_runs<double>(0.5, std::numeric_limits<double>::quiet_NaN(), [](double x) { return x > 0; });
    check_count_runs<count_pair>({2, 1}, {1, 2}, [](const count_pair& p) { return p.a > p.b; });
    // A predicate that returns a class type convertible to bool, on a 1-byte element.
    struct truthy {
        int v;
        explicit operator bool() const { return v != 0; }
    };
    check_count_runs<char>('y', 'n', [](char x) { return truthy{x == 'y'}; });
}

// Marks as bits, then branchless compaction: all, none, alternate, random; the bits match the
// answers, pred runs once per element, and nothing at or past out[kept] is written.
TEST(leaf_kernels, mark_and_compact_kernels) {
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{8}, std::size_t{63}, std::size_t{64}, std::size_t{65},
                          std::size_t{1000}}) {
        std::vector<int> in(n);
        for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<int>(i);
        for (int shape = 0; shape < 4; ++shape) {
            std::mt19937 rng(static_cast<std::uint32_t>(n + 10 * static_cast<std::size_t>(shape)));
            std::vector<char> want_keep(n);
            for (std::size_t i = 0; i < n; ++i)
                want_keep[i] = shape == 0 ? 1 : shape == 1 ? 0 : shape == 2 ? i % 2 == 1 : rng() % 3 == 0;
            std::size_t calls = 0;
            auto pred = [&](int x) {
                ++calls;
                return want_keep[static_cast<std::size_t>(x)] != 0;
            };
            std::vector<std::uint64_t> bits((n + 63) / 64, ~std::uint64_t{0});
            const std::size_t kept = crew::detail::mark_kernel(in.begin(), n, bits.data(), pred);
            EXPECT_EQ(calls, n);
            std::vector<int> out(n + 1, -1), want;
            for (std::size_t i = 0; i < n; ++i) {
                ASSERT_EQ(crew::detail::marked(bits.data(), i), want_keep[i] != 0) << "n " << n << " i " << i;
                if (want_keep[i]) want.push_back(in[i]);
            }
            ASSERT_EQ(kept, want.size());
            crew::detail::compact_kernel(in.data(), bits.data(), out.data(), kept);
            EXPECT_TRUE(std::equal(want.begin(), want.end(), out.begin())) << "n " << n << " shape " << shape;
            EXPECT_TRUE(std::all_of(out.begin() + static_cast<long>(kept), out.end(), [](int x) { return x == -1; }));
        }
    }
}

class leaf_kernels_parallel : public crew_test::pool_test {};

// The parallel algorithms that use the kernels, on every pool size and partitioner, against std.
TEST_P(leaf_kernels_parallel, algorithms_match_std_at_kernel_edges) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::size_t n : kernel_sizes)
            each_loop_partitioner([&](auto part) {
                auto v = random_of<int>(n, static_cast<std::uint32_t>(n), -3, 3);
                v[n / 3] = 9;   // the largest in the middle
                v[n - 1] = -9;  // the smallest at the end, once
                const int* p = v.data();
                SCOPED_TRACE(testing::Message() << "n " << n);
                EXPECT_EQ(crew::parallel_min_element(part, v.begin(), v.end()), std::min_element(v.begin(), v.end()));
                EXPECT_EQ(crew::parallel_max_element(part, p, p + n, std::ranges::less{}), std::max_element(p, p + n));
                EXPECT_EQ(crew::parallel_minmax_element(part, v.begin(), v.end(), std::less<int>()),
                          std::minmax_element(v.begin(), v.end()));
                auto even = [](int x) { return x % 2 == 0; };
                EXPECT_EQ(crew::parallel_count_if(part, v.begin(), v.end(), even), std::count_if(v.begin(), v.end(), even));
                EXPECT_EQ(crew::parallel_find(part, v.begin(), v.end(), -9), v.end() - 1);
                EXPECT_EQ(crew::parallel_find(part, p, p + n, 9), std::find(p, p + n, 9));
                EXPECT_EQ(crew::parallel_find_if(part, v.begin(), v.end(), even), std::find_if(v.begin(), v.end(), even));
                std::vector<int> out(n + 1, 100), want;
                std::copy_if(v.begin(), v.end(), std::back_inserter(want), even);
                auto end = crew::parallel_copy_if(part, p, p + n, out.data(), even);
                ASSERT_EQ(static_cast<std::size_t>(end - out.data()), want.size());
                EXPECT_TRUE(std::equal(want.begin(), want.end(), out.begin()));
                EXPECT_TRUE(std::all_of(out.begin() + static_cast<long>(want.size()), out.end(), [](int x) { return x == 100; }));
            });
    });
}

// One large input (fewer elements under the sanitizers): many leaves, many runs.
TEST_P(leaf_kernels_parallel, large_input_matches_std) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    const auto n = static_cast<std::size_t>(crew_test::scaled(1000003));
    auto v = random_of<int>(n, 7, -1000000, 1000000);
    v[n - 2] = std::numeric_limits<int>::min();
    v[n / 5] = std::numeric_limits<int>::max();
    v[n / 2] = std::numeric_limits<int>::max();
    pool().run([&] {
        auto odd = [](int x) { return x % 2 != 0; };
        EXPECT_EQ(crew::parallel_count_if(v.begin(), v.end(), odd), std::count_if(v.begin(), v.end(), odd));
        EXPECT_EQ(crew::parallel_min_element(v.begin(), v.end()), v.end() - 2);
        EXPECT_EQ(crew::parallel_max_element(v.begin(), v.end()), v.begin() + static_cast<long>(n / 5));
        EXPECT_EQ(crew::parallel_minmax_element(v.begin(), v.end()), std::minmax_element(v.begin(), v.end()));
        EXPECT_EQ(crew::parallel_find(v.begin(), v.end(), std::numeric_limits<int>::max()), v.begin() + static_cast<long>(n / 5));
        std::vector<int> out(n), want;
        std::copy_if(v.begin(), v.end(), std::back_inserter(want), odd);
        auto end = crew::parallel_copy_if(v.begin(), v.end(), out.begin(), odd);
        ASSERT_EQ(static_cast<std::size_t>(end - out.begin()), want.size());
        EXPECT_TRUE(std::equal(want.begin(), want.end(), out.begin()));
    });
}

CREW_ALL_POOL_SIZES(leaf_kernels_parallel);

}  // namespace
