// Odd element and callable types in sorts, parallel_invoke and reductions: comparators taking
// non-const references, move-only elements and accumulators, reference-returning transforms.
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

std::vector<int> small_values(std::size_t n, std::uint32_t seed) { return random_ints(n, seed, -50, 50); }

class edge_sort_types : public crew_test::pool_test {};

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

TEST_P(edge_sort_types, sorts_accept_comparators_taking_non_const_references) {
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

TEST_P(edge_sort_types, sorts_of_move_only_elements) {
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

TEST_P(edge_sort_types, invoke_runs_on_the_callers_pool_and_invokes_rvalues_once) {
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

TEST_P(edge_sort_types, move_only_accumulators_and_elements_and_reference_transforms) {
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

CREW_ALL_POOL_SIZES(edge_sort_types);
}  // namespace
