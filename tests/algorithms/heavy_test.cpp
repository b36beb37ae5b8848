// The 10,000,000-element differential runs (label `heavy`) and a range of more than 2^32 indices.
#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "algorithms/common.hpp"

namespace {

using namespace alg_test;

constexpr std::size_t big = 10'000'000;

class algorithms_heavy : public crew_test::pool_test {};

TEST_P(algorithms_heavy, sorts_match_std) {
    crew_test::watchdog dog(std::chrono::seconds(300));
    const auto input = random_ints(big, 2024 + static_cast<std::uint32_t>(workers()), std::numeric_limits<int>::min(),
                                   std::numeric_limits<int>::max());
    auto sorted = input;
    std::sort(sorted.begin(), sorted.end());
    auto v = input;
    pool().run([&] { crew::parallel_sort(v.begin(), v.end()); });
    EXPECT_TRUE(v == sorted);
    // Stable: (key, position) with few keys.
    std::vector<std::pair<std::uint16_t, std::uint32_t>> p(big);
    for (std::size_t i = 0; i < big; ++i) p[i] = {static_cast<std::uint16_t>(input[i] & 0x3ff), static_cast<std::uint32_t>(i)};
    auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
    pool().run([&] { crew::parallel_stable_sort(p.begin(), p.end(), by_key); });
    EXPECT_TRUE(std::is_sorted(p.begin(), p.end()));  // keys in order and, within a key, positions in order
}

TEST_P(algorithms_heavy, loops_reductions_and_scans_match_std) {
    crew_test::watchdog dog(std::chrono::seconds(300));
    auto v = random_ints(big, static_cast<std::uint32_t>(workers()));
    pool().run([&] {
        std::vector<long> out(big), want(big);
        crew::parallel_transform(v.begin(), v.end(), out.begin(), [](int x) { return 3L * x; });
        std::transform(v.begin(), v.end(), want.begin(), [](int x) { return 3L * x; });
        EXPECT_TRUE(out == want);
        auto w = v;
        crew::parallel_for_each(w.begin(), w.end(), [](int& x) { x ^= 0x5555; });
        for (std::size_t i = 0; i < big; ++i) ASSERT_EQ(w[i], v[i] ^ 0x5555);
        std::vector<char> hits(big, 0);
        crew::parallel_for(std::size_t{0}, big, [&](std::size_t i) { ++hits[i]; });
        EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), static_cast<std::ptrdiff_t>(big));
        EXPECT_EQ(crew::parallel_reduce(v.begin(), v.end(), 0L, std::plus<>()), std::accumulate(v.begin(), v.end(), 0L));
        mat2 m;
        for (int x : v) m = m * mat_of(x);
        EXPECT_TRUE(crew::parallel_transform_reduce(v.begin(), v.end(), mat2{}, std::multiplies<>(), mat_of) == m);
        crew::parallel_inclusive_scan(v.begin(), v.end(), out.begin(), std::plus<long>());
        std::inclusive_scan(v.begin(), v.end(), want.begin(), std::plus<long>());
        EXPECT_TRUE(out == want);
        crew::parallel_exclusive_scan(v.begin(), v.end(), out.begin(), 1L, std::plus<long>());
        std::exclusive_scan(v.begin(), v.end(), want.begin(), 1L, std::plus<long>());
        EXPECT_TRUE(out == want);
    });
}

CREW_ALL_POOL_SIZES(algorithms_heavy);

TEST(algorithms_heavy_deterministic, ten_million_doubles_sum_to_the_same_bits_on_every_pool_size) {
    crew_test::watchdog dog(std::chrono::seconds(300));
    auto d = random_doubles(big, 31);
    std::vector<double> sums;
    for (std::size_t workers : {1, 2, 4, 8}) {
        crew::pool p(workers);
        sums.push_back(p.run([&] { return crew::parallel_reduce(crew::deterministic, d.begin(), d.end(), 0.0); }));
        sums.push_back(p.run([&] {
            return crew::parallel_transform_reduce(crew::deterministic, d.begin(), d.end(), 0.0, std::plus<>(),
                                                   [](double x) { return x * x; });
        }));
    }
    for (std::size_t i = 2; i < sums.size(); ++i)
        EXPECT_EQ(std::memcmp(&sums[i], &sums[i % 2], sizeof(double)), 0) << i;
}

// More than 2^32 elements: the count must not wrap.
TEST(algorithms_huge, index_range_longer_than_2_pow_32) {
    crew_test::watchdog dog(std::chrono::seconds(300));
    const std::int64_t n = (std::int64_t{1} << 32) + 3;
    std::int64_t count = crew::parallel_transform_reduce(std::int64_t{0}, n, std::int64_t{0}, std::plus<>(),
                                                         [](std::int64_t i) { return (i & 1) + 1; });
    EXPECT_EQ(count, n + n / 2);
}

}  // namespace
