// Odd index types in the index forms and the static partitioner: every integer type (char types,
// __int128 included) visits every index once, and whole 32- and 64-bit ranges split exactly.
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

class edge_index_types : public crew_test::pool_test {};

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

TEST_P(edge_index_types, index_forms_visit_every_index_of_every_integer_type_once) {
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

TEST_P(edge_index_types, static_partition_over_whole_32_and_64_bit_ranges) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        check_whole_range_leaf_starts<int>(workers());
        check_whole_range_leaf_starts<unsigned>(workers());
        check_whole_range_leaf_starts<long long>(workers());
        check_whole_range_leaf_starts<unsigned long long>(workers());
    });
}

// ---- sorts with comparators taking non-const references, move-only elements ----

CREW_ALL_POOL_SIZES(edge_index_types);

}  // namespace
