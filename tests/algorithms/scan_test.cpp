// parallel_inclusive_scan and parallel_exclusive_scan against std::inclusive_scan and
// std::exclusive_scan, with non-commutative operations and in place, on pools of 1, 2, 4 and 8.
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "algorithms/common.hpp"

namespace {

using namespace alg_test;

class algorithms_scan : public crew_test::pool_test {};

// Sizes around the default block size (4096) too.
const std::vector<std::size_t> scan_sizes{0, 1, 2, 3, 17, 1000, 4095, 4096, 4097, 20000};

TEST_P(algorithms_scan, integer_scans_match_std) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::uint32_t seed : seeds())
            for (std::size_t n : scan_sizes)
                each_partitioner([&](auto part) {
                    auto v = random_ints(n, seed);
                    std::vector<long> got(n), want(n);
                    auto end = crew::parallel_inclusive_scan(part, v.begin(), v.end(), got.begin(), std::plus<long>());
                    std::inclusive_scan(v.begin(), v.end(), want.begin(), std::plus<long>());
                    EXPECT_EQ(got, want) << n;
                    EXPECT_EQ(end, got.end());
                    crew::parallel_inclusive_scan(part, v.begin(), v.end(), got.begin(), std::plus<long>(), 9L);
                    std::inclusive_scan(v.begin(), v.end(), want.begin(), std::plus<long>(), 9L);
                    EXPECT_EQ(got, want) << n;
                    end = crew::parallel_exclusive_scan(part, v.begin(), v.end(), got.begin(), 4L, std::plus<>());
                    std::exclusive_scan(v.begin(), v.end(), want.begin(), 4L, std::plus<>());
                    EXPECT_EQ(got, want) << n;
                    EXPECT_EQ(end, got.end());
                });
    });
}

TEST_P(algorithms_scan, in_place_scans_match_std) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        for (std::size_t n : scan_sizes)
            each_partitioner([&](auto part) {
                auto v = random_ints(n, 5, -100, 100), w = v;
                crew::parallel_inclusive_scan(part, v.begin(), v.end(), v.begin());
                std::inclusive_scan(w.begin(), w.end(), w.begin());
                EXPECT_EQ(v, w);
                crew::parallel_exclusive_scan(part, v.begin(), v.end(), v.begin(), -3);
                std::exclusive_scan(w.begin(), w.end(), w.begin(), -3);
                EXPECT_EQ(v, w);
            });
    });
}

TEST_P(algorithms_scan, non_commutative_scans_match_std) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::size_t n : {0, 1, 2, 1000, 5000})
            each_partitioner([&](auto part) {
                auto v = random_ints(n, 11);
                std::vector<mat2> m(n);
                std::transform(v.begin(), v.end(), m.begin(), mat_of);
                std::vector<mat2> got(n), want(n);
                crew::parallel_inclusive_scan(part, m.begin(), m.end(), got.begin(), std::multiplies<>());
                std::inclusive_scan(m.begin(), m.end(), want.begin(), std::multiplies<>());
                EXPECT_TRUE(got == want) << n;
                crew::parallel_exclusive_scan(part, m.begin(), m.end(), got.begin(), mat_of(5), std::multiplies<>());
                std::exclusive_scan(m.begin(), m.end(), want.begin(), mat_of(5), std::multiplies<>());
                EXPECT_TRUE(got == want) << n;
            });
        auto words = random_words(300, 3);
        std::vector<std::string> got(300), want(300);
        crew::parallel_inclusive_scan(crew::simple_partition{7}, words.begin(), words.end(), got.begin(), std::plus<>());
        std::inclusive_scan(words.begin(), words.end(), want.begin(), std::plus<>());
        EXPECT_EQ(got, want);
    });
}

// The default partitioner's blocks depend only on n: floating-point scans are bitwise identical on
// every pool size.
TEST(algorithms_scan_determinism, floating_point_scans_are_bitwise_identical_across_pool_sizes) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    auto d = random_doubles(50000, 4);
    std::vector<std::vector<double>> results;
    for (std::size_t workers : {1, 2, 3, 8}) {
        crew::pool p(workers);
        p.run([&] {
            std::vector<double> a(d.size()), b(d.size());
            crew::parallel_inclusive_scan(d.begin(), d.end(), a.begin());
            crew::parallel_exclusive_scan(crew::deterministic, d.begin(), d.end(), b.begin(), 0.5);
            a.insert(a.end(), b.begin(), b.end());
            results.push_back(std::move(a));
        });
    }
    for (auto& r : results) EXPECT_EQ(std::memcmp(r.data(), results[0].data(), r.size() * sizeof(double)), 0);
}

CREW_ALL_POOL_SIZES(algorithms_scan);

}  // namespace
