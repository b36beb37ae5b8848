// The range overloads (ranges.hpp) against std::ranges, on pools of 1, 2, 4 and 8 workers:
// projections, partitioner first and last, rvalue ranges, exceptions from projections.
#include <algorithm>
#include <numeric>
#include <ranges>
#include <string>
#include <vector>

#include "algorithms/common.hpp"

namespace {

using namespace alg_test;

class algorithms_ranges : public crew_test::pool_test {};

struct item {
    int key;
    std::string name;
};

TEST_P(algorithms_ranges, range_forms_match_std_ranges) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::size_t n : sizes) {
            auto v = random_ints(n, 3, 0, 9);
            std::vector<item> items;
            for (int x : v) items.push_back({x, std::to_string(x)});
            auto key = &item::key;
            auto is3 = [](int k) { return k == 3; };
            EXPECT_EQ(crew::parallel_count_if(items, is3, key), std::ranges::count_if(items, is3, key));
            EXPECT_EQ(crew::parallel_count(items, 4, key, crew::static_partition), std::ranges::count(items, 4, key));
            EXPECT_EQ(crew::parallel_find_if(items, is3, key), std::ranges::find_if(items, is3, key));
            EXPECT_EQ(crew::parallel_find(crew::static_partition, items, 5, key), std::ranges::find(items, 5, key));
            EXPECT_EQ(crew::parallel_any_of(items, is3, key), std::ranges::any_of(items, is3, key));
            EXPECT_EQ(crew::parallel_min_element(items, std::ranges::less{}, key), std::ranges::min_element(items, std::ranges::less{}, key));
            EXPECT_EQ(crew::parallel_max_element(items, std::ranges::less{}, key, crew::static_partition),
                      std::ranges::max_element(items, std::ranges::less{}, key));
            auto mm = crew::parallel_minmax_element(items, std::ranges::less{}, key);
            auto me = std::ranges::minmax_element(items, std::ranges::less{}, key);
            EXPECT_EQ(mm.min, me.min);
            EXPECT_EQ(mm.max, me.max);
            EXPECT_EQ(crew::parallel_reduce(v), std::reduce(v.begin(), v.end()));
            EXPECT_EQ(crew::parallel_reduce(v, 5L), std::reduce(v.begin(), v.end(), 5L));
            EXPECT_TRUE(crew::parallel_equal(v, items, std::ranges::equal_to{}, std::identity{}, key));
            std::vector<int> out(n), exp(n);
            crew::parallel_inclusive_scan(v, out.begin());
            std::inclusive_scan(v.begin(), v.end(), exp.begin());
            EXPECT_EQ(out, exp);
            auto s1 = items, s2 = items;
            crew::parallel_stable_sort(s1, std::ranges::greater{}, key);
            std::ranges::stable_sort(s2, std::ranges::greater{}, key);
            EXPECT_TRUE(std::ranges::equal(s1, s2, {}, &item::name, &item::name));
            auto p1 = items, p2 = items;
            auto pp = crew::parallel_stable_partition(p1, is3, key);
            // (std::stable_partition: clang 14 cannot compile std::ranges' subrange results)
            auto pe = std::stable_partition(p2.begin(), p2.end(), [](const item& x) { return x.key == 3; });
            EXPECT_EQ(pp - p1.begin(), pe - p2.begin());
            EXPECT_TRUE(std::ranges::equal(p1, p2, {}, &item::name, &item::name));
            std::vector<int> c1(n), c2(n);
            auto odd = [](int x) { return x % 2 != 0; };
            EXPECT_EQ(crew::parallel_copy_if(v, c1.begin(), odd) - c1.begin(),
                      std::ranges::copy_if(v, c2.begin(), odd).out - c2.begin());
            EXPECT_EQ(c1, c2);
            crew::parallel_for_each(v, [](int& x) { x += 1; }, crew::static_partition);
            crew::parallel_sort(v);
            EXPECT_TRUE(std::ranges::is_sorted(v));
            // An rvalue vector: its iterators would dangle.
            static_assert(std::same_as<decltype(crew::parallel_find(std::vector<int>{1, 2}, 2)), std::ranges::dangling>);
        }
        // Exceptions from a projection reach the caller.
        std::vector<int> big(20000, 1);
        auto bad = [](int x) -> int {
            if (x == 2) throw test_error("proj");
            return x;
        };
        big[12345] = 2;
        EXPECT_THROW(crew::parallel_count_if(big, [](int) { return true; }, bad), test_error);
        EXPECT_THROW(crew::parallel_sort(big, std::ranges::less{}, bad), test_error);
    });
}

#if !defined(__clang__) || __clang_major__ >= 15  // clang 14 cannot compile libstdc++'s views
TEST_P(algorithms_ranges, rvalue_views) {
    pool().run([&] {
        EXPECT_EQ(crew::parallel_reduce(crew::static_partition, std::views::iota(0, 1000), 0L), 499500L);
        EXPECT_EQ(crew::parallel_count_if(std::views::iota(0, 1000), [](int x) { return x % 3 == 0; }), 334);
        EXPECT_EQ(*crew::parallel_find_if(std::views::iota(0, 1000), [](int x) { return x > 500; }), 501);
    });
}
#endif

// The forms that once also matched reduce.hpp's and for_each.hpp's iterator/index overloads (a
// range taken for `first`, init for `last`): each must pick the range overload.
TEST_P(algorithms_ranges, forms_that_look_like_iterator_pairs) {
    pool().run([&] {
        for (std::size_t n : sizes) {
            auto v = random_ints(n, 7, -50, 50);
            auto w = random_ints(n + 3, 8, -50, 50);  // longer: the binary forms use the shorter
            auto wn = w.begin() + static_cast<std::ptrdiff_t>(n);
            const long sum = std::reduce(v.begin(), v.end(), 3L);
            EXPECT_EQ(crew::parallel_reduce(v, 3L, std::plus<>()), sum);
            EXPECT_EQ(crew::parallel_reduce(v, 3L, crew::static_partition), sum);
            EXPECT_EQ(crew::parallel_reduce(v, 3L, crew::simple_partition(16)), sum);
            EXPECT_EQ(crew::parallel_reduce(v, 3L, std::plus<>(), crew::static_partition), sum);
            EXPECT_EQ(crew::parallel_reduce(crew::static_partition, v, 3L, std::plus<>()), sum);
            const long inner = std::transform_reduce(v.begin(), v.end(), w.begin(), 2L, std::plus<>(), std::multiplies<>());
            EXPECT_EQ(crew::parallel_transform_reduce(v, w, 2L, std::plus<>(), std::multiplies<>()), inner);
            EXPECT_EQ(crew::parallel_transform_reduce(v, w, 2L, std::plus<>(), std::multiplies<>(), crew::static_partition),
                      inner);
            EXPECT_EQ(crew::parallel_transform_reduce(crew::static_partition, v, w, 2L, std::plus<>(), std::multiplies<>()),
                      inner);
            std::vector<int> out(n + 3, 0), exp(n + 3, 0);
            std::transform(v.begin(), v.end(), w.begin(), exp.begin(), std::minus<>());
            EXPECT_EQ(crew::parallel_transform(v, w, out.begin(), std::minus<>()) - out.begin(), static_cast<std::ptrdiff_t>(n));
            EXPECT_EQ(out, exp);
            std::ranges::fill(out, 0);
            EXPECT_EQ(crew::parallel_transform(w, v, out.begin(), std::minus<>(), crew::static_partition) - out.begin(),
                      static_cast<std::ptrdiff_t>(n));
            std::transform(wn - static_cast<std::ptrdiff_t>(n), wn, v.begin(), exp.begin(), std::minus<>());
            EXPECT_EQ(out, exp);
            // The iterator/index forms with the same argument counts still work.
            EXPECT_EQ(crew::parallel_reduce(v.begin(), v.end(), 3L), sum);
            EXPECT_EQ(crew::parallel_reduce(v.data(), v.data() + n, 3L, std::plus<>()), sum);
            EXPECT_EQ(crew::parallel_reduce(0, static_cast<int>(n), 0L), static_cast<long>(n * (n - (n > 0)) / 2));
            EXPECT_EQ(crew::parallel_transform_reduce(v.begin(), v.end(), 2L, std::plus<>(), [](int x) { return x * 2L; }),
                      std::transform_reduce(v.begin(), v.end(), 2L, std::plus<>(), [](int x) { return x * 2L; }));
            std::ranges::fill(out, 0);
            crew::parallel_transform(v.begin(), v.end(), w.begin(), out.begin(), std::minus<>());
            std::transform(v.begin(), v.end(), w.begin(), exp.begin(), std::minus<>());
            EXPECT_EQ(out, exp);
        }
    });
}

#if !defined(__clang__) || __clang_major__ >= 15  // clang 14 cannot compile libstdc++'s views
TEST_P(algorithms_ranges, forms_that_look_like_iterator_pairs_on_views) {
    pool().run([&] {
        for (int n : {0, 1, 7, 1000, 100000}) {
            auto io = std::views::iota(0, n);
            const long long sum = std::reduce(io.begin(), io.end(), 3LL);
            EXPECT_EQ(crew::parallel_reduce(std::views::iota(0, n), 3LL, std::plus<>()), sum);
            EXPECT_EQ(crew::parallel_reduce(std::views::iota(0, n), 3LL, crew::static_partition), sum);
            auto io2 = std::views::iota(5, 5 + n + 2);
            const long long inner =
                std::transform_reduce(io.begin(), io.end(), io2.begin(), 2LL, std::plus<>(), std::multiplies<long long>());
            EXPECT_EQ(crew::parallel_transform_reduce(std::views::iota(0, n), std::views::iota(5, 5 + n + 2), 2LL, std::plus<>(),
                                                      std::multiplies<long long>()),
                      inner);
            std::vector<int> out(static_cast<std::size_t>(n)), exp(static_cast<std::size_t>(n));
            std::transform(io.begin(), io.end(), io2.begin(), exp.begin(), std::plus<>());
            EXPECT_EQ(crew::parallel_transform(std::views::iota(0, n), std::views::iota(5, 5 + n + 2), out.begin(), std::plus<>()),
                      out.end());
            EXPECT_EQ(out, exp);
        }
    });
}
#endif

CREW_ALL_POOL_SIZES(algorithms_ranges);

}  // namespace
