// crew::workspan: work, span and parallelism against programs whose values are known analytically
// (spin leaves of known length), and against the classic benchmarks (sane, growing parallelism).
// Tolerances are generous: the machine may be loaded, and a spin leaf can only run long.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <time.h>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using ns = std::chrono::nanoseconds;

class workspan_suite : public crew_test::pool_test {};

// Busy-works `d` of the calling thread's CPU time (the profiler's default clock): a leaf of known
// length even when the machine is loaded and the thread is preempted.
std::int64_t thread_cpu_ns() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
void spin_for(ns d) {
    const std::int64_t end = thread_cpu_ns() + d.count();
    while (thread_cpu_ns() < end) {
    }
}

// The tests time strands by thread CPU time (leaves of known CPU length stay known on a loaded
// machine); the wall clock, the default, has its own test below.
const crew::workspan_options cpu_clock{ns(-1), crew::workspan_clock::thread_cpu};
const crew::workspan_options zero_cost{0ns, crew::workspan_clock::thread_cpu};

double us(ns d) { return static_cast<double>(d.count()) / 1000.0; }

// On this VM the thread CPU clock also counts time the hypervisor took the vCPU away (jumps of up
// to about 1 ms between two consecutive reads were measured), and the wall clock counts
// preemption (tens of ms under the sanitizers with 4 or 8 workers on 2 cores: one such segment on
// the critical path was seen to make skynet's span 33 ms under TSan), so a measurement can only
// come out too long, never too short: a case is measured up to `attempts` times, and the first
// attempt that meets the expectations is checked in full (the last attempt when none does).
constexpr int attempts = 8;

template <class Measure, class Within>
crew::workspan_report measure_until(Measure measure, Within within) {
    crew::workspan_report r = measure();
    for (int attempt = 1; attempt < attempts && !within(r); ++attempt) r = measure();
    return r;
}

// n leaves of `w` and one (the last) of `big`, as a balanced binary join tree.
void imbalanced(int lo, int hi, int n, ns w, ns big) {
    if (hi - lo == 1) {
        spin_for(lo == n ? big : w);
        return;
    }
    const int mid = lo + (hi - lo) / 2;
    crew::join([&] { imbalanced(lo, mid, n, w, big); }, [&] { imbalanced(mid, hi, n, w, big); });
}

// T1 = n*w + W; T-inf = W plus the log-depth path overhead.
TEST_P(workspan_suite, imbalanced_tree_matches_the_formula) {
    crew_test::watchdog dog(120s);
    const int n = 63;
    const ns w = 50us, big = 3000us;
    const double t1 = n * us(w) + us(big);
    const crew::workspan_report r = measure_until(
        [&] {
            crew::workspan ws(zero_cost);
            ws.run(pool(), [&] { imbalanced(0, n + 1, n, w, big); });
            return ws.report();
        },
        [&](const crew::workspan_report& m) { return us(m.work) <= 1.6 * t1 && us(m.span) <= 1.5 * us(big); });
    EXPECT_GE(us(r.work), 0.97 * t1) << r;
    EXPECT_LE(us(r.work), 1.6 * t1) << r;
    EXPECT_GE(us(r.span), 0.97 * us(big)) << r;
    EXPECT_LE(us(r.span), 1.5 * us(big)) << r;
    EXPECT_EQ(r.forks, static_cast<std::uint64_t>(n));  // n + 1 leaves: n joins
    EXPECT_EQ(r.branches, 2u * n);
    EXPECT_EQ(r.regions, 1u);
    EXPECT_EQ(r.burdened_span, r.span);  // steal cost 0
    if (workers() == 2) std::cout << "imbalanced, 63 x 50 us + 3000 us:\n" << r;
}

// 16 equal leaves: parallelism about 16, whatever the pool runs them on.
TEST_P(workspan_suite, balanced_tree_parallelism_is_the_leaf_count) {
    crew_test::watchdog dog(120s);
    const crew::workspan_report r = measure_until(
        [&] {
            crew::workspan ws(cpu_clock);
            ws.run(pool(), [&] {
                crew::parallel_for(0, 16, [](int) { spin_for(400us); }, crew::simple_partitioner{});
            });
            return ws.report();
        },
        [](const crew::workspan_report& m) { return m.parallelism() >= 8.0; });
    EXPECT_GE(us(r.work), 16 * 400 * 0.97) << r;
    EXPECT_GE(r.parallelism(), 8.0) << r;
    EXPECT_LE(r.parallelism(), 16.5) << r;
    EXPECT_GE(r.burdened_span, r.span);
    EXPECT_LE(r.greedy_bound(1), r.work + r.span);
    EXPECT_GT(r.speedup_bound(256), r.speedup_bound(2));
}

// A task_group whose children start at different points of the spawning strand: the group's span
// is the latest end, spawner's span at run() + the child's span.
TEST_P(workspan_suite, task_group_span_is_the_latest_child_end) {
    crew_test::watchdog dog(120s);
    const crew::workspan_report r = measure_until(
        [&] {
            crew::workspan ws(zero_cost);
            ws.run(pool(), [&] {
                crew::task_group g;
                g.run([] { spin_for(2000us); });  // ends at 2000
                spin_for(500us);
                for (int i = 0; i < 8; ++i) g.run([] { spin_for(1000us); });  // ends at 1500
                g.wait();
            });
            return ws.report();
        },
        [](const crew::workspan_report& m) { return us(m.work) <= 10'500 * 1.6 && us(m.span) <= 2000 * 1.5; });
    EXPECT_GE(us(r.work), 10'500 * 0.97) << r;
    EXPECT_LE(us(r.work), 10'500 * 1.6) << r;
    EXPECT_GE(us(r.span), 2000 * 0.97) << r;
    EXPECT_LE(us(r.span), 2000 * 1.5) << r;
    EXPECT_EQ(r.forks, 9u);
}

// fork_join: the span is the longest callable's.
TEST_P(workspan_suite, fork_join_span_is_the_longest_callable) {
    crew_test::watchdog dog(120s);
    const crew::workspan_report r = measure_until(
        [&] {
            crew::workspan ws(zero_cost);
            ws.run(pool(), [&] {
                crew::fork_join([] { spin_for(300us); }, [] { spin_for(1200us); }, [] { spin_for(300us); });
            });
            return ws.report();
        },
        [](const crew::workspan_report& m) { return us(m.span) <= 1200 * 1.5; });
    EXPECT_GE(us(r.work), 1800 * 0.97) << r;
    EXPECT_GE(us(r.span), 1200 * 0.97) << r;
    EXPECT_LE(us(r.span), 1200 * 1.5) << r;
    EXPECT_EQ(r.branches, 3u);
}

// fib with leaves of 20 us of CPU time: one interrupt (tens of us on this VM) anywhere in a
// program of nanosecond leaves becomes its span, whatever n is; with leaves of 20 us the
// parallelism still grows with n through such noise.
long fib(int n) {
    if (n < 2) {
        spin_for(20us);
        return n;
    }
    auto [a, b] = crew::join([&] { return fib(n - 1); }, [&] { return fib(n - 2); });
    return a + b;
}

// Skynet and matmul are timed by thread CPU time too: their leaves are nanoseconds (a CPU clock
// read costs more than a leaf, and its calibrated cost is subtracted), but the wall clock counts
// preemption, and with more workers than cores in a slow (sanitizer) build every run is preempted
// many times: 46 ms of a 97 ms T1 and a 46 ms span were measured under TSan on 4 workers. The wall
// clock, the default, has its own test below. A pair of measurements is repeated (up to
// `attempts` times) until it shows the expected order.
crew::workspan_report measure_fib(crew::pool& p, int n) {
    crew::workspan ws(cpu_clock);  // coarse leaves: the clock that ignores preemption
    long got = ws.run(p, [&] { return fib(n); });
    EXPECT_EQ(got, n == 8 ? 21 : n == 14 ? 377 : -1);
    return ws.report();
}

TEST_P(workspan_suite, fib_parallelism_grows_with_n) {
    crew_test::watchdog dog(120s);
    crew::workspan_report small, large;
    for (int attempt = 0; attempt < attempts; ++attempt) {
        small = measure_fib(pool(), 8);
        large = measure_fib(pool(), 14);
        if (large.parallelism() > small.parallelism() && large.parallelism() > 10.0) break;
    }
    EXPECT_LT(small.span, small.work) << small;
    EXPECT_LT(large.span, large.work) << large;
    EXPECT_GT(large.parallelism(), small.parallelism()) << small << large;
    EXPECT_GT(large.parallelism(), 10.0) << large;
    EXPECT_GE(large.burdened_span, large.span);
    EXPECT_EQ(large.forks, 609u);  // fib(14) calls with n >= 2
    if (workers() == 2) std::cout << "fib(8):\n" << small << "fib(14):\n" << large;
}

// Skynet: a 10-ary tree of task_groups, leaves return their number.
std::int64_t skynet(std::int64_t num, std::int64_t size) {
    if (size == 1) return num;
    std::int64_t sums[10] = {};
    crew::task_group g;
    for (int i = 0; i < 10; ++i) g.run([&sums, i, num, size] { sums[i] = skynet(num + i * (size / 10), size / 10); });
    g.wait();
    std::int64_t total = 0;
    for (std::int64_t s : sums) total += s;
    return total;
}

TEST_P(workspan_suite, skynet_parallelism_grows_with_n) {
    crew_test::watchdog dog(120s);
    crew::workspan_report small, large;
    for (int attempt = 0; attempt < attempts; ++attempt) {
        crew::workspan a(cpu_clock), b(cpu_clock);
        EXPECT_EQ(a.run(pool(), [] { return skynet(0, 100); }), 4950);
        EXPECT_EQ(b.run(pool(), [] { return skynet(0, 10'000); }), 49'995'000);
        small = a.report();
        large = b.report();
        if (large.parallelism() > small.parallelism()) break;
    }
    EXPECT_LT(small.span, small.work) << small;
    EXPECT_GT(large.parallelism(), small.parallelism()) << small << large;
    EXPECT_EQ(large.forks, 11'110u);  // every node but the root is a group child: 10+100+1000+10000
}

// N-queens: one task_group per row; a solution spins 20 us of CPU time.
int queens(int n, int row, std::uint32_t cols, std::uint32_t d1, std::uint32_t d2) {
    if (row == n) {
        spin_for(20us);  // a leaf of known cost, as in fib above
        return 1;
    }
    std::atomic<int> count{0};
    crew::task_group g;
    for (int c = 0; c < n; ++c) {
        const std::uint32_t bit = 1u << c;
        if ((cols & bit) || (d1 & (1u << (row + c))) || (d2 & (1u << (row - c + n)))) continue;
        g.run([=, &count] { count += queens(n, row + 1, cols | bit, d1 | (1u << (row + c)), d2 | (1u << (row - c + n))); });
    }
    g.wait();
    return count.load();
}

TEST_P(workspan_suite, nqueens_is_sane) {
    crew_test::watchdog dog(120s);
    crew::workspan_report r;
    for (int attempt = 0; attempt < attempts; ++attempt) {
        crew::workspan ws(cpu_clock);
        EXPECT_EQ(ws.run(pool(), [] { return queens(8, 0, 0, 0, 0); }), 92);
        r = ws.report();
        if (r.parallelism() > 10.0) break;
    }
    EXPECT_LT(r.span, r.work) << r;
    EXPECT_GT(r.parallelism(), 10.0) << r;  // 92 leaves of 20 us under 8 levels of spawns
}

// Matrix product over rows with parallel_for: parallelism grows with the size.
crew::workspan_report matmul(crew::pool& p, int n) {
    std::vector<double> a(static_cast<std::size_t>(n) * n, 1.0), b(a), c(a.size(), 0.0);
    crew::workspan ws(cpu_clock);
    ws.run(p, [&] {
        crew::parallel_for(0, n, [&](int i) {
            for (int j = 0; j < n; ++j) {
                double s = 0;
                for (int k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
                c[i * n + j] = s;
            }
        });
    });
    for (double x : c) EXPECT_EQ(x, static_cast<double>(n));
    return ws.report();
}

TEST_P(workspan_suite, matmul_parallelism_grows_with_n) {
    crew_test::watchdog dog(120s);
    crew::workspan_report small, large;
    for (int attempt = 0; attempt < attempts; ++attempt) {
        small = matmul(pool(), 16);
        large = matmul(pool(), 128);
        if (large.parallelism() > small.parallelism()) break;
    }
    EXPECT_LT(large.span, large.work) << large;
    EXPECT_GT(large.parallelism(), small.parallelism()) << small << large;
}

// Nested regions: the inner one counts in its own workspan and in the enclosing region.
TEST_P(workspan_suite, nested_regions_fold_into_the_outer_one) {
    crew_test::watchdog dog(120s);
    crew::workspan_report o, i;
    for (int attempt = 0; attempt < attempts; ++attempt) {  // as measure_until
        crew::workspan outer(zero_cost), inner(zero_cost);
        pool().run([&] {
            auto region = outer.measure();
            spin_for(300us);
            {
                auto nested = inner.measure();
                crew::join([] { spin_for(500us); }, [] { spin_for(500us); });
            }
            spin_for(300us);
        });
        o = outer.report();
        i = inner.report();
        if (us(i.span) <= 500 * 1.5) break;
    }
    EXPECT_GE(us(i.work), 1000 * 0.97) << i;
    EXPECT_GE(us(i.span), 500 * 0.97) << i;
    EXPECT_LE(us(i.span), 500 * 1.5) << i;
    EXPECT_GE(o.work, i.work + 600us) << o;
    EXPECT_GE(o.span, i.span + 600us) << o;
    EXPECT_EQ(o.forks, 1u);
    EXPECT_EQ(o.regions, 1u);
}

// An exception from a branch reaches the caller; the region still folds, and the profiler is off
// again afterwards.
TEST_P(workspan_suite, exceptions_inside_a_region) {
    crew_test::watchdog dog(120s);
    crew::workspan ws(zero_cost);
    EXPECT_THROW(ws.run(pool(),
                        [] {
                            crew::join([] { spin_for(200us); }, [] { throw std::runtime_error("boom"); });
                        }),
                 std::runtime_error);
    EXPECT_THROW(ws.run(pool(),
                        [] {
                            crew::task_group g;
                            g.run([] { throw std::logic_error("child"); });
                            g.run([] { spin_for(200us); });
                            g.wait();
                        }),
                 std::logic_error);
    const crew::workspan_report r = ws.report();
    EXPECT_EQ(r.regions, 2u);
    EXPECT_GE(us(r.work), 200 * 0.97) << r;
    EXPECT_FALSE(crew::detail::workspan_active());
    pool().run([] { EXPECT_FALSE(crew::detail::workspan_active()); });
    // Off: nothing more is counted.
    crew::join([] {}, [] {});
    EXPECT_EQ(ws.report().forks, r.forks);
}

// The word the fork points read first (detail/thread_state.hpp): this thread's worker when no
// strand is measured here, else nullptr. Checked on every thread a measured and then an unmeasured
// program ran on: inside measured strands (the thread that opened the region and any thief that
// ran a branch), after the region on the same threads, in a pool nested in a worker, and outside
// every pool.
bool fork_word_right() {
    using namespace crew::detail;
    return fork_worker == (ws_current == nullptr ? current_worker : nullptr);
}
void check_tree(int depth, std::atomic<int>& wrong, std::atomic<int>& measured_with_word, bool measured) {
    if (!fork_word_right()) wrong.fetch_add(1, std::memory_order_relaxed);
    if (measured && crew::detail::fork_worker != nullptr) measured_with_word.fetch_add(1, std::memory_order_relaxed);
    if (depth == 0) {
        spin_for(20us);
        return;
    }
    crew::join([&] { check_tree(depth - 1, wrong, measured_with_word, measured); },
               [&] { check_tree(depth - 1, wrong, measured_with_word, measured); });
    if (!fork_word_right()) wrong.fetch_add(1, std::memory_order_relaxed);
}

TEST_P(workspan_suite, fork_word_follows_worker_and_strand) {
    crew_test::watchdog dog(120s);
    using crew::detail::current_worker;
    using crew::detail::fork_worker;
    EXPECT_EQ(fork_worker, nullptr);  // outside every pool
    std::atomic<int> wrong{0}, measured_with_word{0};
    crew::workspan ws(zero_cost);
    pool().run([&] {
        EXPECT_NE(fork_worker, nullptr);
        EXPECT_EQ(fork_worker, current_worker);
        {
            auto region = ws.measure();
            EXPECT_EQ(fork_worker, nullptr);
            check_tree(6, wrong, measured_with_word, true);
            crew::fork_join([&] { check_tree(3, wrong, measured_with_word, true); },
                            [&] { check_tree(3, wrong, measured_with_word, true); },
                            [&] { check_tree(3, wrong, measured_with_word, true); });
            crew::task_group g;
            for (int i = 0; i < 4; ++i) g.run([&] { check_tree(3, wrong, measured_with_word, true); });
            g.wait();
            EXPECT_EQ(fork_worker, nullptr);
        }
        // The same thread, unmeasured: the word is the worker again, and joins are not counted.
        EXPECT_EQ(fork_worker, current_worker);
        const std::uint64_t forks = ws.report().forks;
        check_tree(6, wrong, measured_with_word, false);
        crew::task_group g;
        for (int i = 0; i < 4; ++i) g.run([&] { check_tree(3, wrong, measured_with_word, false); });
        g.wait();
        EXPECT_EQ(ws.report().forks, forks);
        // A pool nested in a worker: its worker's word there, this worker's word back here.
        crew::detail::worker* const here = current_worker;
        crew::pool inner(2);
        inner.run([&] {
            EXPECT_NE(current_worker, here);
            EXPECT_EQ(fork_worker, current_worker);
            check_tree(4, wrong, measured_with_word, false);
        });
        EXPECT_EQ(current_worker, here);
        EXPECT_EQ(fork_worker, here);
    });
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(measured_with_word.load(), 0);
    EXPECT_EQ(fork_worker, nullptr);
    // Measured outside every pool: no word on this thread; the joins run on the default pool.
    {
        auto region = ws.measure();
        EXPECT_EQ(fork_worker, nullptr);
        check_tree(4, wrong, measured_with_word, true);
    }
    EXPECT_EQ(fork_worker, nullptr);
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(measured_with_word.load(), 0);
}

// A group waited for by its destructor only still folds its children into the region.
TEST_P(workspan_suite, group_destroyed_without_wait) {
    crew_test::watchdog dog(120s);
    crew::workspan ws(zero_cost);
    ws.run(pool(), [] {
        crew::task_group g;
        g.run([] { spin_for(400us); });
    });
    const crew::workspan_report r = ws.report();
    EXPECT_GE(us(r.work), 400 * 0.97) << r;
    EXPECT_FALSE(crew::detail::workspan_groups_pending());
}

// The same program measures the same on 1 and on 2 workers (within tolerance): the measure does
// not depend on how many workers ran it.
TEST(workspan, same_on_one_and_two_workers) {
    crew_test::watchdog dog(120s);
    crew::pool one(1), two(2);
    crew::workspan_report ra, rb;
    const auto near = [](ns x, ns y) { return std::abs(us(x) - us(y)) <= 0.3 * us(x); };
    for (int attempt = 0; attempt < attempts; ++attempt) {  // as measure_until
        crew::workspan a(zero_cost), b(zero_cost);
        a.run(one, [] { imbalanced(0, 32, 31, 100us, 1500us); });
        b.run(two, [] { imbalanced(0, 32, 31, 100us, 1500us); });
        ra = a.report();
        rb = b.report();
        if (near(ra.work, rb.work) && near(ra.span, rb.span)) break;
    }
    EXPECT_NEAR(us(ra.work), us(rb.work), 0.3 * us(ra.work)) << ra << rb;
    EXPECT_NEAR(us(ra.span), us(rb.span), 0.3 * us(ra.span)) << ra << rb;
    EXPECT_EQ(ra.forks, rb.forks);
}

// Measured from outside every pool: joins go to the default pool, and are measured there.
TEST(workspan, region_outside_every_pool) {
    crew_test::watchdog dog(120s);
    const crew::workspan_report r = measure_until(
        [] {
            crew::workspan ws(zero_cost);
            {
                auto region = ws.measure();
                crew::join([] { spin_for(300us); }, [] { spin_for(600us); });
            }
            return ws.report();
        },
        [](const crew::workspan_report& m) { return us(m.span) <= 600 * 1.5; });
    EXPECT_GE(us(r.work), 900 * 0.97) << r;
    EXPECT_GE(us(r.span), 600 * 0.97) << r;
    EXPECT_LE(us(r.span), 600 * 1.5) << r;
}

// The wall clock: a sleeping strand counts (the CPU clock would not see it). Lower bounds only: a
// loaded machine makes wall-clock segments longer.
TEST(workspan, wall_clock_counts_blocking) {
    crew_test::watchdog dog(120s);
    crew::pool p(2);
    crew::workspan wall(crew::workspan_options{0ns, crew::workspan_clock::wall}), cpu(zero_cost);
    auto program = [] {
        crew::join([] { std::this_thread::sleep_for(2ms); }, [] { std::this_thread::sleep_for(4ms); });
    };
    wall.run(p, program);
    cpu.run(p, program);
    EXPECT_GE(wall.report().work, 6ms) << wall.report();
    EXPECT_GE(wall.report().span, 4ms) << wall.report();
    EXPECT_LT(cpu.report().work, 3ms) << cpu.report();
}

TEST(workspan, report_prints_the_bounds) {
    crew::workspan_report r;
    r.work = 1000us;
    r.span = 10us;
    r.burdened_span = 20us;
    EXPECT_DOUBLE_EQ(r.parallelism(), 100.0);
    EXPECT_DOUBLE_EQ(r.burdened_parallelism(), 50.0);
    EXPECT_EQ(r.greedy_bound(4), 260us);
    EXPECT_EQ(r.greedy_bound(0), 1010us);
    EXPECT_EQ(r.burdened_bound(100), 30us);
    std::ostringstream os;
    os << r;
    EXPECT_NE(os.str().find("parallelism"), std::string::npos);
    EXPECT_NE(os.str().find("    256"), std::string::npos);
    EXPECT_DOUBLE_EQ(crew::workspan_report{}.parallelism(), 0.0);
}

TEST(workspan, steal_cost_is_calibrated) {
    crew::workspan ws(cpu_clock);
    const crew::workspan_report r = ws.report();
    EXPECT_GT(r.steal_cost, 0ns);
    EXPECT_LT(r.steal_cost, 50ms);
    EXPECT_GE(r.strand_overhead, 0ns);
    EXPECT_LT(r.strand_overhead, 10us);
}

CREW_ALL_POOL_SIZES(workspan_suite);

}  // namespace
