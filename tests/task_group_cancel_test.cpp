// crew::task_group cancellation: cancel(), is_canceling(), crew::is_canceling(), nesting,
// exceptions that cancel, reuse, run_and_wait. Every scenario counts each child as run or dropped:
// none lost, none run twice.
#include <gtest/gtest.h>

#include <crew/crew.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/child_probe.hpp"
#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

class task_group_cancel : public crew_test::pool_test {};

// Spins until the running task sees crew::is_canceling(); false after `limit` (a test failure, not
// a hang: generous, it asserts behaviour, never speed).
bool spin_until_canceling(std::chrono::seconds limit = 30s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!crew::is_canceling()) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::yield();
    }
    return true;
}

TEST(is_canceling, is_false_outside_every_group_and_in_plain_tasks) {
    EXPECT_FALSE(crew::is_canceling());
    crew::pool p(2);
    EXPECT_FALSE(p.run([] { return crew::is_canceling(); }));
    EXPECT_FALSE(p.submit([] { return crew::is_canceling(); }).get());
}

// What join would do for a stolen half: carry the child's context to the thread running it.
TEST(is_canceling, context_scope_carries_a_childs_context_to_another_thread) {
    crew::pool p(1);
    crew::task_group g(p);
    bool inside = false, after = true;
    g.run([&] {
        crew::detail::cancel_context* c = crew::detail::current_context;
        g.cancel();
        std::thread other([&] {
            {
                crew::detail::context_scope scope(c);
                inside = crew::is_canceling();
            }
            after = crew::is_canceling();
        });
        other.join();
    });
    EXPECT_EQ(g.wait(), crew::task_group_status::canceled);
    EXPECT_TRUE(inside);
    EXPECT_FALSE(after);
}

TEST_P(task_group_cancel, canceled_before_children_start_none_runs_and_wait_says_canceled) {
    crew_test::watchdog dog(60s);
    crew::task_group g(pool());
    crew_test::child_tally tally;
    g.cancel();
    EXPECT_TRUE(g.is_canceling());
    for (int i = 0; i < 500; ++i) g.run([p = tally.probe()]() mutable { p.ran(); });
    EXPECT_EQ(g.wait(), crew::task_group_status::canceled);
    EXPECT_EQ(tally.ran.load(), 0);
    EXPECT_EQ(tally.dropped.load(), 500);
    EXPECT_FALSE(g.is_canceling());  // reset by wait()
}

// The same from inside a task, canceled after run() (where the private-children protocol records
// the children in the worker's fork array: docs/DESIGN.md, "Task groups"): children not started are
// still dropped, whether wait()'s drain in the task gets them or they are left at the task's end and
// waited for from outside.
TEST_P(task_group_cancel, children_canceled_after_run_inside_a_task_are_dropped) {
    crew_test::watchdog dog(60s);
    for (bool wait_inside : {true, false}) {
        crew::task_group g;
        crew_test::child_tally tally;
        pool().run([&] {
            for (int i = 0; i < 300; ++i) g.run([p = tally.probe()]() mutable { p.ran(); });
            g.cancel();
            if (wait_inside) {
                EXPECT_EQ(g.wait(), crew::task_group_status::canceled);
            }
        });
        if (!wait_inside) {
            EXPECT_EQ(g.wait(), crew::task_group_status::canceled);  // left at the task's end
        }
        // Alone, a worker runs nothing before the cancel(). With more workers, thieves may have
        // taken some children (oldest first) and run them before it.
        if (workers() == 1) {
            EXPECT_EQ(tally.ran.load(), 0) << "wait inside: " << wait_inside;
        }
        EXPECT_EQ(tally.ran.load() + tally.dropped.load(), 300) << "wait inside: " << wait_inside;
        EXPECT_EQ(tally.ran_twice.load(), 0);
    }
}

// Every child blocks its worker until it sees the cancellation, so at most one child per worker
// runs; the rest must be dropped, never run.
TEST_P(task_group_cancel, canceled_mid_run_running_children_see_it_and_the_rest_are_dropped) {
    crew_test::watchdog dog(90s);
    constexpr long n = 1000;
    crew::task_group g(pool());
    crew_test::child_tally tally;
    std::atomic<long> started{0}, saw{0};
    for (long i = 0; i < n; ++i)
        g.run([&, p = tally.probe()]() mutable {
            p.ran();
            started.fetch_add(1);
            if (spin_until_canceling()) saw.fetch_add(1);
        });
    while (started.load() == 0) std::this_thread::yield();
    g.cancel();
    EXPECT_EQ(g.wait(), crew::task_group_status::canceled);
    EXPECT_EQ(tally.ran.load() + tally.dropped.load(), n);
    EXPECT_EQ(tally.ran_twice.load(), 0);
    EXPECT_GE(tally.ran.load(), 1);
    EXPECT_LE(tally.ran.load(), static_cast<long>(workers()));
    EXPECT_EQ(saw.load(), tally.ran.load());
}

// Three levels: g1's child makes g2, g2's child makes g3, g3's child waits for the cancellation of
// g1. Every level sees it; a child added to g3 afterwards is dropped; a group made afterwards
// inside the canceled tree starts canceled; the waits of g3 and g2 report canceled.
TEST_P(task_group_cancel, nested_groups_three_levels_deep_inherit_cancellation) {
    crew_test::watchdog dog(60s);
    crew::task_group g1(pool());
    std::atomic<bool> innermost_running{false}, saw3{false}, g2_canceling{false}, late_group_canceled{false};
    std::atomic<bool> g3_still_canceled{false};
    std::atomic<int> g2_status{-1}, g3_status{-1};
    crew_test::child_tally late;
    g1.run([&] {
        crew::task_group g2;
        g2.run([&] {
            crew::task_group g3;
            g3.run([&] {
                innermost_running.store(true);
                saw3.store(spin_until_canceling());
                g3.run([p = late.probe()]() mutable { p.ran(); });
            });
            g3_status.store(static_cast<int>(g3.wait()));
            g3_still_canceled.store(g3.is_canceling());  // g2 is still canceled: so is g3
            crew::task_group late_group;
            late_group_canceled.store(late_group.is_canceling());
            g2_canceling.store(crew::is_canceling());
        });
        g2_status.store(static_cast<int>(g2.wait()));
    });
    while (!innermost_running.load()) std::this_thread::yield();
    g1.cancel();
    EXPECT_EQ(g1.wait(), crew::task_group_status::canceled);
    EXPECT_TRUE(saw3.load());
    EXPECT_EQ(g3_status.load(), static_cast<int>(crew::task_group_status::canceled));
    EXPECT_EQ(g2_status.load(), static_cast<int>(crew::task_group_status::canceled));
    EXPECT_TRUE(g3_still_canceled.load());
    EXPECT_TRUE(late_group_canceled.load());
    EXPECT_TRUE(g2_canceling.load());
    EXPECT_EQ(late.ran.load(), 0);
    EXPECT_EQ(late.dropped.load(), 1);
    EXPECT_FALSE(g1.is_canceling());
}

// A nested group whose waits completed (uncanceled waits take no lock and reset nothing) still
// receives its enclosing group's later cancel(), and after that wait resets it to the enclosing
// group's state (still canceled); a wait of a group canceled on its own resets it to not canceled.
TEST_P(task_group_cancel, a_nested_group_waited_uncanceled_still_inherits_a_later_cancel) {
    crew_test::watchdog dog(60s);
    crew::task_group outer(pool());
    std::atomic<bool> go{false}, inner_ready{false};
    std::atomic<int> first{-1}, second{-1}, own{-1}, own_after{-1};
    std::atomic<bool> after_inherited{false};
    outer.run([&] {
        crew::task_group inner;
        crew::task_group own_group;  // also nested in outer
        for (int round = 0; round < 3; ++round) {
            for (int i = 0; i < 20; ++i) inner.run([] {});
            first.store(static_cast<int>(inner.wait()));
        }
        own_group.cancel();
        own.store(static_cast<int>(own_group.wait()));
        own_after.store(own_group.is_canceling() ? 1 : 0);  // outer not canceled yet: reset to false
        inner_ready.store(true);
        while (!go.load()) std::this_thread::yield();
        second.store(inner.is_canceling() ? 1 : 0);  // outer's cancel() reached inner
        inner.run([] {});
        (void)inner.wait();
        after_inherited.store(inner.is_canceling());  // outer still canceled: so is inner
    });
    while (!inner_ready.load()) std::this_thread::yield();
    outer.cancel();
    go.store(true);
    EXPECT_EQ(outer.wait(), crew::task_group_status::canceled);
    EXPECT_EQ(first.load(), static_cast<int>(crew::task_group_status::complete));
    EXPECT_EQ(own.load(), static_cast<int>(crew::task_group_status::canceled));
    EXPECT_EQ(own_after.load(), 0);
    EXPECT_EQ(second.load(), 1);
    EXPECT_TRUE(after_inherited.load());
}

// A sibling group (made outside g's children) is not affected by g's cancellation.
TEST_P(task_group_cancel, cancellation_does_not_reach_unrelated_groups) {
    crew_test::watchdog dog(60s);
    crew::task_group g(pool()), other(pool());
    crew_test::child_tally tally;
    g.cancel();
    for (int i = 0; i < 100; ++i) other.run([p = tally.probe()]() mutable { p.ran(); });
    EXPECT_EQ(other.wait(), crew::task_group_status::complete);
    EXPECT_EQ(tally.ran.load(), 100);
    EXPECT_EQ(g.wait(), crew::task_group_status::canceled);
}

// The first exception cancels the group: the thrower is first in the queue, the others block
// until they see the cancellation, so the rest are dropped.
TEST_P(task_group_cancel, an_exception_cancels_the_siblings_and_wait_rethrows_it) {
    crew_test::watchdog dog(90s);
    constexpr long n = 500;
    crew::task_group g(pool());
    crew_test::child_tally tally;
    std::atomic<long> saw{0}, missed{0};
    g.run([] { throw std::logic_error("first"); });
    for (long i = 1; i < n; ++i)
        g.run([&, p = tally.probe()]() mutable {
            p.ran();
            (spin_until_canceling() ? saw : missed).fetch_add(1);
        });
    EXPECT_THROW(g.wait(), std::logic_error);
    EXPECT_EQ(tally.ran.load() + tally.dropped.load(), n - 1);
    EXPECT_EQ(tally.ran_twice.load(), 0);
    EXPECT_EQ(missed.load(), 0);
    EXPECT_GE(tally.dropped.load(), n - 1 - static_cast<long>(workers()));
    EXPECT_FALSE(g.is_canceling());
}

TEST_P(task_group_cancel, a_group_is_reusable_after_a_canceled_wait) {
    crew_test::watchdog dog(60s);
    crew::task_group g(pool());
    for (int round = 0; round < 3; ++round) {
        crew_test::child_tally dropped_round, kept_round;
        g.cancel();
        for (int i = 0; i < 50; ++i) g.run([p = dropped_round.probe()]() mutable { p.ran(); });
        EXPECT_EQ(g.wait(), crew::task_group_status::canceled);
        EXPECT_EQ(dropped_round.dropped.load(), 50);
        for (int i = 0; i < 50; ++i) g.run([p = kept_round.probe()]() mutable { p.ran(); });
        EXPECT_EQ(g.wait(), crew::task_group_status::complete);
        EXPECT_EQ(kept_round.ran.load(), 50);
    }
}

TEST_P(task_group_cancel, run_and_wait_runs_f_on_the_calling_thread_then_waits) {
    crew_test::watchdog dog(60s);
    // Outside every pool.
    crew::task_group g(pool());
    std::atomic<int> children{0};
    const auto caller = std::this_thread::get_id();
    std::thread::id ran_on;
    auto status = g.run_and_wait([&] {
        ran_on = std::this_thread::get_id();
        for (int i = 0; i < 100; ++i) g.run([&] { children.fetch_add(1); });
    });
    EXPECT_EQ(status, crew::task_group_status::complete);
    EXPECT_EQ(ran_on, caller);
    EXPECT_EQ(children.load(), 100);
    // On a worker, with the group's cancellation visible inside f.
    const bool saw = pool().run([] {
        crew::task_group inner;
        bool inside = false;
        EXPECT_EQ(inner.run_and_wait([&] {
            inner.cancel();
            inside = crew::is_canceling();
        }),
                  crew::task_group_status::canceled);
        return inside;
    });
    EXPECT_TRUE(saw);
    // A canceled group drops f; f's exception is rethrown.
    g.cancel();
    bool called = false;
    EXPECT_EQ(g.run_and_wait([&] { called = true; }), crew::task_group_status::canceled);
    EXPECT_FALSE(called);
    EXPECT_THROW(g.run_and_wait([] { throw std::runtime_error("f"); }), std::runtime_error);
    EXPECT_EQ(g.run_and_wait([] {}), crew::task_group_status::complete);
}

// Stress: children nest groups with grandchildren while another thread cancels at some point.
// Every grandchild ran once or was dropped; nothing hangs or leaks (ASan/TSan builds).
TEST_P(task_group_cancel, cancel_races_with_nesting) {
    crew_test::watchdog dog(120s);
    const long rounds = crew_test::scaled(1000);
    for (long round = 0; round < rounds; ++round) {
        crew::task_group g(pool());
        crew_test::child_tally tally;
        std::atomic<long> started{0};
        for (int i = 0; i < 16; ++i)
            g.run([&] {
                started.fetch_add(1);
                crew::task_group inner;
                for (int k = 0; k < 8; ++k) inner.run([p = tally.probe()]() mutable { p.ran(); });
                inner.wait();
            });
        while (started.load() < round % 4) std::this_thread::yield();
        g.cancel();
        const auto status = g.wait();
        EXPECT_EQ(status, crew::task_group_status::canceled);
        EXPECT_EQ(tally.ran.load() + tally.dropped.load(), 8 * started.load());
        EXPECT_EQ(tally.ran_twice.load(), 0);
    }
}

// A loop inside a canceled group starts no new chunks: the body cancels the group on its first
// element, so far fewer than all elements run (each chunk already started may finish).
TEST_P(task_group_cancel, a_parallel_for_in_a_canceled_group_stops_starting_chunks) {
    crew_test::watchdog dog(60s);
    constexpr std::size_t n = 1000000;
    std::atomic<std::size_t> calls{0};
    crew::task_group g(pool());
    g.run([&] {
        crew::parallel_for(crew::simple_partition{64}, std::size_t{0}, n, [&](std::size_t) {
            if (calls.fetch_add(1, std::memory_order_relaxed) == 0) g.cancel();
        });
    });
    EXPECT_EQ(g.wait(), crew::task_group_status::canceled);
    EXPECT_GE(calls.load(), 1u);
    EXPECT_LT(calls.load(), n / 2);
}

// The half of a join that a thief takes runs in the forking child's group: it sees the cancel.
TEST_P(task_group_cancel, a_stolen_join_half_sees_its_groups_cancellation) {
    crew_test::watchdog dog(60s);
    crew::task_group g(pool());
    std::atomic<int> saw{0};
    g.run([&] {
        crew::join([&] { g.cancel(); },
                   [&] { saw.fetch_add(spin_until_canceling() ? 1 : 0); });
    });
    g.wait();
    EXPECT_EQ(saw.load(), 1);
}

CREW_ALL_POOL_SIZES(task_group_cancel);

}  // namespace
