// crew::pool::metrics(): counters, times, the schedule-latency histogram, deltas, JSON,
// Prometheus, and diagnose() -- including the issue's two stories (one busy worker vs all busy).
#include <crew/crew.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;

namespace {

constexpr bool metrics_on = crew::detail::metrics_enabled;

#define REQUIRE_METRICS()                                                                  \
    do {                                                                                   \
        if (!metrics_on) GTEST_SKIP() << "built with CREW_METRICS=OFF (metrics_compiled_out covers it)"; \
    } while (0)

long fib(int n) {
    if (n < 2) return n;
    auto [a, b] = crew::join([&] { return fib(n - 1); }, [&] { return fib(n - 2); });
    return a + b;
}

std::uint64_t joins_in_fib(int n) { return n < 2 ? 0 : 1 + joins_in_fib(n - 1) + joins_in_fib(n - 2); }

// Wait until every worker of `p` is asleep (an idle pool), at most 10 s.
bool wait_all_parked(crew::pool& p) {
    for (auto end = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < end;) {
        if (p.metrics().parked == p.size()) return true;
        std::this_thread::sleep_for(1ms);
    }
    return false;
}

// The issue's stories: `long_tasks` of the pool's n children take `t` (a task that blocks in user
// code is busy for the worker), the others return at once.
crew::pool_metrics story(crew::pool& p, std::size_t long_tasks, std::chrono::milliseconds t) {
    EXPECT_TRUE(wait_all_parked(p));
    crew::pool_metrics before = p.metrics();
    p.run([&] {
        crew::task_group g;
        for (std::size_t i = 0; i < p.size(); ++i)
            g.run([&, i] {
                if (i < long_tasks) std::this_thread::sleep_for(t);
            });
        g.wait();
    });
    return p.metrics() - before;
}

std::string fractions(const crew::pool_metrics& d) {
    std::string s;
    for (const auto& w : d.workers) s += std::to_string(static_cast<int>(w.busy_fraction() * 100)) + "% ";
    return s;
}

class metrics_suite : public crew_test::pool_test {};

TEST_P(metrics_suite, one_busy_worker_and_all_busy_tell_different_stories) {
    REQUIRE_METRICS();
    crew_test::watchdog dog(120s);
    crew::pool& p = pool();
    const auto t = 150ms;
    crew::pool_metrics lopsided = story(p, 1, t);
    crew::pool_metrics balanced = story(p, p.size(), t);
    const std::string why_lopsided = crew::diagnose(lopsided), why_balanced = crew::diagnose(balanced);
    std::printf("one long task:  busy %s\n%s", fractions(lopsided).c_str(), why_lopsided.c_str());
    std::printf("all long tasks: busy %s\n%s", fractions(balanced).c_str(), why_balanced.c_str());

    // Every worker lived through the whole interval: its three times add up to it.
    for (const auto* d : {&lopsided, &balanced})
        for (const auto& w : d->workers) {
            const auto lived = w.busy_time + w.search_time + w.park_time;
            EXPECT_LE(lived, d->interval + 1ms);
            EXPECT_GE(lived, d->interval * 9 / 10);
        }
    double lo_max = 0, lo_min = 1, ba_min = 1;
    for (const auto& w : lopsided.workers) {
        lo_max = std::max(lo_max, w.busy_fraction());
        lo_min = std::min(lo_min, w.busy_fraction());
    }
    for (const auto& w : balanced.workers) ba_min = std::min(ba_min, w.busy_fraction());
    EXPECT_GT(lo_max, 0.8);
    EXPECT_GT(ba_min, 0.5) << "every worker ran one of the long tasks";
    EXPECT_EQ(why_balanced.find("not being split"), std::string::npos);
    if (p.size() == 1) {
        EXPECT_EQ(why_lopsided.find("not being split"), std::string::npos);  // one worker: nothing to split to
    } else {
        EXPECT_LT(lo_min, 0.1) << "the other workers had nothing to run";
        EXPECT_NE(why_lopsided.find("was busy"), std::string::npos);
        EXPECT_NE(why_lopsided.find("the work is not being split or not stolen"), std::string::npos);
        EXPECT_NE(why_lopsided.find("docs/OBSERVABILITY.md"), std::string::npos);
    }
}

TEST_P(metrics_suite, idle_pool_counters_stop_and_park_time_grows) {
    REQUIRE_METRICS();
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    EXPECT_EQ(p.run([] { return fib(18); }), 2584);
    ASSERT_TRUE(wait_all_parked(p));
    crew::pool_metrics a = p.metrics();
    std::this_thread::sleep_for(100ms);
    crew::pool_metrics d = p.metrics() - a;
    const crew::worker_metrics t = d.total();
    EXPECT_EQ(t.failed_steals, 0u);
    EXPECT_EQ(t.searches, 0u);
    EXPECT_EQ(t.tasks_run, 0u);
    EXPECT_EQ(d.parked, p.size());
    for (const auto& w : d.workers) {
        EXPECT_GE(w.park_time, 90ms);
        EXPECT_EQ(w.busy_time, 0ns);
    }
    EXPECT_NE(crew::diagnose(d).find("the pool was idle"), std::string::npos) << crew::diagnose(d);
}

TEST_P(metrics_suite, join_inline_half_and_every_task_counted_once) {
    REQUIRE_METRICS();
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    crew::pool_metrics a = p.metrics();
    EXPECT_EQ(p.run([] { return fib(20); }), 6765);
    crew::pool_metrics d = p.metrics() - a;
    // The run() job, and the second half of every join (inline or stolen), each exactly once.
    EXPECT_EQ(d.total().tasks_run, 1 + joins_in_fib(20));
    EXPECT_EQ(d.total().fork_join_tasks_run, d.total().tasks_run);
    EXPECT_EQ(d.total().async_tasks_run, 0u);
    EXPECT_EQ(d.total_spawned, d.total().tasks_run);  // nothing left queued
    EXPECT_EQ(d.total().injector_pops, 1u);
    EXPECT_EQ(d.total().steals, d.total().steal_operations);  // a deque steal takes one task
    EXPECT_EQ(d.total().failed_steals, d.total().failed_steals_empty + d.total().failed_steals_lost);
    EXPECT_GE(d.total().max_deque_depth, 1u);
    if (p.size() == 1) {
        EXPECT_EQ(d.total().steals, 0u);
    }
}

// A skynet-shaped task_group tree (10 children per node, 3 levels): every child counts in tasks_run
// exactly once, whether a thief ran it, the drain popped it, or (private children, docs/DESIGN.md
// "Task groups", session 10) it was taken back privately.
std::uint64_t group_tree(int levels) {
    if (levels == 0) return 1;
    std::atomic<std::uint64_t> sum{0};
    crew::task_group g;
    for (int i = 0; i < 10; ++i) g.run([&] { sum.fetch_add(group_tree(levels - 1), std::memory_order_relaxed); });
    g.wait();
    return sum.load(std::memory_order_relaxed);
}

// A skynet-shaped crew::fork_join tree (10 callables per node, 4 levels). fork_join counts its
// private take-backs with one add per call (docs/DESIGN.md, "fork_join counts once per call"):
// every callable but each node's first (run inline before any take-back, as a join's first half)
// must still count exactly once, taken back privately, popped back after a promotion, or stolen.
std::uint64_t fork_join_tree(int levels) {
    if (levels == 0) return 1;
    std::uint64_t s[10] = {};
    auto f = [&](int i) { s[i] = fork_join_tree(levels - 1); };
    crew::fork_join([&] { f(0); }, [&] { f(1); }, [&] { f(2); }, [&] { f(3); }, [&] { f(4); },
                    [&] { f(5); }, [&] { f(6); }, [&] { f(7); }, [&] { f(8); }, [&] { f(9); });
    std::uint64_t t = 0;
    for (std::uint64_t x : s) t += x;
    return t;
}

TEST_P(metrics_suite, fork_join_callables_counted_once) {
    REQUIRE_METRICS();
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    for (int round = 0; round < 3; ++round) {
        crew::pool_metrics a = p.metrics();
        EXPECT_EQ(p.run([] { return fork_join_tree(4); }), 10000u);
        crew::pool_metrics d = p.metrics() - a;
        // The run() job and 9 forked callables at each of the 1 + 10 + 100 + 1000 nodes.
        EXPECT_EQ(d.total().tasks_run, 1u + 9u * 1111u) << "round " << round;
        EXPECT_EQ(d.total().fork_join_tasks_run, d.total().tasks_run);
    }
}

// The same count when a callable throws: the callables after it are finished by the unwind (and
// count themselves there), the ones before it were taken back privately or not, and each counts
// once. Callable `thrower` of each call throws after its own joins; every position is tried.
TEST_P(metrics_suite, fork_join_callables_counted_once_when_one_throws) {
    REQUIRE_METRICS();
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    crew::pool_metrics a = p.metrics();
    const int caught = p.run([] {
        int n = 0;
        for (int thrower = 0; thrower < 5; ++thrower) {
            auto c = [thrower](int i) {
                return [thrower, i] {
                    if (fib(10) != 55) std::abort();
                    if (i == thrower) throw std::runtime_error("callable");
                };
            };
            try {
                crew::fork_join(c(0), c(1), c(2), c(3), c(4));
            } catch (const std::runtime_error&) {
                ++n;
            }
        }
        return n;
    });
    EXPECT_EQ(caught, 5);
    crew::pool_metrics d = p.metrics() - a;
    // run(), then 5 calls of 4 forked callables, each of the 5 callables running fib(10)'s joins.
    EXPECT_EQ(d.total().tasks_run, 1u + 5u * (4u + 5u * joins_in_fib(10)));
}

TEST_P(metrics_suite, task_group_children_counted_once) {
    REQUIRE_METRICS();
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    for (int round = 0; round < 3; ++round) {
        crew::pool_metrics a = p.metrics();
        EXPECT_EQ(p.run([] { return group_tree(3); }), 1000u);
        crew::pool_metrics d = p.metrics() - a;
        // The run() job and 10 + 100 + 1000 children.
        EXPECT_EQ(d.total().tasks_run, 1u + 1110u) << "round " << round;
        EXPECT_EQ(d.total().async_tasks_run, 0u);
    }
}

// One group's children, waited for in the task that ran them: each counts in tasks_run exactly once,
// whichever way wait()'s drain gets it (popped from the deque today; taken back from the private
// fork array under the private-children protocol, where it counts through the array's depth word
// as a join's inline half: docs/DESIGN.md, "Task groups"), and on a pool of one nothing but the
// run() job goes through the injector.
TEST_P(metrics_suite, children_waited_for_in_their_task_counted_once) {
    REQUIRE_METRICS();
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    for (int n : {1, 9, 100, 1000}) {
        std::atomic<int> ran{0};
        crew::pool_metrics a = p.metrics();
        p.run([&] {
            crew::task_group g;
            for (int i = 0; i < n; ++i) g.run([&] { ran.fetch_add(1, std::memory_order_relaxed); });
            g.wait();
        });
        crew::pool_metrics d = p.metrics() - a;
        EXPECT_EQ(ran.load(), n);
        EXPECT_EQ(d.total().tasks_run, 1u + static_cast<std::uint64_t>(n)) << n << " children";
        EXPECT_EQ(d.total_spawned, d.total().tasks_run) << "nothing left queued";
        if (p.size() == 1) {
            EXPECT_EQ(d.total().injector_pops, 1u);  // the run() job; no child went anywhere else
        }
    }
}

// wait()'s drain counts the tasks it runs once, at its end (worker::run_related_work): exact once
// it returns, whatever the drain ran -- another group's children pushed by the same task, children
// that run and wait for groups of their own (drains nested in the drain), children that join.
TEST_P(metrics_suite, a_drain_counts_every_task_it_ran_once) {
    REQUIRE_METRICS();
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    for (int n : {1, 9, 100}) {
        std::atomic<long> sum{0};
        crew::pool_metrics a = p.metrics();
        p.run([&] {
            crew::task_group other;
            crew::task_group g;
            for (int i = 0; i < n; ++i) other.run([&] { sum.fetch_add(1, std::memory_order_relaxed); });
            for (int i = 0; i < n; ++i) {
                g.run([&] {
                    crew::task_group inner;  // a drain inside the drain
                    for (int k = 0; k < 3; ++k) inner.run([&] { sum.fetch_add(fib(10), std::memory_order_relaxed); });
                    inner.wait();
                });
            }
            g.wait();  // on a pool of one: runs other's children too (pushed by this task, above its floor)
            other.wait();
        });
        crew::pool_metrics d = p.metrics() - a;
        EXPECT_EQ(sum.load(), n + 3L * n * fib(10));
        // The run() job, n + n + 3n children, and the joins of 3n fib(10) calls.
        const std::uint64_t expected = 1 + 5 * static_cast<std::uint64_t>(n) + 3 * n * joins_in_fib(10);
        EXPECT_EQ(d.total().tasks_run, expected) << n << " children per group";
        EXPECT_EQ(d.total().async_tasks_run, 0u);
    }
}

// Children a task runs and does not wait for (under the private-children protocol: published at the
// task boundary) each still count once: run from one task, waited for from outside the pool.
TEST_P(metrics_suite, children_left_at_the_task_boundary_counted_once) {
    REQUIRE_METRICS();
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    for (int n : {1, 9, 100}) {
        std::atomic<int> ran{0};
        crew::task_group g;
        crew::pool_metrics a = p.metrics();
        p.run([&] {
            for (int i = 0; i < n; ++i) g.run([&] { ran.fetch_add(1, std::memory_order_relaxed); });
        });
        g.wait();
        crew::pool_metrics d = p.metrics() - a;
        EXPECT_EQ(ran.load(), n);
        EXPECT_EQ(d.total().tasks_run, 1u + static_cast<std::uint64_t>(n)) << n << " children";
    }
}

TEST_P(metrics_suite, a_stolen_half_is_counted_as_a_steal) {
    REQUIRE_METRICS();
    if (workers() == 1) GTEST_SKIP() << "no thief in a one-worker pool";
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    // g is stolen when the other workers wake within f's 50 ms; under a loaded machine they may
    // not, so try a few times and check the counters of every attempt where it was.
    int stolen = 0;
    for (int attempt = 0; attempt < 5 && stolen == 0; ++attempt) {
        crew::pool_metrics a = p.metrics();
        std::atomic<int> where_f{-1}, where_g{-1};
        p.run([&] {
            crew::join([&] { where_f = crew::this_worker_index(); std::this_thread::sleep_for(50ms); },
                       [&] { where_g = crew::this_worker_index(); });
        });
        crew::pool_metrics d = p.metrics() - a;
        EXPECT_EQ(d.total().steals, d.total().steal_operations);
        if (where_g == where_f) continue;
        ++stolen;
        EXPECT_GE(d.workers[static_cast<std::size_t>(where_g.load())].steals, 1u);
    }
    EXPECT_EQ(stolen, 1) << "g was never stolen in 5 tries";
}

TEST_P(metrics_suite, injected_tasks_get_a_schedule_latency) {
    REQUIRE_METRICS();
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    crew::pool_metrics a = p.metrics();
    const int n = static_cast<int>(crew_test::scaled(200));
    std::vector<crew::future<int>> fs;
    for (int i = 0; i < n; ++i) fs.push_back(p.submit([i] { return i; }));
    for (int i = 0; i < n; ++i) EXPECT_EQ(fs[static_cast<std::size_t>(i)].get(), i);
    crew::pool_metrics d = p.metrics() - a;
    EXPECT_EQ(d.total().injector_pops, static_cast<std::uint64_t>(n));
    EXPECT_EQ(d.total().schedule_latency.count(), static_cast<std::uint64_t>(n));
    EXPECT_GT(d.total().schedule_latency.sum, 0ns);
}

TEST_P(metrics_suite, a_task_queued_behind_busy_workers_shows_its_wait) {
    REQUIRE_METRICS();
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    std::atomic<bool> release{false};
    std::atomic<std::size_t> blocked{0};
    for (std::size_t i = 0; i < p.size(); ++i)
        p.spawn([&] {
            ++blocked;
            while (!release) std::this_thread::sleep_for(1ms);
            --blocked;
        });
    while (blocked != p.size()) std::this_thread::sleep_for(1ms);
    crew::pool_metrics a = p.metrics();
    auto f = p.submit([] { return 1; });  // waits in the injector: every worker is blocked
    std::this_thread::sleep_for(30ms);
    EXPECT_EQ(p.metrics().injector_length, 1u);
    release = true;
    EXPECT_EQ(f.get(), 1);
    while (blocked != 0) std::this_thread::sleep_for(1ms);  // the blockers read `release` until here
    crew::pool_metrics d = p.metrics() - a;
    ASSERT_EQ(d.total().schedule_latency.count(), 1u);
    EXPECT_GE(d.total().schedule_latency.quantile_upper_bound(1.0), 30ms);
    EXPECT_GE(d.total().schedule_latency.sum, 30ms);
    EXPECT_NE(crew::diagnose(d).find("waited up to"), std::string::npos) << crew::diagnose(d);
}

TEST_P(metrics_suite, snapshots_taken_while_workers_run_are_consistent) {
    REQUIRE_METRICS();
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    std::atomic<bool> done{false};
    std::thread reader([&] {
        crew::pool_metrics prev = p.metrics();
        while (!done) {
            crew::pool_metrics now = p.metrics();
            for (std::size_t i = 0; i < now.workers.size(); ++i) {
                const auto& w = now.workers[i];
                const auto& v = prev.workers[i];
                EXPECT_GE(w.busy_time, v.busy_time);
                EXPECT_GE(w.search_time, v.search_time);
                EXPECT_GE(w.park_time, v.park_time);
                EXPECT_LE(w.busy_time + w.search_time + w.park_time, now.interval);
                EXPECT_GE(w.tasks_run, v.tasks_run);
            }
            (void)(now - prev);
            prev = std::move(now);
        }
    });
    for (int r = 0; r < 5; ++r) EXPECT_EQ(p.run([] { return fib(20); }), 6765);
    done = true;
    reader.join();
}

CREW_ALL_POOL_SIZES(metrics_suite);

// ---- record_schedule_latency: the log2 buckets ----

TEST(metrics, latency_buckets_are_log2_with_inclusive_upper_bounds) {
    REQUIRE_METRICS();
    crew::pool p(1);
    crew::pool_metrics a, b;
    p.run([&] {  // the snapshots inside: the run() job's own latency is recorded before `a`
        a = p.metrics();
        crew::detail::worker& w = *crew::detail::current_worker;
        for (long v : {0L, 1L, 2L, 3L, 4L, 5L, 1024L, 1025L, -7L}) crew::detail::record_schedule_latency(w, std::chrono::nanoseconds(v));
        crew::detail::record_schedule_latency(w, std::chrono::hours(1000));
        b = p.metrics();
    });
    const crew::latency_histogram h = (b - a).total().schedule_latency;
    EXPECT_EQ(h.buckets[0], 3u);  // 0, 1 and the negative one (counted as 0)
    EXPECT_EQ(h.buckets[1], 1u);  // 2
    EXPECT_EQ(h.buckets[2], 2u);  // 3, 4
    EXPECT_EQ(h.buckets[3], 1u);  // 5
    EXPECT_EQ(h.buckets[10], 1u); // 1024 = 2^10
    EXPECT_EQ(h.buckets[11], 1u); // 1025
    EXPECT_EQ(h.buckets[crew::latency_histogram::bucket_count - 1], 1u);
    EXPECT_EQ(h.count(), 10u);
    EXPECT_EQ(h.quantile_upper_bound(0.0), 1ns);
    EXPECT_EQ(h.quantile_upper_bound(0.5), 4ns);
}

// ---- delta arithmetic on made-up snapshots ----

crew::pool_metrics made_up(std::uint64_t base, std::chrono::steady_clock::time_point at) {
    crew::pool_metrics m;
    m.taken_at = at;
    m.interval = std::chrono::milliseconds(base);
    m.injector_length = base;
    m.parked = 1;
    m.total_spawned = 10 * base;
    for (int i = 0; i < 2; ++i) {
        crew::worker_metrics w;
        w.tasks_run = base * (i + 1);
        w.steals = base;
        w.failed_steals_lost = base;
        w.busy_time = std::chrono::milliseconds(base);
        w.deque_depth = base;
        w.max_deque_depth = base + static_cast<std::uint64_t>(i);
        w.schedule_latency.buckets[3] = base;
        w.schedule_latency.sum = std::chrono::nanoseconds(base);
        m.workers.push_back(w);
    }
    return m;
}

TEST(metrics, delta_subtracts_counters_and_keeps_the_later_now_values) {
    const auto t0 = std::chrono::steady_clock::now();
    crew::pool_metrics early = made_up(5, t0), late = made_up(8, t0 + 3ms);
    late.workers[1].steals = 2;  // went "down" (a different pool, say): clamps at zero
    crew::pool_metrics d = late - early;
    EXPECT_EQ(d.interval, 3ms);
    EXPECT_EQ(d.taken_at, late.taken_at);
    EXPECT_EQ(d.workers[0].tasks_run, 3u);
    EXPECT_EQ(d.workers[1].tasks_run, 6u);
    EXPECT_EQ(d.workers[0].steals, 3u);
    EXPECT_EQ(d.workers[1].steals, 0u);
    EXPECT_EQ(d.workers[0].busy_time, 3ms);
    EXPECT_EQ(d.workers[0].deque_depth, 8u);      // now: the later one
    EXPECT_EQ(d.workers[1].max_deque_depth, 9u);  // high-water mark: the later one
    EXPECT_EQ(d.workers[0].schedule_latency.buckets[3], 3u);
    EXPECT_EQ(d.workers[0].schedule_latency.sum, 3ns);
    EXPECT_EQ(d.injector_length, 8u);
    EXPECT_EQ(d.total_spawned, 30u);
    const crew::worker_metrics t = d.total();
    EXPECT_EQ(t.tasks_run, 9u);
    EXPECT_EQ(t.deque_depth, 16u);
    EXPECT_EQ(t.max_deque_depth, 9u);  // the largest, not a sum
    EXPECT_EQ(t.schedule_latency.count(), 6u);

    EXPECT_THROW((void)(early - late), std::invalid_argument);  // taken the other way round
    crew::pool_metrics other = made_up(9, t0 + 4ms);
    other.workers.pop_back();
    EXPECT_THROW((void)(other - early), std::invalid_argument);  // another pool
}

// ---- JSON: a tiny strict checker ----

struct json_checker {
    const std::string& s;
    std::size_t i = 0;
    void ws() {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
    }
    bool lit(const char* w) {
        std::size_t n = std::char_traits<char>::length(w);
        if (s.compare(i, n, w) != 0) return false;
        i += n;
        return true;
    }
    bool string() {
        if (i >= s.size() || s[i] != '"') return false;
        for (++i; i < s.size(); ++i) {
            if (s[i] == '\\') ++i;
            else if (s[i] == '"') return ++i, true;
            else if (static_cast<unsigned char>(s[i]) < 0x20) return false;
        }
        return false;
    }
    bool number() {
        std::size_t start = i;
        if (i < s.size() && s[i] == '-') ++i;
        while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == 'e' || s[i] == 'E' || s[i] == '+' || s[i] == '-')) ++i;
        return i > start;
    }
    bool value() {
        ws();
        if (i >= s.size()) return false;
        bool ok;
        if (s[i] == '{') ok = container('}', true);
        else if (s[i] == '[') ok = container(']', false);
        else if (s[i] == '"') ok = string();
        else ok = lit("null") || lit("true") || lit("false") || number();
        ws();
        return ok;
    }
    bool container(char close, bool object) {
        ++i;
        ws();
        if (i < s.size() && s[i] == close) return ++i, true;
        for (;;) {
            if (object) {
                ws();
                if (!string()) return false;
                ws();
                if (i >= s.size() || s[i++] != ':') return false;
            }
            if (!value()) return false;
            if (i < s.size() && s[i] == ',') { ++i; continue; }
            if (i < s.size() && s[i] == close) return ++i, true;
            return false;
        }
    }
    bool document() { return value() && i == s.size(); }
};

TEST(metrics, json_is_well_formed) {
    crew::pool p(2);
    p.run([] { return fib(15); });
    const std::string j = crew::to_json(p.metrics());
    EXPECT_TRUE(json_checker{j}.document()) << j;
    const crew::pool_metrics first = p.metrics();
    const crew::pool_metrics second = p.metrics();  // named: the operands' order is unspecified
    const std::string jd = crew::to_json(second - first);
    EXPECT_TRUE(json_checker{jd}.document()) << jd;
    EXPECT_NE(j.find("\"busy_time_ns\":"), std::string::npos);
    EXPECT_NE(j.find("\"workers\":[{\"worker\":0,"), std::string::npos);
    EXPECT_NE(j.find("\"schedule_latency\":{\"count\":"), std::string::npos);
    std::string broken = j.substr(0, j.size() - 1);
    EXPECT_FALSE(json_checker{broken}.document());  // the checker has teeth
}

// ---- Prometheus text format ----

TEST(metrics, prometheus_lines_are_well_formed) {
    crew::pool p(2);
    p.run([] { return fib(15); });
    auto f = p.submit([] { return 1; });
    f.get();
    const std::string text = crew::to_prometheus(p.metrics(), "app_crew");
    const std::regex help(R"re(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) \S.*)re");
    const std::regex type(R"re(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram))re");
    const std::regex sample(R"re(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{worker="[0-9]+"(,le="([0-9.e+-]+|\+Inf)")?\})? ([0-9.e+-]+))re");
    std::istringstream in(text);
    std::string line, family;
    std::map<std::string, std::string> types;
    std::map<std::string, double> last_bucket;
    std::size_t samples = 0;
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_match(line, m, help)) {
            family = m[1];
            EXPECT_EQ(family.rfind("app_crew_", 0), 0u) << line;
        } else if (std::regex_match(line, m, type)) {
            EXPECT_EQ(m[1], family) << "TYPE follows its HELP: " << line;
            EXPECT_TRUE(types.emplace(m[1], m[2]).second) << "one TYPE per family: " << line;
        } else if (std::regex_match(line, m, sample)) {
            ++samples;
            const std::string name = m[1];
            const std::string kind = types[family];
            if (kind == "histogram") {
                EXPECT_EQ(name.rfind(family, 0), 0u) << line;
                if (m[3].matched) {
                    const double v = std::stod(m[5]);
                    const std::string key = m[2];
                    const std::string worker = key.substr(0, key.find(','));
                    EXPECT_GE(v, last_bucket[worker]) << "buckets are cumulative: " << line;
                    last_bucket[worker] = v;
                }
            } else {
                EXPECT_EQ(name, family) << line;
                if (kind == "counter") {
                    EXPECT_EQ(name.substr(name.size() - 6), "_total") << line;
                }
            }
        } else {
            ADD_FAILURE() << "not a Prometheus line: '" << line << "'";
        }
    }
    EXPECT_GT(samples, 50u);
    EXPECT_EQ(types["app_crew_schedule_latency_seconds"], "histogram");
    EXPECT_EQ(types["app_crew_busy_seconds_total"], "counter");
    EXPECT_EQ(types["app_crew_deque_depth"], "gauge");
    EXPECT_NE(text.find("app_crew_schedule_latency_seconds_bucket{worker=\"1\",le=\"+Inf\"}"), std::string::npos);
    EXPECT_NE(text.find("app_crew_schedule_latency_seconds_count{worker=\"0\"}"), std::string::npos);
    EXPECT_NE(text.find("\napp_crew_injector_length 0\n"), std::string::npos);
    EXPECT_NE(crew::to_prometheus(p.metrics(), "").find("crew_tasks_run_total{worker=\"0\"}"), std::string::npos);
    EXPECT_THROW((void)crew::to_prometheus(p.metrics(), "9bad"), std::invalid_argument);
    EXPECT_THROW((void)crew::to_prometheus(p.metrics(), "has space"), std::invalid_argument);
}

// ---- diagnose() on made-up deltas ----

crew::pool_metrics two_workers(std::chrono::milliseconds busy0, std::chrono::milliseconds busy1, std::chrono::milliseconds interval) {
    crew::pool_metrics d;
    d.interval = interval;
    for (auto b : {busy0, busy1}) {
        crew::worker_metrics w;
        w.tasks_run = 100;
        w.busy_time = b;
        w.park_time = interval - b;
        d.workers.push_back(w);
    }
    return d;
}

TEST(metrics, diagnose_names_what_stands_out) {
    const std::string imbalanced = crew::diagnose(two_workers(990ms, 20ms, 1000ms));
    EXPECT_NE(imbalanced.find("worker 0 was busy 99 % of the interval, worker 1 2 %: the work is not being split or not stolen"),
              std::string::npos) << imbalanced;
    EXPECT_EQ(crew::diagnose(two_workers(900ms, 850ms, 1000ms)).rfind("no findings", 0), 0u);
    EXPECT_NE(crew::diagnose(two_workers(10ms, 0ms, 1000ms)).find("the pool was idle"), std::string::npos);

    crew::pool_metrics contended = two_workers(500ms, 500ms, 1000ms);
    contended.workers[1].failed_steals_lost = 50000;
    contended.workers[1].steal_operations = 10;
    EXPECT_NE(crew::diagnose(contended).find("lost a race"), std::string::npos);

    crew::pool_metrics searching = two_workers(100ms, 100ms, 1000ms);
    for (auto& w : searching.workers) {
        w.search_time = 800ms;
        w.park_time = 100ms;
        w.steal_operations = 5;
    }
    EXPECT_NE(crew::diagnose(searching).find("more time looking for work"), std::string::npos) << crew::diagnose(searching);

    crew::pool_metrics none;
    EXPECT_EQ(crew::diagnose(none).rfind("no findings", 0), 0u);
    crew::pool_metrics empty_interval = two_workers(0ms, 0ms, 0ms);
    EXPECT_NE(crew::diagnose(empty_interval).find("no time was recorded"), std::string::npos);
}

TEST(metrics, metrics_compiled_out) {
    if (metrics_on) GTEST_SKIP() << "built with CREW_METRICS=ON (the other tests cover it)";
    crew::pool p(2);
    p.run([] { return fib(15); });
    crew::pool_metrics m = p.metrics();
    EXPECT_EQ(m.total().tasks_run, 0u);
    EXPECT_EQ(m.total().busy_time, 0ns);
    EXPECT_NE(crew::diagnose(m).find("CREW_METRICS=OFF"), std::string::npos);
}

}  // namespace
