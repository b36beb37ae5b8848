// Odd value types in the reductions and scans: accumulators that are containers, types whose only
// constructor from the element type is explicit (and means something else), strings built from
// C strings, move-only accumulators and elements. Every overload must compute what std::reduce,
// std::transform_reduce, std::inclusive_scan and std::exclusive_scan compute, on every pool size
// and with every partitioner.
#include <algorithm>
#include <atomic>
#include <climits>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <typeinfo>
#include <unordered_set>
#include <vector>

#include "algorithms/common.hpp"

namespace {

using namespace alg_test;

// Appends elements to a vector<int>: associative, not commutative, and valid for std::reduce (it
// accepts every pairing of accumulator and element). std::vector<int> has an explicit constructor
// from a size: an accumulator direct-initialised from an element would be that many zeros.
struct append {
    std::vector<int> operator()(std::vector<int> a, int x) const {
        a.push_back(x);
        return a;
    }
    std::vector<int> operator()(int x, std::vector<int> b) const {
        b.insert(b.begin(), x);
        return b;
    }
    std::vector<int> operator()(int x, int y) const { return {x, y}; }
    std::vector<int> operator()(std::vector<int> a, const std::vector<int>& b) const {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    }
};

// Collects distinct values. std::unordered_set's explicit constructor from an int is a bucket count.
using iset = std::unordered_set<int>;
struct collect {
    iset operator()(iset a, int x) const {
        a.insert(x);
        return a;
    }
    iset operator()(int x, iset b) const {
        b.insert(x);
        return b;
    }
    iset operator()(int x, int y) const { return {x, y}; }
    iset operator()(iset a, const iset& b) const {
        a.insert(b.begin(), b.end());
        return a;
    }
};

// A sum and a count whose only constructor from an int is explicit and means "that many zeros".
struct tally {
    long sum = 0;
    long count = 0;
    tally() = default;
    explicit tally(int zeros) : count(zeros) {}
    friend bool operator==(const tally&, const tally&) = default;
};
struct tally_op {
    tally operator()(tally a, int x) const {
        a.sum += x;
        ++a.count;
        return a;
    }
    tally operator()(int x, tally b) const {
        b.sum += x;
        ++b.count;
        return b;
    }
    tally operator()(int x, int y) const {
        tally t;
        t.sum = static_cast<long>(x) + y;
        t.count = 2;
        return t;
    }
    tally operator()(tally a, const tally& b) const {
        a.sum += b.sum;
        a.count += b.count;
        return a;
    }
};

// Concatenation of string_views into a std::string (whose constructor from a string_view is
// explicit): associative, not commutative.
struct cat {
    std::string operator()(std::string a, std::string_view b) const { return a.append(b); }
    std::string operator()(std::string_view a, std::string b) const { return b.insert(0, a); }
    std::string operator()(std::string_view a, std::string_view b) const { return std::string(a).append(b); }
    std::string operator()(std::string a, const std::string& b) const { return a.append(b); }
};

std::vector<int> small_values(std::size_t n, std::uint32_t seed) { return random_ints(n, seed, -50, 50); }

std::vector<std::string_view> views_of(const std::vector<std::string>& words) {
    return std::vector<std::string_view>(words.begin(), words.end());
}

class edge_types : public crew_test::pool_test {};

// Sizes small enough for quadratic accumulators, and a partitioner list that still makes many
// leaves and scan blocks out of them.
const std::vector<std::size_t> small_sizes{0, 1, 2, 3, 5, 17, 200};

TEST_P(edge_types, reduce_into_containers_and_explicit_types_equals_std_reduce) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::size_t n : small_sizes)
            each_partitioner([&](auto part) {
                auto v = small_values(n, 3);
                std::vector<int> init{7};
                auto want = std::reduce(v.begin(), v.end(), init, append());
                EXPECT_EQ(crew::parallel_reduce(part, v.begin(), v.end(), init, append()), want) << n;
                EXPECT_EQ(crew::parallel_reduce(v.begin(), v.end(), init, append()), want) << n;
                auto twice = [](int x) { return 2 * x; };
                EXPECT_EQ(crew::parallel_transform_reduce(part, v.begin(), v.end(), init, append(), twice),
                          std::transform_reduce(v.begin(), v.end(), init, append(), twice));
                EXPECT_EQ(crew::parallel_transform_reduce(v.begin(), v.end(), init, append(), twice),
                          std::transform_reduce(v.begin(), v.end(), init, append(), twice));
                // The index forms reduce the indices themselves.
                std::vector<int> idx(n);
                std::iota(idx.begin(), idx.end(), -3);
                EXPECT_EQ(crew::parallel_reduce(part, -3, static_cast<int>(n) - 3, init, append()),
                          std::reduce(idx.begin(), idx.end(), init, append()));
                EXPECT_EQ(crew::parallel_transform_reduce(part, -3, static_cast<int>(n) - 3, init, append(), twice),
                          std::transform_reduce(idx.begin(), idx.end(), init, append(), twice));

                EXPECT_EQ(crew::parallel_reduce(part, v.begin(), v.end(), tally{}, tally_op()),
                          std::reduce(v.begin(), v.end(), tally{}, tally_op()));
                EXPECT_EQ(crew::parallel_reduce(part, -3, static_cast<int>(n) - 3, tally{}, tally_op()),
                          std::reduce(idx.begin(), idx.end(), tally{}, tally_op()));
                EXPECT_EQ(crew::parallel_transform_reduce(part, v.begin(), v.end(), tally{}, tally_op(), twice),
                          std::transform_reduce(v.begin(), v.end(), tally{}, tally_op(), twice));
            });
    });
}

TEST_P(edge_types, reduce_collects_every_distinct_value) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    const int n = static_cast<int>(crew_test::scaled(100000));
    std::vector<int> v(static_cast<std::size_t>(n));
    std::iota(v.begin(), v.end(), 0);
    pool().run([&] {
        each_partitioner([&](auto part) {
            iset got = crew::parallel_reduce(part, v.begin(), v.end(), iset{}, collect());
            EXPECT_EQ(got.size(), v.size());
            EXPECT_EQ(got, iset(v.begin(), v.end()));
            EXPECT_EQ(crew::parallel_reduce(part, 0, n, iset{-1}, collect()).size(), v.size() + 1);
            EXPECT_EQ(crew::parallel_transform_reduce(part, v.begin(), v.end(), iset{}, collect(),
                                                      [](int x) { return x / 2; })
                          .size(),
                      (v.size() + 1) / 2);
        });
    });
}

TEST_P(edge_types, reduce_strings_from_views_and_c_strings) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::size_t n : sizes)
            each_partitioner([&](auto part) {
                auto words = random_words(n, 5);
                auto views = views_of(words);
                std::string want = std::reduce(views.begin(), views.end(), std::string("<"), cat());
                EXPECT_EQ(crew::parallel_reduce(part, views.begin(), views.end(), std::string("<"), cat()), want);
                // const char* converts implicitly to std::string; std::plus<> joins a string and one.
                std::vector<const char*> cs;
                for (auto& w : words) cs.push_back(w.c_str());
                EXPECT_EQ(crew::parallel_reduce(part, cs.begin(), cs.end(), std::string("<")), want);
                EXPECT_EQ(crew::parallel_reduce(cs.begin(), cs.end(), std::string("<")), want);
            });
    });
}

// Every scan form, with accumulators that cannot be direct-initialised from an element.
TEST_P(edge_types, scans_of_explicit_types_equal_std_scans) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{17}, std::size_t{5000}})
            each_partitioner([&](auto part) {
                auto v = small_values(n, 4);
                std::vector<tally> want(n), got(n);
                std::exclusive_scan(v.begin(), v.end(), want.begin(), tally{}, tally_op());
                crew::parallel_exclusive_scan(part, v.begin(), v.end(), got.begin(), tally{}, tally_op());
                EXPECT_EQ(got, want) << n;
                std::fill(got.begin(), got.end(), tally{});
                crew::parallel_exclusive_scan(v.begin(), v.end(), got.begin(), tally{}, tally_op());
                EXPECT_EQ(got, want) << n;
                std::inclusive_scan(v.begin(), v.end(), want.begin(), tally_op(), tally{});
                crew::parallel_inclusive_scan(part, v.begin(), v.end(), got.begin(), tally_op(), tally{});
                EXPECT_EQ(got, want) << n;
                std::fill(got.begin(), got.end(), tally{});
                crew::parallel_inclusive_scan(v.begin(), v.end(), got.begin(), tally_op(), tally{});
                EXPECT_EQ(got, want) << n;
            });
        for (std::size_t n : small_sizes)
            each_partitioner([&](auto part) {
                auto v = small_values(n, 6);
                std::vector<std::vector<int>> want(n), got(n);
                std::exclusive_scan(v.begin(), v.end(), want.begin(), std::vector<int>{9}, append());
                crew::parallel_exclusive_scan(part, v.begin(), v.end(), got.begin(), std::vector<int>{9}, append());
                EXPECT_EQ(got, want) << n;
                std::inclusive_scan(v.begin(), v.end(), want.begin(), append(), std::vector<int>{});
                crew::parallel_inclusive_scan(part, v.begin(), v.end(), got.begin(), append(), std::vector<int>{});
                EXPECT_EQ(got, want) << n;
                // Strings from views, and the default operation on C strings.
                auto words = random_words(n, 7);
                auto views = views_of(words);
                std::vector<std::string> swant(n), sgot(n);
                std::exclusive_scan(views.begin(), views.end(), swant.begin(), std::string("<"), cat());
                crew::parallel_exclusive_scan(part, views.begin(), views.end(), sgot.begin(), std::string("<"), cat());
                EXPECT_EQ(sgot, swant);
                std::vector<const char*> cs;
                for (auto& w : words) cs.push_back(w.c_str());
                crew::parallel_exclusive_scan(part, cs.begin(), cs.end(), sgot.begin(), std::string("<"));
                EXPECT_EQ(sgot, swant);
                std::fill(sgot.begin(), sgot.end(), std::string());
                crew::parallel_exclusive_scan(cs.begin(), cs.end(), sgot.begin(), std::string("<"));
                EXPECT_EQ(sgot, swant);
                std::inclusive_scan(views.begin(), views.end(), swant.begin(), cat(), std::string(">"));
                crew::parallel_inclusive_scan(part, views.begin(), views.end(), sgot.begin(), cat(), std::string(">"));
                EXPECT_EQ(sgot, swant);
                // In place, over strings (the value type): each element is read before it is overwritten.
                auto in_place = words;
                std::inclusive_scan(words.begin(), words.end(), swant.begin());
                crew::parallel_inclusive_scan(part, in_place.begin(), in_place.end(), in_place.begin());
                EXPECT_EQ(in_place, swant);
                in_place = words;
                std::exclusive_scan(words.begin(), words.end(), swant.begin(), std::string("<"));
                crew::parallel_exclusive_scan(part, in_place.begin(), in_place.end(), in_place.begin(), std::string("<"));
                EXPECT_EQ(in_place, swant);
            });
    });
}

// ---- index loops over every integer type ----

// Every integer type the index forms admit (bool is rejected at compile time, see
// compile_fail_bool_index.cpp).

CREW_ALL_POOL_SIZES(edge_types);

}  // namespace
