// Exceptions from any chunk, cancellation of chunks that had not started, bad arguments, nested
// algorithms and calls from outside every pool.
#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "algorithms/common.hpp"

namespace {

using namespace alg_test;

class algorithms_behaviour : public crew_test::pool_test {};

constexpr std::size_t exc_n = 10000;  // past the sort's serial cutoff
const std::vector<std::size_t> throw_at{0, 1, exc_n / 2, exc_n - 1};

// Runs `call(k)` which must throw test_error (thrown at element k), then checks the pool still
// works.
template <class Call>
void expect_throws_everywhere(crew::pool& p, Call call) {
    for (std::size_t k : throw_at) {
        EXPECT_THROW(p.run([&] { call(k); }), test_error) << "throw at " << k;
        long sum = p.run([] { return crew::parallel_reduce(0L, 1000L, 0L, std::plus<>()); });
        EXPECT_EQ(sum, 999L * 1000 / 2);
    }
}

TEST_P(algorithms_behaviour, exceptions_from_loops_reach_the_caller) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    std::vector<int> v(exc_n);
    std::iota(v.begin(), v.end(), 0);
    auto thrower = [](std::size_t k) {
        return [k](auto i) {
            if (static_cast<std::size_t>(i) == k) throw test_error("boom");
            return i;
        };
    };
    expect_throws_everywhere(pool(), [&](std::size_t k) { crew::parallel_for(std::size_t{0}, exc_n, thrower(k)); });
    expect_throws_everywhere(pool(), [&](std::size_t k) {
        crew::parallel_for_each(v.begin(), v.end(), [&](int& x) { thrower(k)(x); });
    });
    expect_throws_everywhere(pool(), [&](std::size_t k) {
        std::vector<int> out(exc_n);
        crew::parallel_transform(v.begin(), v.end(), out.begin(), thrower(k));
    });
}

TEST_P(algorithms_behaviour, exceptions_from_reductions_scans_sorts_and_invoke_reach_the_caller) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    std::vector<int> v(exc_n);
    std::iota(v.begin(), v.end(), 0);
    expect_throws_everywhere(pool(), [&](std::size_t k) {
        crew::parallel_transform_reduce(0, exc_n, 0L, std::plus<>(), [k](std::size_t i) {
            if (i == k) throw test_error("transform");
            return static_cast<long>(i);
        });
    });
    expect_throws_everywhere(pool(), [&](std::size_t k) {
        // The op throws when it meets element k (as either operand), wherever that happens.
        std::vector<std::pair<long, bool>> marked(exc_n);
        for (std::size_t i = 0; i < exc_n; ++i) marked[i] = {static_cast<long>(i), i == k};
        using elem = std::pair<long, bool>;
        crew::parallel_reduce(crew::deterministic, marked.begin(), marked.end(), elem{0, false},
                              [](const elem& a, const elem& b) {
                                  if (a.second || b.second) throw test_error("op");
                                  return elem{a.first + b.first, false};
                              });
    });
    expect_throws_everywhere(pool(), [&](std::size_t k) {
        std::vector<int> out(exc_n);
        crew::parallel_inclusive_scan(v.begin(), v.end(), out.begin(), [k](int a, int b) {
            if (static_cast<std::size_t>(b) == k || (k == 0 && a == 0)) throw test_error("scan");
            return a ^ b;
        });
    });
    expect_throws_everywhere(pool(), [&](std::size_t k) {
        auto w = random_ints(exc_n, 3, 0, 1000000);
        w[k] = -1;  // the comparator throws when it meets this element
        crew::parallel_sort(w.begin(), w.end(), [](int a, int b) {
            if (a == -1 || b == -1) throw test_error("comp");
            return a < b;
        });
    });
    expect_throws_everywhere(pool(), [&](std::size_t k) {
        std::atomic<int> ran{0};
        auto f = [&](std::size_t j) {
            return [&, j] {
                ++ran;
                if (j == k % 4) throw test_error("invoke");
            };
        };
        crew::parallel_invoke(f(0), f(1), f(2), f(3));
    });
}

TEST_P(algorithms_behaviour, chunks_not_started_are_skipped_after_an_exception) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    std::atomic<std::size_t> ran{0};
    EXPECT_THROW(pool().run([&] {
        crew::parallel_for(crew::simple_partition{1}, std::size_t{0}, std::size_t{1000}, [&](std::size_t i) {
            ++ran;
            if (i == 0) throw test_error("first");
        });
    }),
                 test_error);
    // One worker runs the leftmost chunk first; the throw cancels all the others before they start.
    if (workers() == 1) {
        EXPECT_EQ(ran.load(), 1u);
    }
    EXPECT_GE(ran.load(), 1u);
}

TEST_P(algorithms_behaviour, nested_algorithms_neither_deadlock_nor_add_threads) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    std::mutex m;
    std::set<std::thread::id> threads;
    auto note = [&] {
        std::lock_guard lock(m);
        threads.insert(std::this_thread::get_id());
    };
    long got = pool().run([&] {
        return crew::parallel_transform_reduce(0, 200, 0L, std::plus<>(), [&](int i) {
            note();
            std::vector<long> row(300);
            crew::parallel_for(0, 300, [&](int j) {
                note();
                row[static_cast<std::size_t>(j)] = static_cast<long>(i) * j;
            });
            crew::parallel_sort(row.begin(), row.end(), std::greater<>());
            return crew::parallel_reduce(row.begin(), row.end(), 0L, std::plus<>());
        });
    });
    EXPECT_EQ(got, (199L * 200 / 2) * (299L * 300 / 2));
    EXPECT_LE(threads.size(), workers());
}

TEST_P(algorithms_behaviour, bad_arguments_throw_invalid_argument) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    std::vector<int> v(10, 1);
    pool().run([&] {
        EXPECT_THROW(crew::parallel_for(5, 3, [](int) {}), std::invalid_argument);
        EXPECT_THROW(crew::parallel_for(-1, std::numeric_limits<std::size_t>::max(), [](long) {}),
                     std::invalid_argument);
        EXPECT_THROW(crew::parallel_reduce(10, 3, 0, std::plus<>()), std::invalid_argument);
        EXPECT_THROW(crew::parallel_reduce(v.end(), v.begin(), 0, std::plus<>()), std::invalid_argument);
        EXPECT_THROW(crew::parallel_transform_reduce(v.end(), v.begin(), 0, std::plus<>(), [](int x) { return x; }),
                     std::invalid_argument);
        EXPECT_THROW(crew::parallel_sort(v.end(), v.begin()), std::invalid_argument);
        EXPECT_THROW(crew::parallel_for_each(v.end(), v.begin(), [](int) {}), std::invalid_argument);
        std::vector<int> out(10);
        EXPECT_THROW(crew::parallel_inclusive_scan(v.end(), v.begin(), out.begin()), std::invalid_argument);
    });
    EXPECT_THROW(crew::simple_partition{0}, std::invalid_argument);
    EXPECT_THROW(crew::simple_partition{-4}, std::invalid_argument);
    EXPECT_THROW(crew::deterministic_partition{0}, std::invalid_argument);
    EXPECT_EQ(crew::simple_partition{std::size_t{5}}.grain(), 5u);
}

TEST_P(algorithms_behaviour, one_element_and_empty_ranges) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    pool().run([&] {
        std::vector<int> none, one{42};
        EXPECT_EQ(crew::parallel_reduce(none.begin(), none.end(), 7, std::plus<>()), 7);
        EXPECT_EQ(crew::parallel_reduce(one.begin(), one.end(), 7, std::plus<>()), 49);
        crew::parallel_sort(none.begin(), none.end());
        crew::parallel_stable_sort(one.begin(), one.end());
        EXPECT_EQ(one[0], 42);
        std::vector<int> out(1);
        crew::parallel_exclusive_scan(one.begin(), one.end(), out.begin(), 3);
        EXPECT_EQ(out[0], 3);
        EXPECT_EQ(crew::parallel_transform(none.begin(), none.end(), out.begin(), [](int x) { return x; }),
                  out.begin());
    });
}

CREW_ALL_POOL_SIZES(algorithms_behaviour);

// From outside every pool the algorithms run on the default pool's workers.
TEST(algorithms_default_pool, calls_from_outside_run_on_the_default_pool) {
    crew_test::watchdog dog(std::chrono::seconds(60));
    ASSERT_EQ(crew::this_worker_index(), -1);
    std::atomic<int> outside{0};
    long sum = crew::parallel_transform_reduce(0L, 10000L, 0L, std::plus<>(), [&](long i) {
        if (crew::this_worker_index() < 0) ++outside;
        return i;
    });
    EXPECT_EQ(sum, 9999L * 10000 / 2);
    EXPECT_EQ(outside.load(), 0);
    std::vector<int> v = random_ints(50000, 1), w = v;
    crew::parallel_sort(v.begin(), v.end());
    std::sort(w.begin(), w.end());
    EXPECT_EQ(v, w);
}

}  // namespace
