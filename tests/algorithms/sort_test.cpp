// parallel_sort and parallel_stable_sort against std::sort and std::stable_sort (including the
// order of equal elements), on pools of 1, 2, 4 and 8 workers and with every loop partitioner.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/common.hpp"

namespace {

using namespace alg_test;

class algorithms_sort : public crew_test::pool_test {};

// Past the serial cutoff (4096) too, so the parallel merge sort runs.
const std::vector<std::size_t> sort_sizes{0, 1, 2, 3, 17, 1000, 4097, 30000};

TEST_P(algorithms_sort, sort_matches_std_sort) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::uint32_t seed : seeds())
            for (std::size_t n : sort_sizes)
                each_loop_partitioner([&](auto part) {
                    auto v = random_ints(n, seed), w = v;
                    crew::parallel_sort(part, v.begin(), v.end());
                    std::sort(w.begin(), w.end());
                    EXPECT_EQ(v, w) << n;
                    // Many duplicates, descending.
                    auto d = random_ints(n, seed, 0, 9), e = d;
                    crew::parallel_sort(part, d.begin(), d.end(), std::greater<>());
                    std::sort(e.begin(), e.end(), std::greater<>());
                    EXPECT_EQ(d, e) << n;
                });
    });
}

TEST_P(algorithms_sort, default_partitioner_on_presorted_and_reversed_input) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        std::vector<int> up(50000), down(50000);
        std::iota(up.begin(), up.end(), 0);
        std::iota(down.rbegin(), down.rend(), 0);
        crew::parallel_sort(down.begin(), down.end());
        EXPECT_EQ(down, up);
        crew::parallel_sort(up.begin(), up.end());
        EXPECT_TRUE(std::is_sorted(up.begin(), up.end()));
    });
}

TEST_P(algorithms_sort, stable_sort_keeps_equal_elements_in_input_order) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::uint32_t seed : seeds())
            for (std::size_t n : sort_sizes)
                each_loop_partitioner([&](auto part) {
                    // (key, position): few distinct keys, so most elements have equals.
                    auto keys = random_ints(n, seed, 0, 20);
                    std::vector<std::pair<int, std::size_t>> v(n);
                    for (std::size_t i = 0; i < n; ++i) v[i] = {keys[i], i};
                    auto w = v;
                    auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
                    crew::parallel_stable_sort(part, v.begin(), v.end(), by_key);
                    std::stable_sort(w.begin(), w.end(), by_key);
                    EXPECT_EQ(v, w) << n;
                });
    });
}

TEST_P(algorithms_sort, sorts_move_only_and_allocating_types) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        auto keys = random_ints(20000, 8);
        std::vector<std::unique_ptr<int>> v;
        for (int k : keys) v.push_back(std::make_unique<int>(k));
        auto deref_less = [](const auto& a, const auto& b) { return *a < *b; };
        crew::parallel_stable_sort(v.begin(), v.end(), deref_less);
        std::sort(keys.begin(), keys.end());
        for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(*v[i], keys[i]);

        auto words = random_words(20000, 8), want = words;
        crew::parallel_sort(words.begin(), words.end());
        std::sort(want.begin(), want.end());
        EXPECT_EQ(words, want);
    });
}

CREW_ALL_POOL_SIZES(algorithms_sort);

}  // namespace
