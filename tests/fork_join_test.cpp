// crew::fork_join: results (values, void, references, move-only), exceptions (argument order, all
// finished first), nesting, stolen jobs, use inside a canceled task_group and outside any pool.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <variant>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

class fork_join_suite : public crew_test::pool_test {};

void spin_for(std::chrono::microseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) {
    }
}

// A 3-ary tree of depth d: 3^d leaves, every node forks its three subtrees.
long leaves(int d) {
    if (d == 0) return 1;
    auto [a, b, c] = crew::fork_join([&] { return leaves(d - 1); }, [&] { return leaves(d - 1); },
                                     [&] { return leaves(d - 1); });
    return a + b + c;
}

// skynet shape: 10 children per node.
std::uint64_t skynet(std::uint64_t base, int depth) {
    if (depth == 0) return base;
    auto child = [&](std::uint64_t i) { return [=] { return skynet(base * 10 + i, depth - 1); }; };
    auto r = crew::fork_join(child(0), child(1), child(2), child(3), child(4), child(5), child(6), child(7),
                             child(8), child(9));
    return std::apply([](auto... v) { return (v + ...); }, r);
}

TEST_P(fork_join_suite, results_come_back_in_argument_order) {
    crew_test::watchdog dog(60s);
    pool().run([] {
        for (int round = 0; round < 1000; ++round) {
            auto [a, b, c, d] = crew::fork_join([] { return 1; }, [] { return std::string("two"); },
                                                [] { return 3.0; }, [round] { return round; });
            EXPECT_EQ(a, 1);
            EXPECT_EQ(b, "two");
            EXPECT_EQ(c, 3.0);
            EXPECT_EQ(d, round);
        }
    });
}

TEST_P(fork_join_suite, a_tree_of_forks_equals_the_serial_count) {
    crew_test::watchdog dog(120s);
    EXPECT_EQ(pool().run([] { return leaves(9); }), 19683);
    // sum of the leaf indices 0 .. 10^5 - 1
    EXPECT_EQ(pool().run([] { return skynet(0, 5); }), 99999ull * 100000ull / 2);
}

TEST_P(fork_join_suite, void_callables_return_void_and_mixed_ones_monostate) {
    crew_test::watchdog dog(60s);
    pool().run([] {
        std::atomic<int> sum{0};
        static_assert(std::is_void_v<decltype(crew::fork_join([] {}, [] {}, [] {}))>);
        crew::fork_join([&] { sum += 1; }, [&] { sum += 2; }, [&] { sum += 4; });
        EXPECT_EQ(sum.load(), 7);
        auto r = crew::fork_join([] {}, [] { return 5; }, [] {});
        static_assert(std::is_same_v<decltype(r), std::tuple<std::monostate, int, std::monostate>>);
        EXPECT_EQ(std::get<1>(r), 5);
        auto one = crew::fork_join([] { return 9; });
        static_assert(std::is_same_v<decltype(one), std::tuple<int>>);
        EXPECT_EQ(std::get<0>(one), 9);
        crew::fork_join([&] { sum += 8; });
        EXPECT_EQ(sum.load(), 15);
    });
}

TEST_P(fork_join_suite, move_only_and_reference_results) {
    crew_test::watchdog dog(60s);
    pool().run([] {
        int x = 1, y = 2;
        auto r = crew::fork_join([] { return std::make_unique<int>(7); }, [&]() -> int& { return x; },
                                 [&]() -> const int& { return y; });
        static_assert(std::is_same_v<decltype(r), std::tuple<std::unique_ptr<int>, int&, const int&>>);
        EXPECT_EQ(*std::get<0>(r), 7);
        EXPECT_EQ(&std::get<1>(r), &x);
        EXPECT_EQ(&std::get<2>(r), &y);
        // rvalue-only callables are invoked as rvalues
        struct once {
            int operator()() && { return 3; }
        };
        auto [a, b] = crew::fork_join(once{}, once{});
        EXPECT_EQ(a + b, 6);
    });
}

TEST_P(fork_join_suite, the_first_exception_in_argument_order_wins_after_all_finished) {
    crew_test::watchdog dog(60s);
    pool().run([] {
        for (int i = 0; i < 100; ++i) {
            std::atomic<int> finished{0};
            try {
                crew::fork_join([&] { ++finished; },
                                [&] {
                                    spin_for(std::chrono::microseconds(i % 7));
                                    ++finished;
                                    throw std::runtime_error("second");
                                },
                                [&] {
                                    ++finished;
                                    throw std::logic_error("third");
                                },
                                [&] {
                                    spin_for(std::chrono::microseconds(20));
                                    ++finished;
                                });
                ADD_FAILURE() << "no exception";
            } catch (const std::runtime_error& e) {
                EXPECT_STREQ(e.what(), "second");
            }
            EXPECT_EQ(finished.load(), 4);  // every callable finished before the rethrow
        }
        try {
            (void)crew::fork_join([]() -> int { throw std::runtime_error("first"); }, [] { return 2; });
            ADD_FAILURE() << "no exception";
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "first");
        }
    });
}

// With more than one worker, jobs are stolen: every callable still runs exactly once.
TEST_P(fork_join_suite, stolen_jobs_run_exactly_once) {
    crew_test::watchdog dog(120s);
    crew::pool& p = pool();
    std::atomic<int> runs[6] = {};
    for (int round = 0; round < 200; ++round) {
        p.run([&] {
            auto job = [&](int k) {
                return [&runs, k] {
                    spin_for(std::chrono::microseconds(k * 5));
                    runs[k].fetch_add(1);
                    return k;
                };
            };
            auto [a, b, c, d, e, f] = crew::fork_join(job(0), job(1), job(2), job(3), job(4), job(5));
            EXPECT_EQ(a + b + c + d + e + f, 15);
        });
    }
    for (auto& r : runs) EXPECT_EQ(r.load(), 200);
}

TEST_P(fork_join_suite, nested_in_joins_and_task_groups) {
    crew_test::watchdog dog(60s);
    std::atomic<long> total{0};
    pool().run([&] {
        crew::task_group g;
        for (int i = 0; i < 20; ++i)
            g.run([&] {
                auto [a, b] = crew::join([] { return leaves(4); }, [] {
                    auto [x, y] = crew::fork_join([] { return leaves(3); }, [] { return leaves(3); });
                    return x + y;
                });
                total += a + b;
            });
        g.wait();
    });
    EXPECT_EQ(total.load(), 20 * (81 + 54));
}

// Inside a canceled group: fork_join does not drop work (as join), and every callable, stolen or
// not, sees the group's cancellation.
TEST_P(fork_join_suite, inside_a_canceled_group_every_callable_runs_and_sees_the_cancellation) {
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    for (int round = 0; round < 50; ++round) {
        crew::task_group g(p);
        std::atomic<int> ran{0}, saw_cancel{0};
        std::atomic<bool> canceled{false};
        g.run([&] {
            while (!canceled.load()) std::this_thread::yield();
            auto body = [&] {
                spin_for(std::chrono::microseconds(3));
                ++ran;
                if (crew::is_canceling()) ++saw_cancel;
            };
            crew::fork_join(body, body, body, body);
        });
        g.cancel();
        canceled = true;
        EXPECT_EQ(g.wait(), crew::task_group_status::canceled);
        // The child either started before cancel() (then all four ran and saw it) or was dropped.
        EXPECT_TRUE(ran.load() == 0 || ran.load() == 4) << ran.load();
        EXPECT_EQ(saw_cancel.load(), ran.load());
    }
}

TEST(fork_join, works_from_outside_any_pool) {
    crew_test::watchdog dog(60s);
    EXPECT_EQ(leaves(5), 243);
    auto [a, b] = crew::fork_join([] { return 1; }, [] { return 2; });
    EXPECT_EQ(a + b, 3);
}

// The outside-pool branch is out of line (detail::cold_call): references, move-only results and
// the first exception in argument order come through it unchanged.
TEST(fork_join, outside_any_pool_keeps_references_move_only_results_and_exceptions) {
    crew_test::watchdog dog(60s);
    int x = 1;
    auto [ref, owned, nothing] = crew::fork_join([&]() -> int& { return x; },
                                                 [] { return std::make_unique<int>(7); }, [] {});
    static_assert(std::is_same_v<decltype(ref), int&>);
    static_assert(std::is_same_v<decltype(nothing), std::monostate>);
    ref = 5;
    EXPECT_EQ(x, 5);
    ASSERT_NE(owned, nullptr);
    EXPECT_EQ(*owned, 7);
    try {
        crew::fork_join([] {}, [] { throw std::runtime_error("second"); }, [] { throw std::logic_error("third"); });
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "second");
    }
}

// The docs/API.md example.
TEST(fork_join, the_api_example) {
    crew_test::watchdog dog(60s);
    crew::pool p(2);
    p.run([] {
        auto [count, name, nothing] = crew::fork_join(
            [] { return 42; },
            [] { return std::string("crew"); },
            [] {});                                      // void -> std::monostate
        crew::fork_join([] { /* ... */ }, [] { /* ... */ });  // all void: returns void
        EXPECT_EQ(count, 42);
        EXPECT_EQ(name, "crew");
        static_assert(std::is_same_v<decltype(nothing), std::monostate>);
    });
}

CREW_ALL_POOL_SIZES(fork_join_suite);

}  // namespace
