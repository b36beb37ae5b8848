// parallel_for, parallel_for_each, parallel_transform and parallel_invoke against their serial
// counterparts, on pools of 1, 2, 4 and 8 workers and with every loop partitioner.
#include <algorithm>
#include <atomic>
#include <numeric>
#include <vector>

#include "algorithms/common.hpp"

namespace {

using namespace alg_test;

class algorithms_for : public crew_test::pool_test {};

TEST_P(algorithms_for, visits_every_index_exactly_once) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::size_t n : sizes) {
            each_loop_partitioner([&](auto part) {
                std::vector<int> hits(n, 0);
                crew::parallel_for(part, std::size_t{0}, n, [&](std::size_t i) { ++hits[i]; });
                EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), static_cast<std::ptrdiff_t>(n)) << n;
            });
        }
    });
}

TEST_P(algorithms_for, index_ranges_with_offsets_and_mixed_types) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        // Signed first, unsigned last: the indices are signed and start below zero.
        std::vector<int> hits(1010, 0);
        crew::parallel_for(-10, std::size_t{1000}, [&](long i) { ++hits[static_cast<std::size_t>(i + 10)]; });
        EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), 1010);
        // Indices beyond 2^32.
        const std::int64_t base = std::int64_t{1} << 40;
        std::vector<int> far(500, 0);
        crew::parallel_for(base, base + 500, [&](std::int64_t i) { ++far[static_cast<std::size_t>(i - base)]; });
        EXPECT_EQ(std::count(far.begin(), far.end(), 1), 500);
        // Empty ranges do nothing.
        crew::parallel_for(5, 5, [&](int) { ADD_FAILURE(); });
    });
}

TEST_P(algorithms_for, for_each_matches_std_for_each) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::uint32_t seed : seeds())
            for (std::size_t n : sizes)
                each_loop_partitioner([&](auto part) {
                    auto v = random_ints(n, seed), w = v;
                    auto f = [](int& x) { x = x * 3 + 1; };
                    crew::parallel_for_each(part, v.begin(), v.end(), f);
                    std::for_each(w.begin(), w.end(), f);
                    EXPECT_EQ(v, w) << n;
                });
    });
}

TEST_P(algorithms_for, transform_matches_std_transform) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::uint32_t seed : seeds())
            for (std::size_t n : sizes)
                each_loop_partitioner([&](auto part) {
                    auto v = random_ints(n, seed);
                    auto f = [](int x) { return static_cast<long>(x) * x - 7; };
                    std::vector<long> got(n), want(n);
                    auto end = crew::parallel_transform(part, v.begin(), v.end(), got.begin(), f);
                    std::transform(v.begin(), v.end(), want.begin(), f);
                    EXPECT_EQ(got, want);
                    EXPECT_EQ(end, got.end());
                    // Binary form.
                    auto u = random_ints(n, seed + 100);
                    std::vector<int> got2(n), want2(n);
                    crew::parallel_transform(part, v.begin(), v.end(), u.begin(), got2.begin(), std::minus<>());
                    std::transform(v.begin(), v.end(), u.begin(), want2.begin(), std::minus<>());
                    EXPECT_EQ(got2, want2);
                    // In place.
                    auto in_place = v;
                    crew::parallel_transform(part, in_place.begin(), in_place.end(), in_place.begin(),
                                             [](int x) { return -x; });
                    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(in_place[i], -v[i]);
                });
    });
}

TEST_P(algorithms_for, invoke_runs_every_callable) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        for (long rep = 0; rep < crew_test::scaled(200); ++rep) {
            std::atomic<int> mask{0};
            crew::parallel_invoke([&] { mask |= 1; });
            crew::parallel_invoke([&] { mask |= 2; }, [&] { mask |= 4; });
            crew::parallel_invoke([&] { mask |= 8; }, [&] { mask |= 16; }, [&] { mask |= 32; },
                                  [&] { mask |= 64; }, [&] { mask |= 128; });
            crew::parallel_invoke(crew::static_partition, [&] { mask |= 256; }, [&] { mask |= 512; });
            ASSERT_EQ(mask.load(), 1023);
        }
    });
}

TEST_P(algorithms_for, static_partition_makes_one_chunk_per_worker) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        // Count leaves through parallel_transform_reduce's sibling: a for over chunks observes
        // contiguous runs; with static_partition there are exactly min(n, workers) of them.
        const std::size_t n = 1000;
        std::vector<std::size_t> chunk_of(n);
        std::atomic<std::size_t> next{0};
        crew::parallel_for(crew::static_partition, std::size_t{0}, n, [&](std::size_t i) {
            thread_local std::size_t last_i = ~std::size_t{0}, last_chunk = 0;
            if (i == 0 || last_i != i - 1) last_chunk = next.fetch_add(1);
            last_i = i;
            chunk_of[i] = last_chunk;
        });
        std::size_t runs = 1;
        for (std::size_t i = 1; i < n; ++i) runs += chunk_of[i] != chunk_of[i - 1];
        EXPECT_LE(runs, workers());
    });
}

CREW_ALL_POOL_SIZES(algorithms_for);

}  // namespace
