// crew::task_group: many children, nesting, exceptions, reuse, misuse.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "support/child_probe.hpp"
#include "support/pool_sizes.hpp"
#include "support/throwing_capture.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

class task_group_suite : public crew_test::pool_test {};

// Busy-waits about `d` (a child that keeps its worker, as real work does).
void spin_for(std::chrono::nanoseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) {
    }
}

TEST_P(task_group_suite, a_hundred_thousand_children) {
    crew_test::watchdog dog(120s);
    const long n = crew_test::scaled(100'000);
    std::atomic<long> sum{0};
    pool().run([&] {
        crew::task_group g;
        for (long i = 0; i < n; ++i) g.run([&, i] { sum.fetch_add(i, std::memory_order_relaxed); });
        g.wait();
    });
    EXPECT_EQ(sum.load(), n * (n - 1) / 2);
}

TEST_P(task_group_suite, from_an_outside_thread) {
    crew_test::watchdog dog(60s);
    std::atomic<int> count{0};
    crew::task_group g(pool());
    for (int i = 0; i < 1000; ++i) g.run([&] { count.fetch_add(1); });
    g.wait();
    EXPECT_EQ(count.load(), 1000);
}

TEST_P(task_group_suite, runs_lvalue_callables) {
    crew_test::watchdog dog(60s);
    std::atomic<int> count{0};
    auto child = [&] { count.fetch_add(1); };
    crew::task_group g(pool());
    for (int i = 0; i < 10; ++i) g.run(child);
    g.wait();
    EXPECT_EQ(count.load(), 10);
}

// A callable whose copy throws: run() counts the child before allocating it (new_child), so the
// count must be given back when the copy into the task throws, else wait() never returns.
struct throws_on_copy {
    std::atomic<int>* runs;
    bool armed = true;
    explicit throws_on_copy(std::atomic<int>& r) : runs(&r) {}
    throws_on_copy(const throws_on_copy& o) : runs(o.runs), armed(o.armed) {
        if (armed) throw std::runtime_error("copy refused");
    }
    void operator()() const { runs->fetch_add(1); }
};

TEST_P(task_group_suite, a_callable_whose_copy_throws_is_not_counted) {
    crew_test::watchdog dog(60s);
    std::atomic<int> runs{0};
    int refused = 0;
    throws_on_copy bad(runs);
    auto feed = [&](crew::task_group& g) {  // three refused children, three good ones
        for (int i = 0; i < 3; ++i) {
            try {
                g.run(bad);
            } catch (const std::runtime_error&) {
                ++refused;
            }
            g.run([&] { runs.fetch_add(1); });
        }
        EXPECT_EQ(g.wait(), crew::task_group_status::complete);
    };
    // From outside the pool (run_elsewhere) and from a worker of it (run_here).
    crew::task_group outside(pool());
    feed(outside);
    pool().run([&] {
        crew::task_group g;
        feed(g);
    });
    EXPECT_EQ(refused, 6);
    EXPECT_EQ(runs.load(), 6);  // only the good children ran
}

TEST_P(task_group_suite, children_can_add_children) {
    crew_test::watchdog dog(60s);
    std::atomic<int> count{0};
    crew::task_group g(pool());
    for (int i = 0; i < 100; ++i)
        g.run([&] {
            for (int k = 0; k < 10; ++k) g.run([&] { count.fetch_add(1); });
        });
    g.wait();
    EXPECT_EQ(count.load(), 1000);
}

// The first exception cancels the group (as oneTBB): children that had not started are dropped,
// never run; every child either ran once or was dropped, and the group is reusable afterwards.
TEST_P(task_group_suite, ten_percent_throwing_children_rethrow_at_wait_and_the_group_is_reusable) {
    crew_test::watchdog dog(60s);
    crew::task_group g(pool());
    crew_test::child_tally tally;
    for (int i = 0; i < 1000; ++i)
        g.run([&, i, p = tally.probe()]() mutable {
            p.ran();
            if (i % 10 == 3) throw std::runtime_error("child");
        });
    EXPECT_THROW(g.wait(), std::runtime_error);
    EXPECT_EQ(tally.ran.load() + tally.dropped.load(), 1000);  // none lost, none doubled
    EXPECT_GE(tally.ran.load(), 1);                             // the thrower, at least
    EXPECT_EQ(tally.ran_twice.load(), 0);
    EXPECT_FALSE(g.is_canceling());  // wait() reset it
    std::atomic<int> again{0};
    g.run([&] { again.fetch_add(1); });
    EXPECT_EQ(g.wait(), crew::task_group_status::complete);
    EXPECT_EQ(again.load(), 1);
}

TEST_P(task_group_suite, waiting_from_inside_the_groups_own_task_is_a_usage_error) {
    crew_test::watchdog dog(60s);
    crew::task_group g(pool());
    std::atomic<bool> refused{false};
    g.run([&] {
        try {
            g.wait();
        } catch (const crew::usage_error&) {
            refused.store(true);
        }
    });
    g.wait();
    EXPECT_TRUE(refused.load());
}

TEST_P(task_group_suite, destroying_an_unwaited_group_waits_for_its_children) {
    crew_test::watchdog dog(60s);
    std::atomic<int> count{0};
    {
        crew::task_group g(pool());
        for (int i = 0; i < 100; ++i)
            g.run([&] {
                std::this_thread::sleep_for(50us);
                count.fetch_add(1);
            });
    }
    EXPECT_EQ(count.load(), 100);
}

TEST_P(task_group_suite, nested_groups_recursively) {
    crew_test::watchdog dog(60s);
    struct tree {
        static long count(int depth) {
            if (depth == 0) return 1;
            std::atomic<long> total{0};
            crew::task_group g;
            for (int i = 0; i < 4; ++i) g.run([&] { total.fetch_add(count(depth - 1)); });
            g.wait();
            return total.load();
        }
    };
    EXPECT_EQ(pool().run([] { return tree::count(6); }), 4096);
}

// The unstolen-child fast path (a wait on a worker first runs what its task pushed, counting those
// children privately, then folds them in one RMW): mixed with stolen children, children adding
// children, groups nested in drained children, and an exception from a drained child.
TEST_P(task_group_suite, a_workers_wait_counts_drained_and_stolen_children_alike) {
    crew_test::watchdog dog(120s);
    pool().run([] {
        for (int round = 0; round < 200; ++round) {
            std::atomic<int> ran{0};
            crew::task_group g;
            for (int i = 0; i < 16; ++i)
                g.run([&, i] {
                    if (i % 5 == 0) spin_for(std::chrono::microseconds(i));
                    if (i % 4 == 0) g.run([&] { ++ran; });  // a child adds a child
                    if (i % 7 == 0) {                        // a group nested in a (drained) child
                        crew::task_group inner;
                        for (int k = 0; k < 3; ++k) inner.run([&] { ++ran; });
                        inner.wait();
                    }
                    ++ran;
                });
            EXPECT_EQ(g.wait(), crew::task_group_status::complete);
            EXPECT_EQ(ran.load(), 16 + 4 + 3 * 3);
            g.run([] { throw std::runtime_error("drained"); });
            EXPECT_THROW(g.wait(), std::runtime_error);
        }
    });
}

// Children run() by one task on a worker, waited for by a thread outside the pool (no drain there:
// the worker's deque is not the waiter's) and by a later task on the same worker.
TEST_P(task_group_suite, children_run_by_one_task_are_waited_for_elsewhere) {
    crew_test::watchdog dog(120s);
    crew::pool& p = pool();
    for (int round = 0; round < 100; ++round) {
        std::atomic<int> ran{0};
        crew::task_group g(p);
        p.run([&] {
            for (int i = 0; i < 10; ++i) g.run([&] { ++ran; });
        });
        if (round % 2 == 0) {
            g.wait();
        } else {
            p.run([&] { g.wait(); });
        }
        EXPECT_EQ(ran.load(), 10);
    }
}

// Regression (hardening issue, part B): run() from a producer thread while the owner calls wait()
// in a loop. The old wait() reset the count with a plain store over concurrent increments, so the
// final wait() (after the producer was joined) could return while children still ran, and
// destroying the group then let a child touch freed memory (ASan: heap-use-after-free in
// child_done). Every final wait() must see every child finished.
TEST_P(task_group_suite, final_wait_after_a_concurrent_producer_sees_every_child_done) {
    crew_test::watchdog dog(300s);
    constexpr int children = 20;
    const long cycles = crew_test::scaled(3000);
    long early_returns = 0;
    for (long cycle = 0; cycle < cycles; ++cycle) {
        std::atomic<int> finished{0};
        {
            crew::task_group g(pool());
            std::atomic<bool> produced{false};
            std::thread producer([&] {
                for (int i = 0; i < children; ++i)
                    g.run([&finished] {
                        spin_for(5us);
                        finished.fetch_add(1, std::memory_order_relaxed);
                    });
                produced.store(true, std::memory_order_release);
            });
            while (!produced.load(std::memory_order_acquire)) g.wait();
            producer.join();
            g.wait();
            if (finished.load(std::memory_order_relaxed) != children) ++early_returns;
        }  // the group dies here: no child may still touch it
    }
    EXPECT_EQ(early_returns, 0) << "of " << cycles << " cycles";
}

// A default-constructed group made outside every pool and used inside p.run() sends its children
// to p (the caller's pool), not to the default pool.
TEST_P(task_group_suite, a_default_group_made_outside_runs_its_children_on_the_callers_pool) {
    crew_test::watchdog dog(60s);
    crew::task_group g;  // outside every pool
    std::atomic<int> on_p{0}, elsewhere{0};
    crew::detail::registry* const p = &crew::detail::registry_of(pool());
    pool().run([&] {
        for (int i = 0; i < 100; ++i)
            g.run([&] {
                const bool ours = crew::this_worker_index() >= 0 && &crew::detail::current_registry() == p;
                (ours ? on_p : elsewhere).fetch_add(1);
            });
        g.wait();
    });
    EXPECT_EQ(on_p.load(), 100);
    EXPECT_EQ(elsewhere.load(), 0);
}

// A group bound to pool p, fed from a worker of another pool: the children run on p (run()'s
// path for callers outside the group's pool), and the waiting worker of the other pool helps
// nowhere wrong. Then the same group fed from p's own workers (the direct push).
TEST_P(task_group_suite, a_group_bound_to_a_pool_runs_its_children_there_whoever_calls_run) {
    crew_test::watchdog dog(60s);
    crew::pool other(2);
    crew::detail::registry* const p = &crew::detail::registry_of(pool());
    crew::task_group g(pool());
    std::atomic<int> on_p{0}, elsewhere{0};
    auto child = [&] { (&crew::detail::current_registry() == p ? on_p : elsewhere).fetch_add(1); };
    other.run([&] {
        for (int i = 0; i < 200; ++i) g.run(child);
        g.wait();
    });
    EXPECT_EQ(on_p.load(), 200);
    pool().run([&] {
        for (int i = 0; i < 200; ++i) g.run(child);
        g.wait();
    });
    EXPECT_EQ(on_p.load(), 400);
    EXPECT_EQ(elsewhere.load(), 0);
}

// The recursive shape crew-bench's skynet uses (9 x run, the 10th inline, wait, one group per
// node, groups nested in children): every leaf counted once, at every pool size (a pool of one
// takes its children back without the deque's fence).
std::uint64_t group_skynet(std::uint64_t base, int depth) {
    if (depth == 0) return base;
    std::uint64_t offset = 1;
    for (int i = 1; i < depth; ++i) offset *= 10;
    std::uint64_t sums[10] = {};
    crew::task_group g;
    for (int i = 0; i < 9; ++i) g.run([&sums, i, base, offset, depth] { sums[i] = group_skynet(base + offset * i, depth - 1); });
    sums[9] = group_skynet(base + offset * 9, depth - 1);
    g.wait();
    std::uint64_t total = 0;
    for (std::uint64_t s : sums) total += s;
    return total;
}

TEST_P(task_group_suite, recursive_ten_way_groups_sum_every_leaf_once) {
    crew_test::watchdog dog(60s);
    const int depth = crew_test::scaled(10) >= 10 ? 5 : 4;  // 10^5 leaves (10^4 scaled down)
    std::uint64_t leaves = 1;
    for (int i = 0; i < depth; ++i) leaves *= 10;
    for (int round = 0; round < 2; ++round)
        EXPECT_EQ(pool().run([&] { return group_skynet(0, depth); }), leaves * (leaves - 1) / 2);
}

using crew_test::throws_on_destruction;

// A throwing destructor is the child's exception and so cancels the group: the later children may
// be dropped (their closures still destroyed, their throws dropped); each child ran once or not.
TEST_P(task_group_suite, a_throwing_capture_destructor_is_the_childs_exception) {
    crew_test::watchdog dog(60s);
    crew::task_group g(pool());
    crew_test::child_tally tally;
    for (int i = 0; i < 10; ++i) g.run([p = tally.probe(), t = throws_on_destruction{}]() mutable { p.ran(); });
    try {
        g.wait();
        ADD_FAILURE() << "wait() did not rethrow the destructor's exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "destructor");
    }
    EXPECT_EQ(tally.ran.load() + tally.dropped.load(), 10);
    EXPECT_GE(tally.ran.load(), 1);
    // Every child finished exactly once: the group is idle and reusable, nothing left to rethrow.
    std::atomic<int> again{0};
    g.run([&] { again.fetch_add(1); });
    EXPECT_NO_THROW(g.wait());
    EXPECT_EQ(again.load(), 1);
}

TEST_P(task_group_suite, an_uncollected_exception_goes_to_the_pools_handler) {
    crew_test::watchdog dog(60s);
    std::atomic<int> calls{0};
    std::string what;
    crew::pool_options options;
    options.threads = workers();
    options.on_unhandled_exception = [&](std::exception_ptr e) {
        calls.fetch_add(1);
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            what = x.what();
        }
    };
    crew::pool p(options);
    {
        crew::task_group g(p);
        g.run([] { throw std::runtime_error("never collected"); });
    }  // destroyed without wait()
    EXPECT_EQ(calls.load(), 1);
    EXPECT_EQ(what, "never collected");
}

TEST_P(task_group_suite, an_uncollected_exception_is_printed_naming_the_group) {
    crew_test::watchdog dog(60s);
    ::testing::internal::CaptureStderr();
    {
        crew::task_group g(pool());
        g.run([] { throw std::runtime_error("never collected"); });
    }
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("a task_group child whose exception was never collected by wait(): never collected"),
              std::string::npos)
        << err;
    EXPECT_EQ(err.find("spawned task"), std::string::npos) << err;
}

// Two threads wait at once: exactly one gets crew::usage_error. The only child finishes only after
// that happened, so both waits overlap whatever the timing.
TEST_P(task_group_suite, a_second_concurrent_waiter_is_a_usage_error) {
    crew_test::watchdog dog(60s);
    crew::task_group g(pool());
    std::atomic<int> refused{0}, returned{0};
    g.run([&] {
        while (refused.load() == 0) std::this_thread::yield();
    });
    auto waiter = [&] {
        try {
            g.wait();
            returned.fetch_add(1);
        } catch (const crew::usage_error&) {
            refused.fetch_add(1);
        }
    };
    std::thread a(waiter), b(waiter);
    a.join();
    b.join();
    EXPECT_EQ(refused.load(), 1);
    EXPECT_EQ(returned.load(), 1);
}

CREW_ALL_POOL_SIZES(task_group_suite);

}  // namespace
