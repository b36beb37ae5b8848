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
using index_types = std::tuple<char, signed char, unsigned char, char8_t, char16_t, char32_t, wchar_t, short,
                               unsigned short, int, unsigned, long, unsigned long, long long, unsigned long long>;

template <class Tuple, class F>
void for_each_type(F&& f) {
    std::apply([&](auto... tags) { (f(tags), ...); }, Tuple{});
}

// Index arithmetic in the test is done in __int128, independently of crew's.
using wide = __int128;

template <class I>
std::string show(I x) {
    std::string s = std::is_signed_v<I> ? std::to_string(static_cast<long long>(x))
                                         : std::to_string(static_cast<unsigned long long>(x));
    s += ' ';  // (appending, not prepending: g++ 12 -O3 warns falsely about string insertion)
    return s;
}

// Ranges at the extremes of I: empty ones, one element at each end, the whole range of 8- and
// 16-bit types, 1,000 elements at each end of wider ones, and some around zero.
template <class I>
std::vector<std::pair<I, I>> extreme_ranges() {
    constexpr wide lo = std::numeric_limits<I>::min(), hi = std::numeric_limits<I>::max();
    auto at = [](wide v) { return static_cast<I>(v); };
    std::vector<std::pair<I, I>> r{{at(lo), at(lo)}, {at(hi), at(hi)}, {at(lo), at(lo + 1)}, {at(hi - 1), at(hi)}};
    if constexpr (sizeof(I) <= 2) {
        r.emplace_back(at(lo), at(hi));
    } else {
        r.emplace_back(at(lo), at(lo + 1000));
        r.emplace_back(at(hi - 1000), at(hi));
    }
    if constexpr (std::is_signed_v<I> && sizeof(I) > 1) r.emplace_back(at(-300), at(300));
    return r;
}

std::size_t count_of(wide a, wide b) { return static_cast<std::size_t>(b - a); }

// Calls f(partitioner) for each loop partitioner, with leaves that stay few on large ranges.
template <class F>
void index_loop_partitioners(std::size_t n, F&& f) {
    const int grain = n > 2000 ? 61 : 1;
    f(crew::auto_partition);
    f(crew::static_partition);
    f(crew::simple_partition{grain});
}

template <class I, class P>
void check_index_loop(P part, I a, I b) {
    const std::size_t n = count_of(a, b);
    std::vector<std::atomic<unsigned>> seen(n);
    std::atomic<bool> outside{false};
    crew::parallel_for(part, a, b, [&](auto i) {
        static_assert(std::is_same_v<decltype(i), I>, "the index has the bounds' type");
        const wide k = static_cast<wide>(i) - static_cast<wide>(a);
        if (k < 0 || k >= static_cast<wide>(n))
            outside = true;
        else
            seen[static_cast<std::size_t>(k)].fetch_add(1, std::memory_order_relaxed);
    });
    ASSERT_FALSE(outside.load()) << "an index outside [first, last)";
    for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(seen[k].load(), 1u) << "index first + " << k;
}

template <class I, class P>
void check_index_reduce(P part, I a, I b) {
    using ull = unsigned long long;
    ull sum = 0, squares = 0;
    for (wide k = a; k < b; ++k) {
        sum += static_cast<ull>(static_cast<I>(k));
        squares += static_cast<ull>(static_cast<I>(k)) * static_cast<ull>(static_cast<I>(k));
    }
    auto add = [](ull acc, auto x) { return acc + static_cast<ull>(x); };
    auto square = [](auto i) {
        static_assert(std::is_same_v<decltype(i), I>, "the index has the bounds' type");
        return static_cast<ull>(i) * static_cast<ull>(i);
    };
    EXPECT_EQ(crew::parallel_reduce(part, a, b, ull{0}, add), sum);
    EXPECT_EQ(crew::parallel_transform_reduce(part, a, b, ull{0}, std::plus<>(), square), squares);
    EXPECT_EQ(crew::parallel_transform_reduce(part, a, b, std::size_t{0}, std::plus<>(), [](I) { return std::size_t{1}; }),
              count_of(a, b));
}

TEST_P(edge_types, index_forms_visit_every_index_of_every_integer_type_once) {
    crew_test::watchdog dog(std::chrono::seconds(600));
    pool().run([&] {
        for_each_type<index_types>([&](auto tag) {
            using I = decltype(tag);
            SCOPED_TRACE(typeid(I).name());
            for (const auto& range : extreme_ranges<I>()) {
                const I a = range.first, b = range.second;  // (clang 14 cannot capture structured bindings)
                SCOPED_TRACE(show(a) + " to " + show(b));
                const std::size_t n = count_of(a, b);
                index_loop_partitioners(n, [&](auto part) {
                    check_index_loop(part, a, b);
                    check_index_reduce(part, a, b);
                });
                const int grain = n > 2000 ? 61 : 1;
                check_index_reduce(crew::deterministic_partition{grain}, a, b);
                check_index_reduce(crew::deterministic, a, b);
                if (a == b) continue;
                // Reversed bounds: nothing runs, std::invalid_argument says so.
                std::atomic<int> calls{0};
                EXPECT_THROW(crew::parallel_for(b, a, [&](I) { ++calls; }), std::invalid_argument);
                EXPECT_THROW(crew::parallel_reduce(b, a, 0LL, [&](long long x, auto) { ++calls; return x; }),
                             std::invalid_argument);
                EXPECT_EQ(calls.load(), 0);
            }
        });
    });
}

// The pieces static_partition cuts [b, e) into, by the splitter itself.
void static_pieces(crew::detail::static_splitter s, std::size_t b, std::size_t e,
                   std::vector<std::pair<std::size_t, std::size_t>>& out) {
    crew::detail::static_splitter right;
    if (std::size_t l = s.split(e - b, false, right); l != 0) {
        static_pieces(s, b, b + l, out);
        static_pieces(right, b + l, e, out);
    } else {
        out.emplace_back(b, e);
    }
}

// static_partition over the whole range of int, unsigned, long long, unsigned long long: the
// counts, the pieces and every piece's first index are computed without overflow.
TEST(edge_types_static_split, whole_32_and_64_bit_ranges_split_exactly) {
    using crew::detail::advance_by;
    using crew::detail::checked_count;
    EXPECT_EQ(checked_count(INT_MIN, INT_MAX, "t"), std::size_t{UINT_MAX});
    EXPECT_EQ(checked_count(0u, UINT_MAX, "t"), std::size_t{UINT_MAX});
    EXPECT_EQ(checked_count(LLONG_MIN, LLONG_MAX, "t"), std::numeric_limits<std::size_t>::max());
    EXPECT_EQ(checked_count(0ull, ULLONG_MAX, "t"), std::numeric_limits<std::size_t>::max());
    for (std::size_t workers : {1, 2, 3, 4, 7, 8, 64}) {
        for (std::size_t n : {std::size_t{UINT_MAX}, std::numeric_limits<std::size_t>::max()}) {
            std::vector<std::pair<std::size_t, std::size_t>> pieces;
            static_pieces(crew::detail::static_splitter{workers}, 0, n, pieces);
            ASSERT_EQ(pieces.size(), workers);
            std::size_t next = 0;
            for (auto [b, e] : pieces) {
                ASSERT_EQ(b, next);
                ASSERT_GE(e - b, n / workers);
                ASSERT_LE(e - b - n / workers, 1u);  // balanced
                next = e;
                if (n == UINT_MAX) {
                    EXPECT_EQ(advance_by(INT_MIN, b), static_cast<int>(wide{INT_MIN} + b));
                    EXPECT_EQ(advance_by(INT_MIN, e), static_cast<int>(wide{INT_MIN} + e));
                    EXPECT_EQ(advance_by(0u, e), e);
                }
                EXPECT_EQ(advance_by(LLONG_MIN, b), static_cast<long long>(wide{LLONG_MIN} + b));
                EXPECT_EQ(advance_by(LLONG_MIN, e), static_cast<long long>(wide{LLONG_MIN} + e));
            }
            ASSERT_EQ(next, n);
        }
    }
}

struct stop {};

// Runs static_partition loops and reductions over the whole range of I for real: every leaf's first
// call throws, so each leaf calls f once (the loop) or op once (on its second element).
template <class I>
void check_whole_range_leaf_starts(std::size_t workers) {
    constexpr I lo = std::numeric_limits<I>::min(), hi = std::numeric_limits<I>::max();
    std::vector<std::pair<std::size_t, std::size_t>> pieces;
    static_pieces(crew::detail::static_splitter{workers}, 0, count_of(lo, hi), pieces);
    std::set<wide> starts;
    for (auto [b, e] : pieces) starts.insert(wide{lo} + static_cast<wide>(b));
    std::mutex m;
    std::vector<wide> seen, seen_second;
    EXPECT_THROW(crew::parallel_for(crew::static_partition, lo, hi,
                                    [&](I i) {
                                        std::lock_guard lock(m);
                                        seen.push_back(i);
                                        throw stop{};
                                    }),
                 stop);
    auto op = [&](unsigned long long, auto x) -> unsigned long long {
        std::lock_guard lock(m);
        seen_second.push_back(static_cast<wide>(x) - 1);
        throw stop{};
    };
    EXPECT_THROW(crew::parallel_reduce(crew::static_partition, lo, hi, 0ull, op), stop);
    ASSERT_FALSE(seen.empty());
    ASSERT_FALSE(seen_second.empty());
    for (wide i : seen) EXPECT_EQ(starts.count(i), 1u) << static_cast<long long>(i);
    for (wide i : seen_second) EXPECT_EQ(starts.count(i), 1u) << static_cast<long long>(i);
}

TEST_P(edge_types, static_partition_over_whole_32_and_64_bit_ranges) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        check_whole_range_leaf_starts<int>(workers());
        check_whole_range_leaf_starts<unsigned>(workers());
        check_whole_range_leaf_starts<long long>(workers());
        check_whole_range_leaf_starts<unsigned long long>(workers());
    });
}

// ---- sorts with comparators taking non-const references, move-only elements ----

struct record {
    std::string name;
    int key = 0;
    std::vector<int> payload;
    friend bool operator==(const record&, const record&) = default;
};

std::vector<record> random_records(std::size_t n, std::uint32_t seed) {
    auto words = random_words(n, seed);
    auto keys = random_ints(n, seed + 1, 0, 50);
    std::vector<record> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = record{words[i], keys[i], {keys[i], static_cast<int>(i)}};
    return v;
}

TEST_P(edge_types, sorts_accept_comparators_taking_non_const_references) {
    crew_test::watchdog dog(std::chrono::seconds(300));
    const std::size_t big = static_cast<std::size_t>(crew_test::scaled(30000));
    pool().run([&] {
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{17}, std::size_t{5000}, big})
            each_loop_partitioner([&](auto part) {
                auto words = random_words(n, 11);
                auto want = words;
                std::sort(want.begin(), want.end());
                crew::parallel_sort(part, words.begin(), words.end(), [](std::string& a, std::string& b) { return a < b; });
                EXPECT_EQ(words, want) << n;
                words = random_words(n, 12);
                want = words;
                std::stable_sort(want.begin(), want.end(), [](auto& a, auto& b) { return a.size() < b.size(); });
                crew::parallel_stable_sort(part, words.begin(), words.end(), [](auto& a, auto& b) { return a.size() < b.size(); });
                EXPECT_EQ(words, want) << n;

                auto recs = random_records(n, 13);
                auto rwant = recs;
                auto by_key = [](record& a, record& b) { return a.key < b.key; };
                // (libstdc++'s std::stable_sort itself does not take such a comparator.)
                std::stable_sort(rwant.begin(), rwant.end(), [](const record& a, const record& b) { return a.key < b.key; });
                auto stable = recs;
                crew::parallel_stable_sort(part, stable.begin(), stable.end(), by_key);
                EXPECT_EQ(stable, rwant) << n;  // equal keys keep their input order
                crew::parallel_sort(part, recs.begin(), recs.end(), [](auto& a, auto& b) { return a.name < b.name; });
                EXPECT_TRUE(std::is_sorted(recs.begin(), recs.end(), [](auto& a, auto& b) { return a.name < b.name; }));
                EXPECT_EQ(recs.size(), rwant.size());
                auto full = [](const record& a, const record& b) { return a.payload < b.payload; };
                std::sort(recs.begin(), recs.end(), full);
                std::sort(rwant.begin(), rwant.end(), full);
                EXPECT_EQ(recs, rwant) << n;  // a permutation of the input
            });
    });
}

TEST_P(edge_types, sorts_of_move_only_elements) {
    crew_test::watchdog dog(std::chrono::seconds(300));
    const std::size_t big = static_cast<std::size_t>(crew_test::scaled(30000));
    pool().run([&] {
        for (std::size_t n : {std::size_t{0}, std::size_t{2}, std::size_t{5000}, big})
            each_loop_partitioner([&](auto part) {
                auto keys = random_ints(n, 14, 0, 100);
                std::vector<std::unique_ptr<int>> v, s;
                for (int k : keys) v.push_back(std::make_unique<int>(k));
                for (int k : keys) s.push_back(std::make_unique<int>(k));
                std::sort(keys.begin(), keys.end());
                crew::parallel_sort(part, v.begin(), v.end(), [](auto& a, auto& b) { return *a < *b; });
                crew::parallel_stable_sort(part, s.begin(), s.end(),
                                           [](const std::unique_ptr<int>& a, const std::unique_ptr<int>& b) { return *a < *b; });
                for (std::size_t i = 0; i < n; ++i) {
                    ASSERT_TRUE(v[i] && s[i]);
                    ASSERT_EQ(*v[i], keys[i]);
                    ASSERT_EQ(*s[i], keys[i]);
                }
            });
    });
}

// ---- parallel_invoke runs where every other algorithm runs ----

// Called from outside every pool: on the default pool, whatever the number of callables.
TEST(edge_types_invoke, outside_every_pool_even_a_single_callable_runs_on_a_worker) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    ASSERT_LT(crew::this_worker_index(), 0);
    std::atomic<int> one{-2}, a{-2}, b{-2};
    crew::parallel_invoke([&] { one = crew::this_worker_index(); });
    EXPECT_GE(one.load(), 0);
    one = -2;
    crew::parallel_invoke(crew::static_partition, [&] { one = crew::this_worker_index(); });
    EXPECT_GE(one.load(), 0);
    crew::parallel_invoke([&] { a = crew::this_worker_index(); }, [&] { b = crew::this_worker_index(); });
    EXPECT_GE(a.load(), 0);
    EXPECT_GE(b.load(), 0);
    EXPECT_THROW(crew::parallel_invoke([] { throw test_error("one"); }), test_error);
    EXPECT_THROW(crew::parallel_invoke([] {}, [] { throw test_error("two"); }), test_error);
    EXPECT_LT(crew::this_worker_index(), 0);
}

// A callable that may be invoked only as an rvalue, once.
struct call_once {
    std::atomic<int>* calls;
    void operator()() && { ++*calls; }
};

TEST_P(edge_types, invoke_runs_on_the_callers_pool_and_invokes_rvalues_once) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        const int me = crew::this_worker_index();
        std::atomic<int> where{-2};
        crew::parallel_invoke([&] { where = crew::this_worker_index(); });
        EXPECT_EQ(where.load(), me);  // one callable: no task to hand out, it runs right here
        std::atomic<int> calls{0};
        crew::parallel_invoke(call_once{&calls});
        crew::parallel_invoke(call_once{&calls}, call_once{&calls}, call_once{&calls});
        EXPECT_EQ(calls.load(), 4);
        EXPECT_THROW(crew::parallel_invoke([] { throw test_error("one"); }), test_error);
    });
}

// ---- move-only accumulators and elements, reference-returning transforms ----

struct move_only_sum {
    std::unique_ptr<long> v;
    explicit move_only_sum(long x = 0) : v(std::make_unique<long>(x)) {}
};
struct move_only_op {
    move_only_sum operator()(move_only_sum a, int x) const {
        *a.v += x;
        return a;
    }
    move_only_sum operator()(int x, move_only_sum b) const {
        *b.v += x;
        return b;
    }
    move_only_sum operator()(int x, int y) const { return move_only_sum(long{x} + y); }
    move_only_sum operator()(move_only_sum a, move_only_sum b) const {
        *a.v += *b.v;
        return a;
    }
};

// Sums through unique_ptrs: the elements are move-only and convert to nothing.
struct deref_sum {
    using ptr = std::unique_ptr<int>;
    long operator()(long a, const ptr& x) const { return a + *x; }
    long operator()(const ptr& x, long b) const { return *x + b; }
    long operator()(const ptr& x, const ptr& y) const { return long{*x} + *y; }
    long operator()(long a, long b) const { return a + b; }
};

TEST_P(edge_types, move_only_accumulators_and_elements_and_reference_transforms) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::size_t n : sizes)
            each_partitioner([&](auto part) {
                auto v = small_values(n, 15);
                const long want = std::accumulate(v.begin(), v.end(), 3L);
                EXPECT_EQ(*crew::parallel_reduce(part, v.begin(), v.end(), move_only_sum(3), move_only_op()).v, want);
                std::vector<std::unique_ptr<int>> ptrs;
                for (int x : v) ptrs.push_back(std::make_unique<int>(x));
                EXPECT_EQ(crew::parallel_reduce(part, ptrs.begin(), ptrs.end(), 3L, deref_sum()), want);
                std::vector<long> got(n), expected(n);
                std::exclusive_scan(v.begin(), v.end(), expected.begin(), 3L);
                crew::parallel_exclusive_scan(part, ptrs.begin(), ptrs.end(), got.begin(), 3L, deref_sum());
                EXPECT_EQ(got, expected);
                // A transform returning a reference into the element.
                auto recs = random_records(n, 16);
                std::string names = "<";
                for (auto& r : recs) names += r.name;
                auto name_of = [](const record& r) -> const std::string& { return r.name; };
                EXPECT_EQ(crew::parallel_transform_reduce(part, recs.begin(), recs.end(), std::string("<"), std::plus<>(),
                                                          name_of),
                          names);
            });
    });
}

CREW_ALL_POOL_SIZES(edge_types);

}  // namespace
