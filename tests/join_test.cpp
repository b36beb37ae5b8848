// crew::join: results, recursion, depth, exceptions, and use from outside any pool.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

long fib(int n) {
    if (n < 2) return n;
    auto [a, b] = crew::join([&] { return fib(n - 1); }, [&] { return fib(n - 2); });
    return a + b;
}

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

int depth(int n) {
    if (n == 0) return 0;
    auto [a, b] = crew::join([&] { return depth(n - 1); }, [] { return 1; });
    return a + b;
}

class join_suite : public crew_test::pool_test {};

TEST_P(join_suite, fib_27_equals_the_serial_result) {
    crew_test::watchdog dog(120s);
    EXPECT_EQ(pool().run([] { return fib(27); }), fib_serial(27));
}

TEST_P(join_suite, nests_ten_thousand_deep) {
    crew_test::watchdog dog(120s);
    EXPECT_EQ(pool().run([] { return depth(10'000); }), 10'000);
}

TEST_P(join_suite, returns_void_pairs_and_monostate) {
    crew_test::watchdog dog(60s);
    pool().run([] {
        int a = 0, b = 0;
        crew::join([&] { a = 1; }, [&] { b = 2; });
        EXPECT_EQ(a + b, 3);
        auto [s, m] = crew::join([] { return std::string("x"); }, [] {});
        EXPECT_EQ(s, "x");
        static_assert(std::is_same_v<decltype(m), std::monostate>);
    });
}

TEST_P(join_suite, an_exception_from_either_side_arrives_after_both_finished) {
    crew_test::watchdog dog(60s);
    pool().run([] {
        for (int i = 0; i < 200; ++i) {
            std::atomic<bool> other_finished{false};
            EXPECT_THROW(crew::join([] { throw std::runtime_error("left"); },
                                    [&] { other_finished.store(true); }),
                         std::runtime_error);
            EXPECT_TRUE(other_finished.load());
            other_finished.store(false);
            EXPECT_THROW(crew::join([&] { other_finished.store(true); },
                                    [] { throw std::logic_error("right"); }),
                         std::logic_error);
            EXPECT_TRUE(other_finished.load());
            try {
                crew::join([] { throw std::runtime_error("left"); }, [] { throw std::logic_error("right"); });
                ADD_FAILURE() << "join swallowed both exceptions";
            } catch (const std::runtime_error&) {  // the left one wins
            }
        }
    });
}

TEST_P(join_suite, exceptions_deep_in_a_tree_reach_the_root_and_the_pool_keeps_working) {
    crew_test::watchdog dog(60s);
    struct thrower {
        static long run(int n) {
            if (n == 1) throw std::out_of_range("leaf");
            if (n < 2) return n;
            auto [a, b] = crew::join([&] { return run(n - 1); }, [&] { return fib(n - 2); });
            return a + b;
        }
    };
    EXPECT_THROW(pool().run([] { return thrower::run(20); }), std::out_of_range);
    EXPECT_EQ(pool().run([] { return fib(20); }), fib_serial(20));
}

TEST_P(join_suite, spawned_tasks_left_above_the_job_are_run) {
    crew_test::watchdog dog(60s);
    std::atomic<int> ran{0};
    pool().run([&] {
        crew::join(
            [&] {
                for (int i = 0; i < 100; ++i) crew::spawn([&] { ran.fetch_add(1); });
            },
            [&] { ran.fetch_add(1000); });
    });
    while (ran.load() != 1100) std::this_thread::yield();
}

CREW_ALL_POOL_SIZES(join_suite);

TEST(join, fib_40_completes_on_a_one_worker_pool) {
    crew_test::watchdog dog(600s);
    crew::pool p(1);
    int n = crew_test::scaled(10) == 10 ? 40 : 30;  // sanitizer builds take the smaller tree
    EXPECT_EQ(p.run([n] { return fib(n); }), fib_serial(n));
}

// The stolen half finishes around the time the waiting worker gives up spinning and lingering
// (about 25 + 200 us: worker.cpp's spin rounds and linger_ns) and parks, so set() races the
// waiter's announce / re-check / sleep. A lost wake-up hangs (watchdog). Each round starts from a
// parked pool: an idle worker lingers instead of parking at once, and a fork is promoted for a
// thief at once only while a worker sleeps, so without the wait the second worker would rarely
// steal the second half at all.
TEST(join, a_waiter_parking_while_its_stolen_half_finishes_is_woken) {
    crew_test::watchdog dog(300s);
    crew::pool p(2);
    std::mt19937 rng(11);
    const int rounds = static_cast<int>(crew_test::scaled(4000));
    for (int i = 0; i < rounds; ++i) {
        auto spin_for = std::chrono::microseconds(rng() % 400);
        auto spin = [](std::chrono::microseconds d) {
            auto end = std::chrono::steady_clock::now() + d;
            while (std::chrono::steady_clock::now() < end) {
            }
        };
        while (crew::detail::registry_of(p).lot().sleepers() != p.size()) std::this_thread::yield();
        // f runs long enough for the other worker to wake and steal g; then f's worker waits.
        p.run([&] { crew::join([&] { spin(std::chrono::microseconds(40)); }, [&] { spin(spin_for); }); });
    }
    auto m = p.metrics().total();
    std::printf("steals %llu, parks %llu over %d rounds\n", static_cast<unsigned long long>(m.steals),
                static_cast<unsigned long long>(m.parks), rounds);
}

// A stolen second half's outcome lives in a cell its thief constructs and the joining worker
// destroys after taking it (join_job::take_stolen) or dropping it (f threw: discard_stolen). f
// keeps forking empty joins until g has started elsewhere (those forks answer the idle worker's
// request by promoting g's job), so g is stolen in most rounds; each result is a counted
// move-only value, and every one made must be destroyed exactly once.
struct counted {
    static inline std::atomic<int> live{0};
    std::unique_ptr<int> p;
    explicit counted(int v) : p(std::make_unique<int>(v)) { live.fetch_add(1); }
    counted(counted&& o) noexcept : p(std::move(o.p)) { live.fetch_add(1); }
    counted& operator=(counted&&) = delete;
    ~counted() { live.fetch_sub(1); }
};

TEST(join, a_stolen_half_s_result_is_taken_or_dropped_exactly_once) {
    crew_test::watchdog dog(120s);
    crew::pool p(2);
    int stolen = 0;
    const auto here = [] { return std::this_thread::get_id(); };
    for (int i = 0; i < 40; ++i) {
        const bool f_throws = i % 2 == 1;
        std::atomic<bool> g_started{false}, g_done{false};
        std::thread::id f_thread, g_thread;
        int x = 0;
        auto f = [&]() -> counted {
            f_thread = here();
            const auto deadline = std::chrono::steady_clock::now() + 200ms;
            while (!g_started.load() && std::chrono::steady_clock::now() < deadline) crew::join([] {}, [] {});
            if (f_throws) throw std::runtime_error("f");
            return counted(1);
        };
        auto g = [&]() -> std::pair<counted, int*> {
            g_thread = here();
            g_started.store(true);
            std::this_thread::sleep_for(1ms);  // still running when f returns or throws
            g_done.store(true);
            return {counted(2), &x};
        };
        p.run([&] {
            if (f_throws) {
                EXPECT_THROW(crew::join(f, g), std::runtime_error);
            } else {
                auto [a, b] = crew::join(f, g);
                EXPECT_EQ(*a.p, 1);
                EXPECT_EQ(*b.first.p, 2);
                EXPECT_EQ(b.second, &x);
            }
        });
        EXPECT_TRUE(g_done.load());  // g finished before join returned or threw
        if (g_thread != f_thread) ++stolen;
        EXPECT_EQ(counted::live.load(), 0);
    }
    EXPECT_GT(stolen, 0);  // the stolen path was exercised (about every round, in practice)
    std::printf("g stolen in %d of 40 rounds\n", stolen);
}

TEST(join, works_from_outside_any_pool) {
    crew_test::watchdog dog(60s);
    EXPECT_EQ(fib(15), fib_serial(15));
}

// From outside every pool the join goes through its out-of-line branch (detail::cold_call): the
// result types, rvalue-only callables and exceptions must come through it unchanged.
TEST(join, outside_any_pool_keeps_references_move_only_results_and_exceptions) {
    crew_test::watchdog dog(60s);
    int x = 1;
    struct rvalue_only {  // callable only as an rvalue, and move-only
        std::unique_ptr<int> p;
        std::unique_ptr<int> operator()() && { return std::move(p); }
    };
    auto [ref, owned] = crew::join([&]() -> int& { return x; }, rvalue_only{std::make_unique<int>(7)});
    static_assert(std::is_same_v<decltype(ref), int&>);
    ref = 5;
    EXPECT_EQ(x, 5);
    ASSERT_NE(owned, nullptr);
    EXPECT_EQ(*owned, 7);
    bool f_ran = false;
    EXPECT_THROW(crew::join([&] { f_ran = true; }, [] { throw std::runtime_error("g"); }), std::runtime_error);
    EXPECT_TRUE(f_ran);
}

}  // namespace
