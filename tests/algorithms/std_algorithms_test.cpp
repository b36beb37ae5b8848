// The std-named algorithms (numeric.hpp, search.hpp, copy.hpp) against their std:: counterparts on
// random inputs, on pools of 1, 2, 4 and 8 workers with every partitioner, first and last: equal
// elements (first/last semantics), non-commutative operations, odd element types, exceptions
// from every user callable, and the early stop of the searches.
#include <algorithm>
#include <atomic>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/common.hpp"

namespace {

using namespace alg_test;

class algorithms_std : public crew_test::pool_test {};

// Small values, so that equal elements abound.
std::vector<int> small_ints(std::size_t n, std::uint32_t seed) { return random_ints(n, seed, 0, 9); }

TEST_P(algorithms_std, numeric_forms_match_std) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::uint32_t seed : seeds())
            for (std::size_t n : sizes)
                each_partitioner([&](auto part) {
                    auto v = random_ints(n, seed, -1000, 1000);
                    auto w = random_ints(n, seed + 7, -1000, 1000);
                    EXPECT_EQ(crew::parallel_reduce(part, v.begin(), v.end()), std::reduce(v.begin(), v.end()));
                    EXPECT_EQ(crew::parallel_reduce(v.begin(), v.end(), part), std::reduce(v.begin(), v.end()));
                    long want = std::transform_reduce(v.begin(), v.end(), w.begin(), 3L);
                    EXPECT_EQ(crew::parallel_transform_reduce(part, v.begin(), v.end(), w.begin(), 3L), want);
                    EXPECT_EQ(crew::parallel_transform_reduce(v.begin(), v.end(), w.begin(), 3L, part), want);
                    // Non-commutative op1: a product of matrices.
                    mat2 m;
                    for (std::size_t i = 0; i < n; ++i) m = m * mat_of(v[i] - w[i]);
                    auto op2 = [](int a, int b) { return mat_of(a - b); };
                    EXPECT_EQ(crew::parallel_transform_reduce(part, v.begin(), v.end(), w.begin(), mat2{},
                                                              std::multiplies<>(), op2),
                              m);
                    EXPECT_EQ(crew::parallel_transform_reduce(v.begin(), v.end(), w.begin(), mat2{}, std::multiplies<>(),
                                                              op2, part),
                              m);
                    // Scans with a non-commutative op (concatenation) and a transform. Every output
                    // is a prefix of the concatenation, so the sizes stay small (quadratic).
                    if (n > 1000) return;
                    auto words = random_words(n, seed);
                    auto up = [](const std::string& s) { return s + "."; };
                    std::vector<std::string> got(n), exp(n);
                    std::transform_inclusive_scan(words.begin(), words.end(), exp.begin(), std::plus<>(), up);
                    crew::parallel_transform_inclusive_scan(part, words.begin(), words.end(), got.begin(), std::plus<>(), up);
                    EXPECT_EQ(got, exp);
                    std::transform_inclusive_scan(words.begin(), words.end(), exp.begin(), std::plus<>(), up, std::string("<"));
                    crew::parallel_transform_inclusive_scan(words.begin(), words.end(), got.begin(), std::plus<>(), up,
                                                            std::string("<"), part);
                    EXPECT_EQ(got, exp);
                    std::transform_exclusive_scan(words.begin(), words.end(), exp.begin(), std::string("<"), std::plus<>(), up);
                    crew::parallel_transform_exclusive_scan(part, words.begin(), words.end(), got.begin(), std::string("<"),
                                                            std::plus<>(), up);
                    EXPECT_EQ(got, exp);
                });
    });
}

TEST_P(algorithms_std, counts_and_searches_match_std) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::uint32_t seed : seeds())
            for (std::size_t n : sizes)
                each_loop_partitioner([&](auto part) {
                    auto v = small_ints(n, seed);
                    auto is7 = [](int x) { return x == 7; };
                    auto big = [](int x) { return x > 8; };
                    EXPECT_EQ(crew::parallel_count(part, v.begin(), v.end(), 3), std::count(v.begin(), v.end(), 3));
                    EXPECT_EQ(crew::parallel_count_if(v.begin(), v.end(), big, part), std::count_if(v.begin(), v.end(), big));
                    // The FIRST match, among many equal elements.
                    EXPECT_EQ(crew::parallel_find(part, v.begin(), v.end(), 7), std::find(v.begin(), v.end(), 7));
                    EXPECT_EQ(crew::parallel_find(v.begin(), v.end(), 42, part), v.end());
                    EXPECT_EQ(crew::parallel_find_if(part, v.begin(), v.end(), is7), std::find_if(v.begin(), v.end(), is7));
                    EXPECT_EQ(crew::parallel_find_if_not(part, v.begin(), v.end(), big),
                              std::find_if_not(v.begin(), v.end(), big));
                    EXPECT_EQ(crew::parallel_any_of(part, v.begin(), v.end(), is7), std::any_of(v.begin(), v.end(), is7));
                    EXPECT_EQ(crew::parallel_all_of(v.begin(), v.end(), [](int x) { return x < 9; }, part),
                              std::all_of(v.begin(), v.end(), [](int x) { return x < 9; }));
                    EXPECT_EQ(crew::parallel_none_of(part, v.begin(), v.end(), big), std::none_of(v.begin(), v.end(), big));
                    // A match only at the last element.
                    std::vector<int> zeros(n, 0);
                    if (n > 0) zeros.back() = 1;
                    EXPECT_EQ(crew::parallel_find(part, zeros.begin(), zeros.end(), 1), std::find(zeros.begin(), zeros.end(), 1));
                    // equal, 3- and 4-iterator forms, with and without pred.
                    auto w = v;
                    EXPECT_TRUE(crew::parallel_equal(part, v.begin(), v.end(), w.begin()));
                    EXPECT_TRUE(crew::parallel_equal(v.begin(), v.end(), w.begin(), w.end(), part));
                    if (n > 0) {
                        w[n / 2] += 1;
                        EXPECT_FALSE(crew::parallel_equal(part, v.begin(), v.end(), w.begin(), std::equal_to<>()));
                        EXPECT_TRUE(crew::parallel_equal(v.begin(), v.end(), w.begin(), w.end(),
                                                         [](int a, int b) { return a / 100 == b / 100; }, part));
                        EXPECT_FALSE(crew::parallel_equal(v.begin(), v.end(), w.begin(), w.end() - 1));
                    }
                });
    });
}

TEST_P(algorithms_std, min_max_take_std_elements_among_equal_ones) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::uint32_t seed : seeds())
            for (std::size_t n : sizes)
                each_partitioner([&](auto part) {
                    auto v = small_ints(n, seed);
                    EXPECT_EQ(crew::parallel_min_element(part, v.begin(), v.end()), std::min_element(v.begin(), v.end()));
                    EXPECT_EQ(crew::parallel_max_element(part, v.begin(), v.end()), std::max_element(v.begin(), v.end()));
                    EXPECT_EQ(crew::parallel_minmax_element(part, v.begin(), v.end()), std::minmax_element(v.begin(), v.end()));
                    auto gt = std::greater<>();
                    EXPECT_EQ(crew::parallel_min_element(v.begin(), v.end(), gt, part), std::min_element(v.begin(), v.end(), gt));
                    EXPECT_EQ(crew::parallel_max_element(v.begin(), v.end(), gt), std::max_element(v.begin(), v.end(), gt));
                    EXPECT_EQ(crew::parallel_minmax_element(v.begin(), v.end(), gt, part),
                              std::minmax_element(v.begin(), v.end(), gt));
                    std::vector<int> same(n, 5);  // all equal: min first, max first, minmax's max last
                    EXPECT_EQ(crew::parallel_min_element(part, same.begin(), same.end()), same.begin());
                    EXPECT_EQ(crew::parallel_max_element(part, same.begin(), same.end()), same.begin());
                    EXPECT_EQ(crew::parallel_minmax_element(part, same.begin(), same.end()),
                              std::minmax_element(same.begin(), same.end()));
                });
    });
}

struct keyed {  // ordered by key only; tag tells equal elements apart
    int key, tag;
    friend bool operator==(const keyed&, const keyed&) = default;
};
auto by_key = [](const keyed& a, const keyed& b) { return a.key < b.key; };

TEST_P(algorithms_std, copies_merges_and_partitions_match_std) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::uint32_t seed : seeds())
            for (std::size_t n : sizes)
                each_loop_partitioner([&](auto part) {
                    auto v = random_ints(n, seed);
                    auto odd = [](int x) { return x % 2 != 0; };
                    std::vector<int> got(n, -1), exp(n, -1);
                    auto ge = std::copy_if(v.begin(), v.end(), exp.begin(), odd);
                    auto gg = crew::parallel_copy_if(part, v.begin(), v.end(), got.begin(), odd);
                    EXPECT_EQ(gg - got.begin(), ge - exp.begin());
                    EXPECT_EQ(got, exp);
                    crew::parallel_fill(got.begin(), got.end(), 4, part);
                    EXPECT_EQ(got, std::vector<int>(n, 4));
                    std::atomic<int> next{0};
                    crew::parallel_generate(part, got.begin(), got.end(), [&] { return next.fetch_add(1); });
                    std::sort(got.begin(), got.end());
                    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], static_cast<int>(i));
                    // Stable merge: keys with many ties, tags tell the two inputs apart.
                    std::vector<keyed> a(n), b(n / 2 + 1);
                    auto ka = small_ints(a.size(), seed), kb = small_ints(b.size(), seed + 1);
                    for (std::size_t i = 0; i < a.size(); ++i) a[i] = {ka[i], static_cast<int>(i)};
                    for (std::size_t i = 0; i < b.size(); ++i) b[i] = {kb[i], -1 - static_cast<int>(i)};
                    std::stable_sort(a.begin(), a.end(), by_key);
                    std::stable_sort(b.begin(), b.end(), by_key);
                    std::vector<keyed> mg(a.size() + b.size()), me(mg.size());
                    std::merge(a.begin(), a.end(), b.begin(), b.end(), me.begin(), by_key);
                    EXPECT_EQ(crew::parallel_merge(part, a.begin(), a.end(), b.begin(), b.end(), mg.begin(), by_key), mg.end());
                    EXPECT_EQ(mg, me);
                    crew::parallel_merge(b.begin(), b.end(), a.begin(), a.end(), mg.begin(), by_key, part);
                    std::merge(b.begin(), b.end(), a.begin(), a.end(), me.begin(), by_key);
                    EXPECT_EQ(mg, me);
                    // Stable partition: identical to std::stable_partition.
                    auto sp = v, se = v;
                    auto pe = std::stable_partition(se.begin(), se.end(), odd);
                    auto pp = crew::parallel_stable_partition(part, sp.begin(), sp.end(), odd);
                    EXPECT_EQ(pp - sp.begin(), pe - se.begin());
                    EXPECT_EQ(sp, se);
                    auto up = v;
                    auto pu = crew::parallel_partition(up.begin(), up.end(), odd, part);
                    EXPECT_EQ(pu - up.begin(), pe - se.begin());
                    EXPECT_TRUE(std::is_partitioned(up.begin(), up.end(), odd));
                    EXPECT_TRUE(std::is_permutation(up.begin(), up.end(), v.begin()));
                });
    });
}

// Strings (not trivially copyable), move-only elements, and elements without a default constructor.
struct no_default {
    explicit no_default(int x) : v(x) {}
    int v;
    friend bool operator==(const no_default&, const no_default&) = default;
};

TEST_P(algorithms_std, odd_element_types) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    pool().run([&] {
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{17}, std::size_t{20000}}) {
            auto words = random_words(n, 5);
            auto has_a = [](const std::string& s) { return s[0] < 'h'; };
            auto sp = words, se = words;
            EXPECT_EQ(crew::parallel_stable_partition(sp.begin(), sp.end(), has_a) - sp.begin(),
                      std::stable_partition(se.begin(), se.end(), has_a) - se.begin());
            EXPECT_EQ(sp, se);
            std::vector<std::string> out(n), exp(n);
            std::copy_if(words.begin(), words.end(), exp.begin(), has_a);
            crew::parallel_copy_if(words.begin(), words.end(), out.begin(), has_a);
            EXPECT_EQ(out, exp);
            EXPECT_EQ(crew::parallel_min_element(words.begin(), words.end()), std::min_element(words.begin(), words.end()));
            EXPECT_EQ(crew::parallel_find(words.begin(), words.end(), std::string("zz")),
                      std::find(words.begin(), words.end(), std::string("zz")));

            std::vector<std::unique_ptr<int>> mo, me;
            auto ints = small_ints(n, 9);
            for (int x : ints) {
                mo.push_back(std::make_unique<int>(x));
                me.push_back(std::make_unique<int>(x));
            }
            auto low = [](const std::unique_ptr<int>& p) { return *p < 4; };
            auto less = [](const std::unique_ptr<int>& a, const std::unique_ptr<int>& b) { return *a < *b; };
            EXPECT_EQ(crew::parallel_count_if(mo.begin(), mo.end(), low), std::count_if(me.begin(), me.end(), low));
            EXPECT_EQ(crew::parallel_find_if(mo.begin(), mo.end(), low) - mo.begin(),
                      std::find_if(me.begin(), me.end(), low) - me.begin());
            EXPECT_EQ(crew::parallel_max_element(mo.begin(), mo.end(), less) - mo.begin(),
                      std::max_element(me.begin(), me.end(), less) - me.begin());
            crew::parallel_stable_partition(mo.begin(), mo.end(), low);
            std::stable_partition(me.begin(), me.end(), low);
            for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(*mo[i], *me[i]);

            std::vector<no_default> nd, ndo;
            for (int x : ints) nd.emplace_back(x);
            auto nde = nd;
            auto odd = [](const no_default& x) { return x.v % 2 != 0; };
            crew::parallel_stable_partition(nd.begin(), nd.end(), odd);
            std::stable_partition(nde.begin(), nde.end(), odd);
            EXPECT_EQ(nd, nde);
            EXPECT_EQ(crew::parallel_count_if(nd.begin(), nd.end(), odd), std::count_if(nde.begin(), nde.end(), odd));
        }
    });
}

// Every user callable's exception reaches the caller.
TEST_P(algorithms_std, exceptions_from_user_callables_reach_the_caller) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    const std::size_t n = 20000;
    std::vector<int> v(n);
    std::iota(v.begin(), v.end(), 0);
    for (std::size_t k : {std::size_t{0}, n / 2, n - 1}) {
        const int bad = static_cast<int>(k);
        auto pred = [bad](int x) {
            if (x == bad) throw test_error("pred");
            return x < 0;
        };
        auto comp = [bad](int a, int b) {
            if (a == bad || b == bad) throw test_error("comp");
            return a < b;
        };
        // op throws when it meets the marked element: mark(x) is -1 at k, 0 elsewhere.
        auto op = [](long a, long b) {
            if (a == -1 || b == -1) throw test_error("op");
            return a + b;
        };
        auto mark = [bad](int x) -> long { return x == bad ? -1 : 0; };
        auto tr = [bad](int x) -> long {
            if (x == bad) throw test_error("tr");
            return x;
        };
        crew::pool& p = pool();
        std::vector<int> out(2 * n);
        std::vector<long> lout(n);
        EXPECT_THROW(p.run([&] { crew::parallel_count_if(v.begin(), v.end(), pred); }), test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_find_if(v.begin(), v.end(), pred); }), test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_find_if_not(v.begin(), v.end(), [&](int x) { return !pred(x); }); }), test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_any_of(v.begin(), v.end(), pred); }), test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_all_of(v.begin(), v.end(), [&](int x) { return !pred(x); }); }), test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_none_of(v.begin(), v.end(), pred); }), test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_equal(v.begin(), v.end(), v.begin(), [&](int a, int) { return !pred(a); }); }),
                     test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_min_element(v.begin(), v.end(), comp); }), test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_max_element(v.begin(), v.end(), comp); }), test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_minmax_element(v.begin(), v.end(), comp); }), test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_copy_if(v.begin(), v.end(), out.begin(), pred); }), test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_merge(v.begin(), v.end(), v.begin(), v.end(), out.begin(), comp); }),
                     test_error);
        auto copy = v;
        EXPECT_THROW(p.run([&] { crew::parallel_stable_partition(copy.begin(), copy.end(), pred); }), test_error);
        EXPECT_EQ(copy, v);  // the predicate runs before anything moves
        EXPECT_THROW(p.run([&] { crew::parallel_partition(copy.begin(), copy.end(), pred); }), test_error);
        std::atomic<std::size_t> calls{0};
        EXPECT_THROW(p.run([&] {
                         crew::parallel_generate(out.begin(), out.begin() + static_cast<long>(n), [&] {
                             if (calls.fetch_add(1) == k) throw test_error("gen");
                             return 1;
                         });
                     }),
                     test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_transform_reduce(v.begin(), v.end(), v.begin(), 0L, op, [&](int a, int) { return mark(a); }); }),
                     test_error);
        EXPECT_THROW(p.run([&] {
                         crew::parallel_transform_reduce(v.begin(), v.end(), v.begin(), 0L, std::plus<>(), [&](int a, int) {
                             return tr(a);
                         });
                     }),
                     test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_transform_inclusive_scan(v.begin(), v.end(), lout.begin(), std::plus<>(), tr); }),
                     test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_transform_exclusive_scan(v.begin(), v.end(), lout.begin(), 0L, op, mark); }),
                     test_error);
        EXPECT_THROW(p.run([&] { crew::parallel_transform_exclusive_scan(v.begin(), v.end(), lout.begin(), 0L, std::plus<>(), tr); }),
                     test_error);
    }
}

// A match at index 0 of 10,000,000 elements: once it is found, the predicate runs on far fewer
// than n further elements (other workers may legitimately scan while the finder is preempted, so
// only the calls after the match are bounded; on one worker, the left piece runs first, so the
// whole search makes few calls).
struct call_counter {
    std::atomic<bool> found{false};
    std::atomic<std::size_t> calls{0}, late{0};
    // relaxed: counters read after the algorithm returned (join orders them); `found` is a hint.
    bool operator()(std::uint8_t x) {
        calls.fetch_add(1, std::memory_order_relaxed);
        if (x == 1) {
            found.store(true, std::memory_order_relaxed);
            return true;
        }
        if (found.load(std::memory_order_relaxed)) late.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
};

TEST_P(algorithms_std, searches_stop_early) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    const std::size_t n = 10000000;
    std::vector<std::uint8_t> v(n, 0), w(n, 1);
    v[0] = 1;
    pool().run([&] {
        for (int form = 0; form < 4; ++form) {
            call_counter c;
            auto pred = [&](std::uint8_t x) { return c(x); };
            if (form == 0) {
                EXPECT_EQ(crew::parallel_find_if(v.begin(), v.end(), pred), v.begin());
            } else if (form == 1) {
                EXPECT_TRUE(crew::parallel_any_of(v.begin(), v.end(), pred, crew::static_partition));
            } else if (form == 2) {
                EXPECT_EQ(crew::parallel_find_if(crew::simple_partition{1000}, v.begin(), v.end(), pred), v.begin());
            } else {  // a mismatch at 0 (pred(a, b) is a != 1 on v's side)
                EXPECT_FALSE(crew::parallel_equal(v.begin(), v.end(), w.begin(),
                                                  [&](std::uint8_t a, std::uint8_t) { return !c(a); }));
            }
            EXPECT_TRUE(c.found.load());
            EXPECT_LT(c.late.load(), n / 10) << "form " << form;
            if (workers() == 1) {
                EXPECT_LT(c.calls.load(), n / 10) << "form " << form;
            }
        }
    });
}

// 1,000,000 elements (fewer under the sanitizers), once per pool size.
TEST_P(algorithms_std, large_inputs_match_std) {
    crew_test::watchdog dog(std::chrono::seconds(240));
    const auto n = static_cast<std::size_t>(crew_test::scaled(1000000));
    auto v = random_ints(n, 11);
    pool().run([&] {
        auto big = [](int x) { return x > 999000; };
        EXPECT_EQ(crew::parallel_count_if(v.begin(), v.end(), big), std::count_if(v.begin(), v.end(), big));
        EXPECT_EQ(crew::parallel_find_if(v.begin(), v.end(), big), std::find_if(v.begin(), v.end(), big));
        EXPECT_EQ(crew::parallel_minmax_element(v.begin(), v.end()), std::minmax_element(v.begin(), v.end()));
        std::vector<int> out(n), exp(n);
        auto odd = [](int x) { return x % 2 != 0; };
        EXPECT_EQ(crew::parallel_copy_if(v.begin(), v.end(), out.begin(), odd) - out.begin(),
                  std::copy_if(v.begin(), v.end(), exp.begin(), odd) - exp.begin());
        EXPECT_EQ(out, exp);
        auto sp = v, se = v;
        crew::parallel_stable_partition(sp.begin(), sp.end(), odd);
        std::stable_partition(se.begin(), se.end(), odd);
        EXPECT_EQ(sp, se);
        auto a = v, b = random_ints(n, 12);
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        std::vector<int> m(2 * n), me(2 * n);
        crew::parallel_merge(a.begin(), a.end(), b.begin(), b.end(), m.begin());
        std::merge(a.begin(), a.end(), b.begin(), b.end(), me.begin());
        EXPECT_EQ(m, me);
        auto mul = [](int x, int y) { return static_cast<long long>(x) * y; };
        EXPECT_EQ(crew::parallel_transform_reduce(v.begin(), v.end(), b.begin(), 0LL, std::plus<>(), mul),
                  std::transform_reduce(v.begin(), v.end(), b.begin(), 0LL, std::plus<>(), mul));
    });
}

// The leaves run std algorithms over whole blocks (search.hpp, copy.hpp): sizes around the block
// sizes (2^k - 1, 2^k, 2^k + 1; auto_partition's two-pass blocks are 4,096 elements at least),
// with the match, the extremes and the kept elements placed at block boundaries.
TEST_P(algorithms_std, block_boundaries_match_std) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    std::vector<std::size_t> ns{0, 1, 2};
    for (std::size_t k : {6, 12, 13}) {
        const std::size_t p2 = std::size_t{1} << k;
        ns.insert(ns.end(), {p2 - 1, p2, p2 + 1});
    }
    pool().run([&] {
        for (std::size_t n : ns)
            for (std::size_t at : {std::size_t{0}, n / 2, n - n / 4, n > 0 ? n - 1 : 0, std::size_t{63}, std::size_t{64},
                                   std::size_t{4095}, std::size_t{4096}}) {
                if (n == 0 || at >= n) continue;
                std::vector<int> v(n, 5);
                v[at] = 1;  // the only match, and the smallest
                if (at + 1 < n) v[at + 1] = 1;  // an equal one right after it (first of equals)
                v[n - 1 - at / 2] = 9;          // the largest, repeated at the end
                v[n - 1] = 9;
                auto one = [](int x) { return x == 1; };
                auto odd = [](int x) { return x % 2 != 0; };
                auto check = [&](auto part) {
                    EXPECT_EQ(crew::parallel_find_if(part, v.begin(), v.end(), one), std::find_if(v.begin(), v.end(), one));
                    EXPECT_EQ(crew::parallel_find(part, v.begin(), v.end(), 9), std::find(v.begin(), v.end(), 9));
                    EXPECT_EQ(crew::parallel_count_if(part, v.begin(), v.end(), one), std::count_if(v.begin(), v.end(), one));
                    EXPECT_EQ(crew::parallel_min_element(part, v.begin(), v.end()), std::min_element(v.begin(), v.end()));
                    EXPECT_EQ(crew::parallel_max_element(part, v.begin(), v.end()), std::max_element(v.begin(), v.end()));
                    EXPECT_EQ(crew::parallel_minmax_element(part, v.begin(), v.end()),
                              std::minmax_element(v.begin(), v.end()));
                    auto w = v;
                    w[at] = 7;
                    EXPECT_EQ(crew::parallel_equal(part, v.begin(), v.end(), w.begin()), n == 0);
                    std::vector<int> out(n, -1), exp(n, -1);
                    auto got_end = crew::parallel_copy_if(part, v.begin(), v.end(), out.begin(), odd);
                    auto exp_end = std::copy_if(v.begin(), v.end(), exp.begin(), odd);
                    EXPECT_EQ(got_end - out.begin(), exp_end - exp.begin());
                    EXPECT_EQ(out, exp) << "n " << n << " at " << at;
                };
                check(crew::auto_partition);
                check(crew::static_partition);
                check(crew::simple_partition{64});
            }
    });
}

// auto_partition's searches claim blocks in index order (std_support.hpp, search_claims): the blocks
// tile [0, n) exactly, and a match planted at or around each block boundary, with later matches
// after it, is found first (find_if, find_if_not, find, any_of, equal), on every pool size.
TEST_P(algorithms_std, claimed_search_blocks_find_the_first_match) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{5000}, std::size_t{300000}})
        for (std::size_t w : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{8}}) {
            std::size_t b = 0, claims = 0;
            while (b < n) {
                const std::size_t len = crew::detail::search_claim_length(b, n, w);
                ASSERT_GE(len, 1u);
                ASSERT_LE(len, n - b);
                b += len;
                ++claims;
            }
            EXPECT_EQ(b, n);
            EXPECT_LT(claims, 400u) << "n " << n << ", workers " << w;
        }
    const std::size_t n = 300000;
    std::vector<std::size_t> at{0, 1, n - 1};
    for (std::size_t b = 0; b < n; b += crew::detail::search_claim_length(b, n, workers()))
        for (std::size_t d : {std::size_t{0}, std::size_t{1}})
            if (b >= d) at.push_back(b - d);
    const std::vector<int> zeros(n, 0);
    pool().run([&] {
        for (std::size_t k : at) {
            std::vector<int> v(n, 0);
            v[k] = 1;
            for (std::size_t later : {k + 1, k + 4096, k + 70000, n - 1})
                if (later < n) v[later] = 1;
            auto one = [](int x) { return x == 1; };
            auto zero = [](int x) { return x == 0; };
            EXPECT_EQ(crew::parallel_find_if(v.begin(), v.end(), one) - v.begin(), static_cast<long>(k));
            EXPECT_EQ(crew::parallel_find_if_not(v.begin(), v.end(), zero) - v.begin(), static_cast<long>(k));
            EXPECT_EQ(crew::parallel_find(v.begin(), v.end(), 1) - v.begin(), static_cast<long>(k));
            EXPECT_TRUE(crew::parallel_any_of(v.begin(), v.end(), one));
            EXPECT_FALSE(crew::parallel_none_of(v.begin(), v.end(), one));
            EXPECT_FALSE(crew::parallel_equal(v.begin(), v.end(), zeros.begin()));
            EXPECT_TRUE(crew::parallel_equal(zeros.begin(), zeros.end(), zeros.begin()));
            EXPECT_EQ(crew::parallel_find_if(zeros.begin(), zeros.end(), one), zeros.end());
        }
    });
}

// copy_if calls pred exactly once per element, as std::copy_if with a policy does: a predicate
// whose answer changes with every call (yes for the first n/2 calls, in whatever order the blocks
// run) keeps exactly the elements it said yes to, in input order, and nothing past the end.
TEST_P(algorithms_std, copy_if_calls_pred_once_per_element) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    const std::size_t n = 3 * 4096 + 5;
    std::vector<int> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i);
    pool().run([&] {
        for (int form = 0; form < 2; ++form) {
            std::atomic<std::size_t> calls{0};
            std::vector<std::atomic<unsigned char>> asked(n);
            auto fickle = [&](const int& x) {
                asked[static_cast<std::size_t>(x)].fetch_add(1, std::memory_order_relaxed);
                return calls.fetch_add(1, std::memory_order_relaxed) < n / 2;
            };
            std::vector<int> out(n + 1, -1);
            auto end = form == 0 ? crew::parallel_copy_if(v.begin(), v.end(), out.begin(), fickle)
                                 : crew::parallel_copy_if(crew::simple_partition{100}, v.begin(), v.end(), out.begin(), fickle);
            EXPECT_EQ(calls.load(), n);
            for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(asked[i].load(), 1u) << "element " << i;
            ASSERT_EQ(static_cast<std::size_t>(end - out.begin()), n / 2);
            EXPECT_TRUE(std::is_sorted(out.begin(), end));  // input order kept
            EXPECT_EQ(out[n / 2], -1);
            EXPECT_EQ(out[n], -1);
        }
    });
}

CREW_ALL_POOL_SIZES(algorithms_std);

}  // namespace
