// parallel_reduce and parallel_transform_reduce against std::reduce / a serial left fold, with
// non-commutative operations, on pools of 1, 2, 4 and 8 workers and with every partitioner.
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "algorithms/common.hpp"

namespace {

using namespace alg_test;

class algorithms_reduce : public crew_test::pool_test {};

TEST_P(algorithms_reduce, sums_match_std_reduce) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::uint32_t seed : seeds())
            for (std::size_t n : sizes)
                each_partitioner([&](auto part) {
                    auto v = random_ints(n, seed);
                    long want = std::accumulate(v.begin(), v.end(), 5L);
                    EXPECT_EQ(crew::parallel_reduce(part, v.begin(), v.end(), 5L, std::plus<>()), want) << n;
                    EXPECT_EQ(crew::parallel_reduce(part, v.begin(), v.end(), 5L), want) << n;
                    long sq = std::transform_reduce(v.begin(), v.end(), 0L, std::plus<>(),
                                                    [](int x) { return static_cast<long>(x) % 1000 * x; });
                    EXPECT_EQ(crew::parallel_transform_reduce(part, v.begin(), v.end(), 0L, std::plus<>(),
                                                              [](int x) { return static_cast<long>(x) % 1000 * x; }),
                              sq);
                });
    });
}

TEST_P(algorithms_reduce, index_forms_reduce_the_indices) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        for (std::size_t n : sizes)
            each_partitioner([&](auto part) {
                long long want = static_cast<long long>(n) * (static_cast<long long>(n) - 1) / 2;
                EXPECT_EQ(crew::parallel_reduce(part, 0LL, static_cast<long long>(n), 0LL, std::plus<>()), want);
                EXPECT_EQ(crew::parallel_transform_reduce(part, 0, n, 0LL, std::plus<>(),
                                                          [](std::size_t i) { return 2 * static_cast<long long>(i); }),
                          2 * want);
            });
        // Index values past 2^32.
        const std::int64_t base = std::int64_t{1} << 40;
        EXPECT_EQ(crew::parallel_reduce(base, base + 1000, std::int64_t{0}, std::plus<>()),
                  1000 * base + 999 * 1000 / 2);
    });
}

TEST_P(algorithms_reduce, non_commutative_operations_equal_the_serial_left_fold) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::uint32_t seed : seeds())
            for (std::size_t n : sizes)
                each_partitioner([&](auto part) {
                    auto words = random_words(n, seed);
                    std::string want = "<";
                    for (auto& w : words) want += w;
                    EXPECT_EQ(crew::parallel_reduce(part, words.begin(), words.end(), std::string("<"), std::plus<>()),
                              want);
                    auto v = random_ints(n, seed);
                    mat2 m;
                    for (int x : v) m = m * mat_of(x);
                    EXPECT_EQ(crew::parallel_transform_reduce(part, v.begin(), v.end(), mat2{}, std::multiplies<>(),
                                                              mat_of),
                              m);
                });
    });
}

TEST_P(algorithms_reduce, floating_point_within_rounding_of_serial) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        for (std::size_t n : sizes)
            each_partitioner([&](auto part) {
                auto d = random_doubles(n, 9);
                double want = 0, mag = 0;
                for (double x : d) want += x, mag += std::fabs(x);
                double got = crew::parallel_reduce(part, d.begin(), d.end(), 0.0, std::plus<>());
                EXPECT_NEAR(got, want, 1e-12 * (mag + 1));
            });
    });
}

// The same deterministic reduction on every pool size, repeatedly: bitwise the same result.
TEST(algorithms_deterministic, floating_point_reductions_are_bitwise_identical_across_pool_sizes) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{100000}}) {
        auto d = random_doubles(n, 77);
        std::vector<double> sums, tsums;
        for (std::size_t workers : {1, 2, 3, 4, 8}) {
            crew::pool p(workers);
            for (long rep = 0; rep < crew_test::scaled(20); ++rep) {
                p.run([&] {
                    sums.push_back(crew::parallel_reduce(crew::deterministic, d.begin(), d.end(), 0.0, std::plus<>()));
                    tsums.push_back(crew::parallel_transform_reduce(crew::deterministic_partition{100}, 0, n, 0.0,
                                                                    std::plus<>(), [&](std::size_t i) { return d[i] * d[i]; }));
                });
            }
        }
        for (std::size_t i = 1; i < sums.size(); ++i) {
            EXPECT_EQ(std::memcmp(&sums[i], &sums[0], sizeof(double)), 0) << n << ": " << sums[i] << " vs " << sums[0];
            EXPECT_EQ(std::memcmp(&tsums[i], &tsums[0], sizeof(double)), 0) << n;
        }
    }
}

CREW_ALL_POOL_SIZES(algorithms_reduce);

}  // namespace
