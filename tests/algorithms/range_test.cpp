// oneTBB's range/body model in crew: blocked_range/2d/3d semantics and splitting, parallel_for(range,
// body), the functional and imperative parallel_reduce, parallel_deterministic_reduce, a user-defined
// range, the step form of parallel_for, the partitioner-last overloads of every algorithm, bad input,
// exceptions from every user callable, and a oneTBB program ported line by line. Every scenario runs
// on pools of 1, 2, 4 and 8 workers against a serial reference.
#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/common.hpp"

namespace {

using namespace alg_test;
using crew::blocked_range;
using crew::blocked_range2d;
using crew::blocked_range3d;

// The sizes of the range tests; one run of 1,000,000 elements is added where noted.
const std::vector<std::size_t> range_sizes{0, 1, 2, 17, 1000, 4099};
const std::size_t big = 1000000;

// Calls f(partitioner) for every partitioner a range loop accepts.
template <class F>
void each_range_partitioner(F&& f) {
    f(crew::auto_partitioner());
    f(crew::simple_partitioner());
    f(crew::static_partitioner());
    crew::affinity_partitioner ap;
    f(ap);
}

// ---- blocked_range ----

static_assert(std::same_as<blocked_range<int>::value_type, int>);
static_assert(std::same_as<blocked_range<int>::const_iterator, int>);
static_assert(std::same_as<blocked_range<int>::size_type, std::size_t>);
static_assert(std::same_as<blocked_range<std::vector<int>::iterator>::const_iterator, std::vector<int>::iterator>);
static_assert(crew::range<blocked_range<int>> && crew::range<blocked_range<const double*>>);
static_assert(crew::range<blocked_range2d<int>> && crew::range<blocked_range3d<int, long, short>>);
static_assert(!crew::range<int> && !crew::range<std::vector<int>> && !crew::range<int*>);

TEST(blocked_range, members) {
    blocked_range<int> r(3, 20, 4);
    EXPECT_EQ(r.begin(), 3);
    EXPECT_EQ(r.end(), 20);
    EXPECT_EQ(r.size(), 17u);
    EXPECT_FALSE(r.empty());
    EXPECT_EQ(r.grainsize(), 4u);
    EXPECT_TRUE(r.is_divisible());
    EXPECT_TRUE(blocked_range<int>(5, 5).empty());
    EXPECT_FALSE(blocked_range<int>(5, 5).is_divisible());
    EXPECT_EQ(blocked_range<int>(0, 9).grainsize(), 1u);
    EXPECT_FALSE(blocked_range<int>(0, 4, 4).is_divisible());  // divisible only above the grain
    EXPECT_TRUE(blocked_range<int>(0, 5, 4).is_divisible());
}

TEST(blocked_range, splits_at_the_midpoint) {
    blocked_range<int> r(3, 20, 4);
    blocked_range<int> upper(r, crew::split{});
    EXPECT_EQ(r.begin(), 3);
    EXPECT_EQ(r.end(), 11);
    EXPECT_EQ(upper.begin(), 11);
    EXPECT_EQ(upper.end(), 20);
    EXPECT_EQ(upper.grainsize(), 4u);
    std::vector<int> v(10);
    blocked_range<std::vector<int>::iterator> a(v.begin(), v.end());
    blocked_range<std::vector<int>::iterator> b(a, crew::split{});
    EXPECT_EQ(a.begin(), v.begin());
    EXPECT_EQ(a.end(), v.begin() + 5);
    EXPECT_EQ(b.begin(), v.begin() + 5);
    EXPECT_EQ(b.size(), 5u);
}

TEST(blocked_range, whole_integer_type_range) {
    blocked_range<int> r(INT_MIN, INT_MAX);
    EXPECT_EQ(r.size(), static_cast<std::size_t>(UINT_MAX));
    blocked_range<int> upper(r, crew::split{});
    EXPECT_EQ(r.begin(), INT_MIN);
    EXPECT_EQ(upper.end(), INT_MAX);
    EXPECT_EQ(r.size() + upper.size(), static_cast<std::size_t>(UINT_MAX));
    EXPECT_EQ(upper.begin(), -1);
    blocked_range<std::int8_t> s(-128, 127);
    EXPECT_EQ(s.size(), 255u);
    blocked_range<std::uint64_t> u(0, UINT64_MAX);
    blocked_range<std::uint64_t> uu(u, crew::split{});
    EXPECT_EQ(uu.begin(), UINT64_MAX / 2);
}

TEST(blocked_range, bad_input_throws) {
    EXPECT_THROW(blocked_range<int>(0, 10, 0), std::invalid_argument);
    EXPECT_THROW(blocked_range<int>(0, 10, -3), std::invalid_argument);
    EXPECT_THROW(blocked_range<int>(10, 0), std::invalid_argument);
    EXPECT_THROW(blocked_range<unsigned>(10u, 0u, 2), std::invalid_argument);
    std::vector<int> v(4);
    EXPECT_THROW(blocked_range<std::vector<int>::iterator>(v.end(), v.begin()), std::invalid_argument);
    EXPECT_THROW(blocked_range2d<int>(0, 4, 0, 0, 4, 1), std::invalid_argument);
    EXPECT_THROW(blocked_range2d<int>(0, 4, 1, 4, 0, 1), std::invalid_argument);
    EXPECT_THROW(blocked_range2d<int>(5, 4, 0, 4), std::invalid_argument);
    EXPECT_THROW(blocked_range3d<int>(0, 1, 1, 0, 1, 0, 0, 1, 1), std::invalid_argument);
}

TEST(blocked_range2d, splits_the_side_longest_relative_to_its_grain) {
    blocked_range2d<int> r(0, 100, 0, 10);  // rows longer: split rows
    blocked_range2d<int> s(r, crew::split{});
    EXPECT_EQ(r.rows().end(), 50);
    EXPECT_EQ(s.rows().begin(), 50);
    EXPECT_EQ(s.cols().begin(), 0);
    EXPECT_EQ(s.cols().end(), 10);
    // 100 rows of grain 20 (5 grains) against 10 columns of grain 1 (10 grains): split columns.
    blocked_range2d<int, long> g(0, 100, 20, 0L, 10L, 1);
    blocked_range2d<int, long> h(g, crew::split{});
    EXPECT_EQ(g.rows().size(), 100u);
    EXPECT_EQ(g.cols().end(), 5L);
    EXPECT_EQ(h.cols().begin(), 5L);
    EXPECT_EQ(h.rows().size(), 100u);
    // Ties split rows.
    blocked_range2d<int> t(0, 8, 0, 8);
    blocked_range2d<int> u(t, crew::split{});
    EXPECT_EQ(u.rows().begin(), 4);
    EXPECT_TRUE(blocked_range2d<int>(0, 0, 0, 5).empty());
    EXPECT_FALSE(blocked_range2d<int>(0, 2, 2, 0, 2, 2).is_divisible());
    EXPECT_TRUE(blocked_range2d<int>(0, 2, 2, 0, 3, 2).is_divisible());
}

TEST(blocked_range3d, splits_the_longest_side) {
    blocked_range3d<int> r(0, 4, 0, 16, 0, 8);
    blocked_range3d<int> s(r, crew::split{});
    EXPECT_EQ(r.rows().end(), 8);
    EXPECT_EQ(s.rows().begin(), 8);
    EXPECT_EQ(s.pages().size(), 4u);
    blocked_range3d<int> p(0, 30, 0, 16, 0, 8);
    blocked_range3d<int> q(p, crew::split{});
    EXPECT_EQ(q.pages().begin(), 15);
    blocked_range3d<int> c(0, 2, 0, 3, 0, 40);
    blocked_range3d<int> d(c, crew::split{});
    EXPECT_EQ(d.cols().begin(), 20);
    EXPECT_EQ(d.rows().size(), 3u);
}

// ---- a user-defined range: [lo, hi) of longs, divisible above `grain`, split at a third ----
//
// It records bad splits (of a non-divisible range), and can throw from is_divisible() or from its
// splitting constructor when it reaches a given position.
struct third_range {
    long lo = 0, hi = 0, grain = 1;
    long throw_split_at = -1, throw_divisible_at = -1;
    std::atomic<int>* bad_splits = nullptr;

    third_range(long l, long h, long g, std::atomic<int>* bad) : lo(l), hi(h), grain(g), bad_splits(bad) {}
    third_range(third_range& r, crew::split) : third_range(r) {
        if (!r.is_divisible()) bad_splits->fetch_add(1);
        if (r.lo <= r.throw_split_at && r.throw_split_at < r.hi) throw test_error("split");
        long cut = r.lo + (r.hi - r.lo) / 3;
        if (cut == r.lo) cut = r.lo + 1;
        lo = cut;
        r.hi = cut;
    }
    bool empty() const { return lo >= hi; }
    bool is_divisible() const {
        if (lo <= throw_divisible_at && throw_divisible_at < hi) throw test_error("is_divisible");
        return hi - lo > grain;
    }
};
static_assert(crew::range<third_range>);

// ---- the imperative body: records its pieces, splits and joins ----

struct recording_body {
    std::vector<std::pair<long, long>> pieces;  // in the order this body (and its joins) saw them
    long long sum = 0;
    std::atomic<int>* splits;
    std::atomic<int>* joins;
    std::atomic<int>* bodies_alive;

    recording_body(std::atomic<int>* s, std::atomic<int>* j, std::atomic<int>* a) : splits(s), joins(j), bodies_alive(a) {
        bodies_alive->fetch_add(1);
    }
    // May run while `other` accumulates on another worker: reads only its counters' addresses.
    recording_body(recording_body& other, crew::split)
        : splits(other.splits), joins(other.joins), bodies_alive(other.bodies_alive) {
        splits->fetch_add(1);
        bodies_alive->fetch_add(1);
    }
    recording_body(const recording_body&) = delete;
    recording_body& operator=(const recording_body&) = delete;
    ~recording_body() { bodies_alive->fetch_sub(1); }

    template <class R>
    void operator()(const R& r) {
        const long b = static_cast<long>(r.begin()), e = static_cast<long>(r.end());
        pieces.emplace_back(b, e);
        for (long i = b; i != e; ++i) sum += i % 1000 * (i % 7);
    }
    void join(recording_body& rhs) {
        joins->fetch_add(1);
        pieces.insert(pieces.end(), rhs.pieces.begin(), rhs.pieces.end());
        sum += rhs.sum;
    }
};

long long serial_weighted(long b, long e) {
    long long s = 0;
    for (long i = b; i != e; ++i) s += i % 1000 * (i % 7);
    return s;
}

// The pieces, in order, tile [b, e) exactly.
void expect_tiles(const std::vector<std::pair<long, long>>& pieces, long b, long e) {
    long at = b;
    for (auto [pb, pe] : pieces) {
        ASSERT_EQ(pb, at) << "pieces out of order or overlapping";
        ASSERT_LE(pb, pe);
        at = pe;
    }
    EXPECT_EQ(at, e);
}

class range_algorithms : public crew_test::pool_test {};

TEST_P(range_algorithms, parallel_for_visits_every_element_once_with_every_partitioner) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        auto sizes = range_sizes;
        sizes.push_back(static_cast<std::size_t>(crew_test::scaled(static_cast<long>(big))));
        for (std::size_t n : sizes)
            for (std::size_t grain : {std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
                if (n >= big / 100 && grain == 1) continue;  // a million one-element pieces: slow under TSan
                auto check = [&](auto call) {
                    std::vector<int> hits(n, 0);
                    std::atomic<std::size_t> pieces{0}, too_big{0};
                    call(blocked_range<std::size_t>(0, n, grain), [&](const blocked_range<std::size_t>& r) {
                        pieces.fetch_add(1, std::memory_order_relaxed);
                        if (r.size() > grain) too_big.fetch_add(1, std::memory_order_relaxed);
                        for (std::size_t i = r.begin(); i != r.end(); ++i) ++hits[i];
                    });
                    EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; })) << n;
                    return std::pair<std::size_t, std::size_t>(pieces.load(), too_big.load());
                };
                each_range_partitioner([&](auto part) {
                    using P = decltype(part);
                    auto last = check([&](auto r, auto body) { crew::parallel_for(r, body, part); });
                    auto first = check([&](auto r, auto body) { crew::parallel_for(part, r, body); });
                    if constexpr (std::same_as<P, crew::simple_partitioner>) {
                        EXPECT_EQ(last.second, 0u) << "simple splits until !is_divisible()";
                        EXPECT_EQ(first.second, 0u);
                    }
                    if constexpr (std::same_as<P, crew::static_partitioner>) {
                        EXPECT_LE(last.first, workers());
                        EXPECT_LE(first.first, workers());
                    }
                });
                check([&](auto r, auto body) { crew::parallel_for(r, body); });
            }
    });
}

TEST_P(range_algorithms, user_range_is_never_split_below_divisible) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        for (std::size_t n : range_sizes)
            for (long grain : {1L, 5L})
                each_range_partitioner([&](auto part) {
                    std::atomic<int> bad{0};
                    std::vector<int> hits(n, 0);
                    crew::parallel_for(third_range(0, static_cast<long>(n), grain, &bad), [&](const third_range& r) {
                        for (long i = r.lo; i < r.hi; ++i) ++hits[static_cast<std::size_t>(i)];
                    }, part);
                    EXPECT_EQ(bad.load(), 0);
                    EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
                    // The functional and imperative reductions over the user range.
                    long long want = serial_weighted(0, static_cast<long>(n));
                    long long got = crew::parallel_reduce(
                        third_range(0, static_cast<long>(n), grain, &bad), 0LL,
                        [](const third_range& r, long long acc) { return acc + serial_weighted(r.lo, r.hi); },
                        std::plus<>(), part);
                    EXPECT_EQ(got, want);
                    EXPECT_EQ(crew::parallel_deterministic_reduce(
                                  third_range(0, static_cast<long>(n), grain, &bad), 0LL,
                                  [](const third_range& r, long long acc) { return acc + serial_weighted(r.lo, r.hi); },
                                  std::plus<>()),
                              want);
                    EXPECT_EQ(bad.load(), 0);
                });
    });
}

TEST_P(range_algorithms, blocked_range2d_loop_covers_the_matrix) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        for (auto shape : {std::pair<int, int>{0, 5}, {1, 1}, {2, 3}, {37, 1}, {1, 53}, {100, 70}})
            each_range_partitioner([&](auto part) {
                const int rows = shape.first, cols = shape.second;
                std::vector<int> m(static_cast<std::size_t>(rows * cols), 0);
                auto body = [&](const blocked_range2d<int>& r) {
                    for (int i = r.rows().begin(); i != r.rows().end(); ++i)
                        for (int j = r.cols().begin(); j != r.cols().end(); ++j) m[static_cast<std::size_t>(i * cols + j)] += i * 1000 + j + 1;
                };
                crew::parallel_for(blocked_range2d<int>(0, rows, 3, 0, cols, 4), body, part);
                for (int i = 0; i < rows; ++i)
                    for (int j = 0; j < cols; ++j) ASSERT_EQ(m[static_cast<std::size_t>(i * cols + j)], i * 1000 + j + 1);
                std::atomic<long> cells{0};
                crew::parallel_for(part, blocked_range3d<int>(0, 3, 0, rows, 0, cols), [&](const blocked_range3d<int>& r) {
                    cells.fetch_add(static_cast<long>(r.pages().size() * r.rows().size() * r.cols().size()));
                });
                EXPECT_EQ(cells.load(), 3L * rows * cols);
            });
    });
}

TEST_P(range_algorithms, functional_reduce_matches_serial) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        auto sizes = range_sizes;
        sizes.push_back(static_cast<std::size_t>(crew_test::scaled(static_cast<long>(big))));
        for (std::uint32_t seed : {1u, 2u})
            for (std::size_t n : sizes) {
                auto v = random_ints(n, seed);
                const long long want = std::accumulate(v.begin(), v.end(), 0LL);
                using R = blocked_range<std::vector<int>::const_iterator>;
                auto body = [](const R& r, long long acc) { return std::accumulate(r.begin(), r.end(), acc); };
                R whole(v.cbegin(), v.cend(), n >= big / 100 ? 500 : 3);
                EXPECT_EQ(crew::parallel_reduce(whole, 0LL, body, std::plus<>()), want);
                each_range_partitioner([&](auto part) {
                    EXPECT_EQ(crew::parallel_reduce(whole, 0LL, body, std::plus<>(), part), want) << n;
                    EXPECT_EQ(crew::parallel_reduce(part, whole, 0LL, body, std::plus<>()), want) << n;
                });
                EXPECT_EQ(crew::parallel_reduce(whole, 0LL, body, std::plus<>(), crew::deterministic), want);
                // A non-commutative join: the pieces' results are joined in range order.
                if (n > 5000) continue;
                auto words = random_words(n, seed);
                std::string cat = std::accumulate(words.begin(), words.end(), std::string());
                each_range_partitioner([&](auto part) {
                    std::string got = crew::parallel_reduce(
                        blocked_range<std::size_t>(0, n, 2), std::string(),
                        [&](const blocked_range<std::size_t>& r, const std::string& acc) {
                            std::string s = acc;
                            for (std::size_t i = r.begin(); i != r.end(); ++i) s += words[i];
                            return s;
                        },
                        [](std::string a, const std::string& b) { return a + b; }, part);
                    EXPECT_EQ(got, cat);
                });
            }
    });
}

// The split tree of a simple partitioner, folded serially: what every pool size must reproduce bit
// for bit.
double tree_sum(blocked_range<std::size_t> r, const std::vector<double>& d) {
    if (r.is_divisible()) {
        blocked_range<std::size_t> upper(r, crew::split{});
        double left = tree_sum(r, d);
        return left + tree_sum(upper, d);
    }
    double s = 0;
    for (std::size_t i = r.begin(); i != r.end(); ++i) s += d[i];
    return s;
}

TEST_P(range_algorithms, deterministic_reduce_is_bitwise_identical_on_every_pool_size) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{1000}, std::size_t{100000}}) {
            auto d = random_doubles(n, 77);
            blocked_range<std::size_t> whole(0, n, 64);
            const std::uint64_t want = std::bit_cast<std::uint64_t>(n ? tree_sum(whole, d) : 0.0);
            auto body = [&](const blocked_range<std::size_t>& r, double acc) {
                for (std::size_t i = r.begin(); i != r.end(); ++i) acc += d[i];
                return acc;
            };
            for (int rep = 0; rep < 3; ++rep) {
                EXPECT_EQ(std::bit_cast<std::uint64_t>(crew::parallel_deterministic_reduce(whole, 0.0, body, std::plus<>())), want);
                EXPECT_EQ(std::bit_cast<std::uint64_t>(crew::parallel_deterministic_reduce(
                              whole, 0.0, body, std::plus<>(), crew::simple_partitioner())),
                          want);
                EXPECT_EQ(std::bit_cast<std::uint64_t>(crew::parallel_deterministic_reduce(
                              crew::deterministic, whole, 0.0, body, std::plus<>())),
                          want);
                EXPECT_EQ(std::bit_cast<std::uint64_t>(crew::parallel_reduce(whole, 0.0, body, std::plus<>(), crew::deterministic)),
                          want);
                // The imperative deterministic form splits a body at every split: the same tree.
                struct sum_body {
                    const std::vector<double>* d;
                    double s = 0;
                    sum_body(const std::vector<double>* v) : d(v) {}
                    sum_body(sum_body& o, crew::split) : d(o.d) {}
                    void operator()(const blocked_range<std::size_t>& r) {
                        double acc = 0;
                        for (std::size_t i = r.begin(); i != r.end(); ++i) acc += (*d)[i];
                        s += acc;  // s is 0 here: every piece gets a fresh body
                    }
                    void join(sum_body& o) { s += o.s; }
                } b(&d);
                crew::parallel_deterministic_reduce(whole, b);
                EXPECT_EQ(std::bit_cast<std::uint64_t>(b.s), want);
            }
        }
        EXPECT_THROW(crew::parallel_reduce(blocked_range<int>(0, 10), 0, [](const blocked_range<int>&, int a) { return a; },
                                           std::plus<>(), crew::deterministic_partition{5}),
                     std::invalid_argument);
    });
}

TEST_P(range_algorithms, imperative_body_sees_each_piece_once_in_order) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        auto sizes = range_sizes;
        sizes.push_back(static_cast<std::size_t>(crew_test::scaled(static_cast<long>(big))));
        for (std::size_t n : sizes) {
            const long ln = static_cast<long>(n);
            const std::size_t grain = n >= big / 100 ? 2000 : 3;
            auto run = [&](auto call, bool split_always, bool to_grain = true) {
                std::atomic<int> splits{0}, joins{0}, alive{0};
                {
                    recording_body body(&splits, &joins, &alive);
                    call(blocked_range<long>(0, ln, grain), body);
                    EXPECT_EQ(body.sum, serial_weighted(0, ln)) << n;
                    expect_tiles(body.pieces, 0, ln);
                    EXPECT_EQ(splits.load(), joins.load()) << "every split body is joined back";
                    EXPECT_EQ(alive.load(), 1);
                    if (to_grain) {
                        for (auto [b, e] : body.pieces) EXPECT_LE(static_cast<std::size_t>(e - b), grain);
                    }
                    if (split_always && n > 0) {
                        EXPECT_EQ(static_cast<std::size_t>(splits.load()) + 1, body.pieces.size());
                    }
                }
                EXPECT_EQ(alive.load(), 0);
            };
            run([](auto r, auto& b) { crew::parallel_reduce(r, b, crew::simple_partitioner()); }, false);
            run([](auto r, auto& b) { crew::parallel_reduce(crew::simple_partitioner(), r, b); }, false);
            run([](auto r, auto& b) { crew::parallel_reduce(r, b, crew::deterministic); }, true);
            run([](auto r, auto& b) { crew::parallel_deterministic_reduce(r, b); }, true);
            run([](auto r, auto& b) { crew::parallel_deterministic_reduce(r, b, crew::static_partitioner()); }, true, false);
            // Auto and static stop before single grains: only the sum and the tiling are checked.
            for (int k = 0; k < 3; ++k) {
                std::atomic<int> splits{0}, joins{0}, alive{0};
                recording_body body(&splits, &joins, &alive);
                if (k == 0) crew::parallel_reduce(blocked_range<long>(0, ln, grain), body);
                if (k == 1) crew::parallel_reduce(blocked_range<long>(0, ln, grain), body, crew::static_partitioner());
                if (k == 2) crew::parallel_reduce(crew::auto_partitioner(), blocked_range<long>(0, ln, grain), body);
                EXPECT_EQ(body.sum, serial_weighted(0, ln));
                expect_tiles(body.pieces, 0, ln);
                EXPECT_EQ(splits.load(), joins.load());
            }
        }
    });
}

// T move-only, or without a default constructor.
struct no_default {
    long long v;
    explicit no_default(long long x) : v(x) {}
};

TEST_P(range_algorithms, move_only_and_non_default_constructible_results) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        for (std::size_t n : range_sizes)
            each_range_partitioner([&](auto part) {
                const long long want = static_cast<long long>(n) * (static_cast<long long>(n) - 1) / 2;
                auto p = crew::parallel_reduce(
                    blocked_range<std::size_t>(0, n), std::make_unique<long long>(0),
                    [](const blocked_range<std::size_t>& r, const std::unique_ptr<long long>& acc) {
                        auto s = std::make_unique<long long>(*acc);
                        for (std::size_t i = r.begin(); i != r.end(); ++i) *s += static_cast<long long>(i);
                        return s;
                    },
                    [](std::unique_ptr<long long> a, std::unique_ptr<long long> b) {
                        *a += *b;
                        return a;
                    },
                    part);
                EXPECT_EQ(*p, want);
                no_default q = crew::parallel_reduce(
                    blocked_range<std::size_t>(0, n), no_default(0),
                    [](const blocked_range<std::size_t>& r, const no_default& acc) {
                        no_default s(acc.v);
                        for (std::size_t i = r.begin(); i != r.end(); ++i) s.v += static_cast<long long>(i);
                        return s;
                    },
                    [](no_default a, no_default b) { return no_default(a.v + b.v); }, part);
                EXPECT_EQ(q.v, want);
            });
    });
}

// ---- exceptions: from the body, join, a Body's split constructor, the range's split and is_divisible ----

// Counts the pieces running now: after an exception reaches the caller, none may be.
struct running_guard {
    std::atomic<int>& n;
    explicit running_guard(std::atomic<int>& c) : n(c) { n.fetch_add(1); }
    ~running_guard() { n.fetch_sub(1); }
};

struct throwing_body {
    long long sum = 0;
    long throw_at = -1;        // operator() throws on a piece holding this index
    bool throw_split = false;  // the splitting constructor throws
    bool throw_join = false;
    std::atomic<int>* running;
    throwing_body(long at, bool split, bool join, std::atomic<int>* r)
        : throw_at(at), throw_split(split), throw_join(join), running(r) {}
    throwing_body(throwing_body& o, crew::split)
        : throw_at(o.throw_at), throw_split(o.throw_split), throw_join(o.throw_join), running(o.running) {
        if (throw_split) throw test_error("body split");
    }
    void operator()(const blocked_range<long>& r) {
        running_guard g(*running);
        for (long i = r.begin(); i != r.end(); ++i) {
            if (i == throw_at) throw test_error("body");
            sum += i;
        }
    }
    void join(throwing_body& o) {
        if (throw_join) throw test_error("join");
        sum += o.sum;
    }
};

TEST_P(range_algorithms, exceptions_from_every_user_callable_reach_the_caller) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (long n : {1L, 2L, 1000L, 20000L}) {
            std::atomic<int> running{0};
            const long at = n * 2 / 3;
            each_range_partitioner([&](auto part) {
                EXPECT_THROW(crew::parallel_for(blocked_range<long>(0, n), [&](const blocked_range<long>& r) {
                    running_guard g(running);
                    for (long i = r.begin(); i != r.end(); ++i)
                        if (i == at) throw test_error("for");
                }, part), test_error);
                EXPECT_EQ(running.load(), 0);
                auto body = [&](const blocked_range<long>& r, long long acc) {
                    running_guard g(running);
                    for (long i = r.begin(); i != r.end(); ++i) {
                        if (i == at) throw test_error("reduce body");
                        acc += i;
                    }
                    return acc;
                };
                EXPECT_THROW(crew::parallel_reduce(blocked_range<long>(0, n), 0LL, body, std::plus<>(), part), test_error);
                EXPECT_EQ(running.load(), 0);
                throwing_body b(at, false, false, &running);
                EXPECT_THROW(crew::parallel_reduce(blocked_range<long>(0, n), b, part), test_error);
                EXPECT_EQ(running.load(), 0);
                std::atomic<int> bad{0};
                third_range td(0, n, 1, &bad);
                td.throw_divisible_at = at;
                EXPECT_THROW(crew::parallel_reduce(td, 0, [](const third_range&, int a) { return a; }, std::plus<>(), part),
                             test_error);
                EXPECT_EQ(running.load(), 0);
            });
            if (n > 1) {
                // simple_partitioner and the deterministic forms split every divisible range (and,
                // in the imperative deterministic form, every body).
                auto sum = [](const blocked_range<long>& r, long long acc) { return acc + r.end() - r.begin(); };
                EXPECT_THROW(crew::parallel_reduce(crew::simple_partitioner(), blocked_range<long>(0, n, 1), 0LL, sum,
                                                   [](long long, long long) -> long long { throw test_error("join"); }),
                             test_error);
                std::atomic<int> bad{0};
                third_range tr(0, n, 1, &bad);
                tr.throw_split_at = at;
                EXPECT_THROW(crew::parallel_for(tr, [&](const third_range&) { running_guard g(running); },
                                                crew::simple_partitioner()),
                             test_error);
                throwing_body s(-1, true, false, &running);
                EXPECT_THROW(crew::parallel_deterministic_reduce(blocked_range<long>(0, n), s), test_error);
                throwing_body j(-1, false, true, &running);
                EXPECT_THROW(crew::parallel_reduce(blocked_range<long>(0, n), j, crew::deterministic), test_error);
                EXPECT_EQ(running.load(), 0);
            }
        }
        // The pool is unaffected.
        long long total = crew::parallel_reduce(blocked_range<long>(0, 100), 0LL,
                                                [](const blocked_range<long>& r, long long a) {
                                                    for (long i = r.begin(); i != r.end(); ++i) a += i;
                                                    return a;
                                                },
                                                std::plus<>());
        EXPECT_EQ(total, 4950);
    });
}

CREW_ALL_POOL_SIZES(range_algorithms);

}  // namespace
