// crew::task<T>, spawn/join_handle, block_on, cancellation, when_all/when_any, yield_now,
// schedule_on, fork-join inside a task, and the stack bound of synchronous await chains.
#include <crew/crew.hpp>
#include <crew/async/detail/oneshot_event.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;
using crew::detail::oneshot_event;

namespace {

class task_test : public crew_test::pool_test {};

crew::task<int> leaf(int v) { co_return v; }
crew::task<void> nothing() { co_return; }
crew::task<int&> ref_to(int& x) { co_return x; }
crew::task<int> thrower() {
    throw std::runtime_error("boom");
    co_return 0;
}

crew::task<long> chain(long n) {
    long sum = 0;
    for (long i = 0; i < n; ++i) sum += co_await leaf(1);
    co_return sum;
}

crew::task<long> deep(long n) {
    if (n == 0) co_return 0;
    co_return 1 + co_await deep(n - 1);
}

TEST_P(task_test, values_void_references_and_exceptions) {
    crew_test::watchdog dog(60s);
    int x = 5;
    auto body = [](int& x) -> crew::task<int> {
        co_await nothing();
        int& r = co_await ref_to(x);
        r = 6;
        int sum = co_await leaf(1) + co_await leaf(2);
        try {
            (void)co_await thrower();
        } catch (const std::runtime_error& e) {
            if (std::string(e.what()) == "boom") sum += 100;
        }
        co_return sum;
    };
    EXPECT_EQ(pool().block_on(body(x)), 103);
    EXPECT_EQ(x, 6);
    EXPECT_THROW(pool().block_on(thrower()), std::runtime_error);
}

TEST_P(task_test, long_synchronous_chains_do_not_overflow_the_stack) {
    crew_test::watchdog dog(300s);
    // 20,000,000 in the plain builds (scaled down only under CREW_TEST_SCALE_DOWN); once per binary.
    const long n = workers() == 2 ? crew_test::scaled(20'000'000) : crew_test::scaled(200'000);
    EXPECT_EQ(pool().block_on(chain(n)), n);
    const long d = crew_test::scaled(100'000);
    EXPECT_EQ(pool().block_on(deep(d)), d);
}

TEST_P(task_test, spawn_and_await_handles) {
    crew_test::watchdog dog(60s);
    auto body = []() -> crew::task<int> {
        std::vector<crew::join_handle<int>> hs;
        for (int i = 0; i < 100; ++i) hs.push_back(crew::spawn(leaf(i)));
        int sum = 0;
        for (auto& h : hs) sum += co_await h;
        auto e = crew::spawn(thrower());
        try {
            (void)co_await e;
        } catch (const std::runtime_error&) {
            sum += 1;
        }
        co_return sum;
    };
    EXPECT_EQ(pool().block_on(body()), 4951);
    auto h = pool().spawn(leaf(3));
    EXPECT_EQ(h.get(), 3);
    EXPECT_FALSE(h.valid());
    EXPECT_THROW(h.get(), crew::usage_error);
}

TEST_P(task_test, detached_exceptions_go_to_the_handler) {
    crew_test::watchdog dog(60s);
    std::atomic<int> reported{0};
    {
        crew::pool_options o;
        o.threads = workers();
        o.on_unhandled_exception = [&](std::exception_ptr) { reported.fetch_add(1); };
        crew::pool p(o);
        for (int i = 0; i < 10; ++i) p.spawn(thrower()).detach();
    }
    EXPECT_EQ(reported.load(), 10);
}

TEST_P(task_test, block_on_inside_a_worker_helps) {
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    auto body = [](crew::pool& p) -> crew::task<int> { co_return p.block_on(leaf(7)) + crew::block_on(leaf(1)); };
    EXPECT_EQ(p.block_on(body(p)), 8);
}

// A coroutine that blocks inside its run (get() on a worker) runs other coroutine tasks nested on
// its stack (worker::wait_until); those leave their thread-locals behind (the running task, the
// inline-transfer count, the budget: async_schedule.hpp), so the wait must put the waiting task's
// back: after it, the outer task suspends, yields, transfers past the stack bound and is cancelled.
TEST_P(task_test, a_task_that_blocks_inside_its_run_keeps_its_run_state) {
    crew_test::watchdog dog(60s);
    auto inner = []() -> crew::task<long> {
        long n = co_await chain(3000);  // past max_inline_transfers: re-queues itself mid-chain
        co_await crew::yield_now();
        co_return n;
    };
    auto outer = [](auto inner) -> crew::task<long> {
        long got = 0;
        for (int i = 0; i < 4; ++i) got += crew::spawn(inner()).get();  // nested runs on a worker
        got += co_await chain(3000);
        co_await crew::yield_now();
        oneshot_event e;
        auto setter = crew::spawn([](oneshot_event& e) -> crew::task<void> {
            e.set();
            co_return;
        }(e));
        co_await e.wait();
        co_await setter;
        co_return got;
    };
    std::vector<crew::join_handle<long>> hs;
    for (int i = 0; i < 8; ++i) hs.push_back(pool().spawn(outer(inner)));
    for (auto& h : hs) EXPECT_EQ(h.get(), 5 * 3000);
    // The cancellation of the outer task still reaches it after a nested run.
    auto waiter = [](auto inner, oneshot_event& never) -> crew::task<long> {
        long got = crew::spawn(inner()).get();
        co_await never.wait();
        co_return got;
    };
    oneshot_event never;
    auto h = pool().spawn(waiter(inner, never));
    while (!h.done()) {
        h.cancel();
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_THROW(h.get(), crew::cancelled_error);
}

// An awaited task still queued runs inline on its awaiter (async_task::run_inline) while other
// workers may steal its (now stale) entry: every child runs exactly once, whether it completes
// inline, suspends inline and is woken later, is cancelled before or during its run, or sits
// below a chain deeper than the inline-run bound (max_inline_runs).
crew::task<long> spawn_await_chain(int depth, std::atomic<long>& runs) {
    runs.fetch_add(1, std::memory_order_relaxed);
    if (depth == 0) co_return 1;
    co_return 1 + co_await crew::spawn(spawn_await_chain(depth - 1, runs));
}

TEST_P(task_test, an_awaited_queued_task_runs_once_inline_or_not) {
    crew_test::watchdog dog(120s);
    std::atomic<long> runs{0};
    auto parent = [](std::atomic<long>& runs, int i) -> crew::task<long> {
        long sum = 0;
        for (int k = 0; k < 50; ++k) sum += co_await crew::spawn(spawn_await_chain(k % 20, runs));
        // A child that suspends inside its inline run and is woken by a sibling.
        oneshot_event e;
        auto waiter = crew::spawn([](oneshot_event& e, std::atomic<long>& runs) -> crew::task<long> {
            runs.fetch_add(1, std::memory_order_relaxed);
            co_await e.wait();
            co_return 7;
        }(e, runs));
        auto setter = crew::spawn([](oneshot_event& e) -> crew::task<void> {
            e.set();
            co_return;
        }(e));
        sum += co_await waiter;  // runs inline, suspends on e, is resumed by the setter
        co_await setter;
        // A child cancelled before its awaiter gets to it, and one cancelled by a third task.
        auto doomed = crew::spawn([](std::atomic<long>& runs) -> crew::task<long> {
            runs.fetch_add(1, std::memory_order_relaxed);
            co_await crew::yield_now();
            co_return 1000;
        }(runs));
        if (i % 2 == 0) doomed.cancel();
        try {
            sum += co_await doomed;
        } catch (const crew::cancelled_error&) {
            sum += 1000;  // cancelled at its yield (it was not started, or was): same total
        }
        co_return sum;
    };
    const long per_parent_runs = [] {
        long r = 0;
        for (int k = 0; k < 50; ++k) r += k % 20 + 1;
        return r + 2;
    }();
    // Many rounds: stale entries overflow the rings into the injector, whose items are linked
    // through the task (a task with two entries at once corrupted it: a lost task, a hang).
    for (int round = 0; round < 10; ++round) {
        runs.store(0);
        std::vector<crew::join_handle<long>> hs;
        for (int i = 0; i < 40; ++i) hs.push_back(pool().spawn(parent(runs, i)));
        for (auto& h : hs) EXPECT_EQ(h.get(), per_parent_runs - 2 + 7 + 1000);
        // `doomed` runs at most once (not at all when cancelled before it started).
        EXPECT_GE(runs.load(), 40 * (per_parent_runs - 1));
        EXPECT_LE(runs.load(), 40 * per_parent_runs);
    }
}

TEST_P(task_test, cancel_a_task_awaiting_a_handle) {
    crew_test::watchdog dog(60s);
    oneshot_event e;
    auto waiter_of = [](oneshot_event& e) -> crew::task<int> {
        co_await e.wait();
        co_return 1;
    };
    auto inner = pool().spawn(waiter_of(e));
    auto outer_body = [](crew::join_handle<int>& h) -> crew::task<int> { co_return co_await h; };
    auto outer = pool().spawn(outer_body(inner));
    std::this_thread::sleep_for(5ms);
    outer.cancel();
    EXPECT_THROW(outer.get(), crew::cancelled_error);
    EXPECT_FALSE(inner.done());  // the awaited task is not cancelled by it
    e.set();
    EXPECT_EQ(inner.get(), 1);
    auto done = pool().spawn(leaf(2));
    while (!done.done()) std::this_thread::yield();
    done.cancel();  // a no-op once finished
    EXPECT_EQ(done.get(), 2);
}

TEST_P(task_test, when_all_tuple_and_vector) {
    crew_test::watchdog dog(60s);
    auto body = []() -> crew::task<int> {
        auto [a, b, c] = co_await crew::when_all(leaf(1), nothing(), leaf(2));
        static_assert(std::is_same_v<decltype(b), std::monostate>);
        std::vector<crew::task<int>> v;
        for (int i = 0; i < 50; ++i) v.push_back(leaf(i));
        auto all = co_await crew::when_all(std::move(v));
        int sum = a + c;
        for (int x : all) sum += x;
        co_return sum;
    };
    EXPECT_EQ(pool().block_on(body()), 3 + 1225);
}

TEST_P(task_test, when_all_rethrows_after_every_child_finished) {
    crew_test::watchdog dog(60s);
    std::atomic<int> finished{0};
    auto slow = [](std::atomic<int>& f) -> crew::task<int> {
        for (int i = 0; i < 20; ++i) co_await crew::yield_now();
        f.fetch_add(1);
        co_return 1;
    };
    auto body = [&]() -> crew::task<int> {
        auto [x, y, z] = co_await crew::when_all(slow(finished), thrower(), slow(finished));
        co_return x + y + z;
    };
    EXPECT_THROW(pool().block_on(body()), std::runtime_error);
    EXPECT_EQ(finished.load(), 2);
}

TEST_P(task_test, when_all_children_inherit_cancellation) {
    crew_test::watchdog dog(60s);
    oneshot_event never;
    auto waits = [](oneshot_event& e) -> crew::task<void> { co_await e.wait(); };
    auto body = [&]() -> crew::task<void> {
        std::vector<crew::task<void>> v;
        for (int i = 0; i < 8; ++i) v.push_back(waits(never));
        co_await crew::when_all(std::move(v));
    };
    auto h = pool().spawn(body());
    std::this_thread::sleep_for(5ms);
    h.cancel();
    EXPECT_THROW(h.get(), crew::cancelled_error);
}

TEST_P(task_test, when_any_first_wins_and_the_others_are_cancelled) {
    crew_test::watchdog dog(60s);
    oneshot_event never;
    std::atomic<int> cancelled{0};
    auto waits = [](oneshot_event& e, std::atomic<int>& c) -> crew::task<int> {
        try {
            co_await e.wait();
        } catch (const crew::cancelled_error&) {
            c.fetch_add(1);
            throw;
        }
        co_return -1;
    };
    auto body = [&]() -> crew::task<std::pair<std::size_t, int>> {
        std::vector<crew::task<int>> v;
        for (int i = 0; i < 5; ++i) v.push_back(waits(never, cancelled));
        v.push_back(leaf(42));
        co_return co_await crew::when_any(std::move(v));
    };
    auto [index, value] = pool().block_on(body());
    EXPECT_EQ(index, 5u);
    EXPECT_EQ(value, 42);
    EXPECT_EQ(cancelled.load(), 5);
    auto empty = []() -> crew::task<int> {
        auto r = co_await crew::when_any(std::vector<crew::task<int>>{});
        co_return static_cast<int>(r.first);
    };
    EXPECT_THROW(pool().block_on(empty()), std::invalid_argument);
}

TEST_P(task_test, yield_now_interleaves_and_is_a_cancellation_point) {
    crew_test::watchdog dog(60s);
    auto spin = [](std::atomic<bool>& stop) -> crew::task<int> {
        int n = 0;
        while (!stop.load()) {
            co_await crew::yield_now();
            ++n;
        }
        co_return n;
    };
    std::atomic<bool> stop{false};
    auto a = pool().spawn(spin(stop));
    auto stopper = [](std::atomic<bool>& s) -> crew::task<void> {
        co_await crew::yield_now();
        s.store(true);
    };
    pool().block_on(stopper(stop));  // runs even on one worker: the spinner yields
    EXPECT_GE(a.get(), 0);
    std::atomic<bool> never{false};
    auto b = pool().spawn(spin(never));
    b.cancel();
    EXPECT_THROW(b.get(), crew::cancelled_error);
}

// Session 16: a burst of spawns overflows the spawner's ring into the injector; every task that
// suspends is linked into the live-task list (at one worker: the lone shard, without its lock).
// Each child suspends on an event, a third of them is cancelled while it waits, the rest are
// released by the event: every child runs once and ends the way it should.
TEST_P(task_test, a_burst_through_the_injector_runs_each_task_once) {
    crew_test::watchdog dog(120s);
    constexpr int n = 3000;
    std::atomic<long> started{0}, finished{0};
    // The children to be cancelled wait on an event that is never set: a child that counted
    // itself as started may not have suspended yet when its cancel() comes, and a ready event
    // would then let it finish normally (docs/ASYNC.md: awaiting a ready event does not throw);
    // on `never` its wait throws cancelled_error whether it suspended before or after the cancel.
    auto child = [](crew::event& e, std::atomic<long>& started, std::atomic<long>& finished,
                    int i) -> crew::task<int> {
        started.fetch_add(1, std::memory_order_relaxed);
        co_await e.wait();
        finished.fetch_add(1, std::memory_order_relaxed);
        co_return i;
    };
    auto parent = [&](crew::event& e, crew::event& never) -> crew::task<long> {
        std::vector<crew::join_handle<int>> hs;
        hs.reserve(n);
        for (int i = 0; i < n; ++i) hs.push_back(crew::spawn(child(i % 3 == 0 ? never : e, started, finished, i)));
        while (started.load(std::memory_order_relaxed) < n) co_await crew::yield_now();
        for (int i = 0; i < n; i += 3) hs[static_cast<std::size_t>(i)].cancel();
        e.set();
        long sum = 0;
        for (int i = 0; i < n; ++i) {
            try {
                sum += co_await std::move(hs[static_cast<std::size_t>(i)]);
                EXPECT_NE(i % 3, 0) << i;
            } catch (const crew::cancelled_error&) {
                EXPECT_EQ(i % 3, 0) << i;
            }
        }
        co_return sum;
    };
    for (int round = 0; round < 3; ++round) {
        started.store(0);
        finished.store(0);
        crew::event e, never;
        long expected = 0;
        for (int i = 0; i < n; ++i)
            if (i % 3 != 0) expected += i;
        EXPECT_EQ(pool().block_on(parent(e, never)), expected);
        EXPECT_EQ(started.load(), n);
        EXPECT_EQ(finished.load(), n - (n + 2) / 3);
    }
}

// Session 22: a worker that takes an overflowed coroutine task from the injector takes its share
// of the ones behind it into its ring in the same lock acquisition (src/worker.cpp, "The injector in
// batches"). A burst of detached tasks (no awaiter runs one inline, so the injector holds no stale
// entries) each record the injector's length when they start. At one worker the runs are
// sequential and nothing else is queued: taken one at a time, the length falls by exactly 1 from
// one run to the next, so a fall of more than 1 is a batch. On every pool size, every task runs
// once and the burst went through the injector.
TEST_P(task_test, overflowed_tasks_come_back_from_the_injector_in_batches) {
    crew_test::watchdog dog(120s);
    constexpr int n = 2000;
    struct burst_state {
        std::vector<std::uint64_t> seen = std::vector<std::uint64_t>(n, 0);
        std::vector<std::atomic<int>> runs = std::vector<std::atomic<int>>(n);
        std::atomic<int> next{0};
        oneshot_event all_ran;
    };
    // Each probe holds the state: the last one's set() may still run when the parent resumes.
    auto probe = [](crew::pool& p, std::shared_ptr<burst_state> s, int i) -> crew::task<void> {
        const std::uint64_t length = p.metrics().injector_length;
        s->runs[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
        const int at = s->next.fetch_add(1, std::memory_order_acq_rel);
        s->seen[static_cast<std::size_t>(at)] = length;
        if (at == n - 1) s->all_ran.set();
        co_return;
    };
    auto parent = [&](std::shared_ptr<burst_state> s) -> crew::task<void> {
        for (int i = 0; i < n; ++i) (void)crew::spawn(probe(pool(), s, i));  // detached
        co_await s->all_ran.wait();
    };
    auto s = std::make_shared<burst_state>();
    const crew::pool_metrics before = pool().metrics();
    pool().block_on(parent(s));
    const crew::pool_metrics delta = pool().metrics() - before;
    ASSERT_EQ(s->next.load(), n);
    for (int i = 0; i < n; ++i) EXPECT_EQ(s->runs[static_cast<std::size_t>(i)].load(), 1) << i;
    EXPECT_GT(delta.total().ring_overflows, 0u);
    EXPECT_GT(delta.total().injector_pops, 0u);
    if (pool().size() == 1) {
        std::uint64_t largest_fall = 0;
        for (int at = 1; at < n; ++at) {
            const std::uint64_t a = s->seen[static_cast<std::size_t>(at - 1)], b = s->seen[static_cast<std::size_t>(at)];
            if (a > b) largest_fall = std::max(largest_fall, a - b);
        }
        EXPECT_GT(largest_fall, 1u);
        EXPECT_LE(largest_fall, 128u);  // at most half a ring per batch
    }
}

// A task moves between a pool of one worker (whose own tasks sit in the lone shard of the
// live-task list) and this pool (any size) and back, suspending on each side; a task that
// migrates INTO the one-worker pool is linked by the other pool's worker, in a locked shard.
// Then the one-worker pool is destroyed while tasks of both kinds still wait: its drain frees
// them (their coroutine locals are destroyed).
TEST_P(task_test, one_worker_pools_live_list_with_migrations_and_a_drain) {
    crew_test::watchdog dog(60s);
    std::atomic<int> destroyed{0}, parked{0};
    struct counted {
        std::atomic<int>* n;
        ~counted() { n->fetch_add(1); }
    };
    crew::event never;  // outlives `lone`: its waiters are freed by the drain, never woken
    {
        crew::pool lone(1);
        auto hop = [](crew::pool& a, crew::pool& b) -> crew::task<std::size_t> {
            oneshot_event e1;
            co_await crew::schedule_on(a);
            auto h1 = crew::spawn([](oneshot_event& e) -> crew::task<void> {
                e.set();
                co_return;
            }(e1));
            co_await e1.wait();  // suspended (linked) on `a`
            co_await h1;
            const std::size_t on_a = crew::current_pool_size();
            co_await crew::schedule_on(b);
            oneshot_event e2;
            auto h2 = crew::spawn([](oneshot_event& e) -> crew::task<void> {
                e.set();
                co_return;
            }(e2));
            co_await e2.wait();  // suspended on `b`
            co_await h2;
            co_return on_a * 100 + crew::current_pool_size();
        };
        // this pool -> lone -> this pool, and lone -> this pool -> lone.
        EXPECT_EQ(pool().block_on(hop(lone, pool())), 100 + pool().size());
        EXPECT_EQ(lone.block_on(hop(pool(), lone)), pool().size() * 100 + 1);
        // Left waiting at the pool's end: spawned on `lone` (its lone shard), and migrated into it.
        std::vector<crew::join_handle<void>> hs;
        for (int i = 0; i < 20; ++i) {
            hs.push_back(lone.spawn([](crew::event& e, std::atomic<int>& d, std::atomic<int>& p) -> crew::task<void> {
                counted c{&d};
                p.fetch_add(1);
                co_await e.wait();
            }(never, destroyed, parked)));
            hs.push_back(pool().spawn(
                [](crew::pool& to, crew::event& e, std::atomic<int>& d, std::atomic<int>& p) -> crew::task<void> {
                    counted c{&d};
                    co_await crew::schedule_on(to);
                    p.fetch_add(1);
                    co_await e.wait();
                }(lone, never, destroyed, parked)));
        }
        while (parked.load() < 40) std::this_thread::sleep_for(1ms);
        for (auto& h : hs) h = {};  // detach
        // `lone` shuts down here: every waiting task is drained and its frame destroyed.
    }
    EXPECT_EQ(destroyed.load(), 40);
}

TEST_P(task_test, schedule_on_moves_to_another_pool) {
    crew_test::watchdog dog(60s);
    crew::pool other(3);
    auto body = [](crew::pool& other) -> crew::task<std::size_t> {
        co_await crew::schedule_on(other);
        std::size_t there = crew::current_pool_size();
        oneshot_event e;
        auto h = crew::spawn([](oneshot_event& e) -> crew::task<void> {
            e.set();
            co_return;
        }(e));
        co_await e.wait();  // woken on `other`
        co_await h;
        co_return there * 100 + crew::current_pool_size();
    };
    EXPECT_EQ(pool().block_on(body(other)), 303u);
}

TEST_P(task_test, fork_join_inside_a_task) {
    crew_test::watchdog dog(60s);
    auto body = []() -> crew::task<long> {
        auto [a, b] = crew::join([] { return 1L; }, [] { return 2L; });
        std::atomic<long> sum{0};
        crew::parallel_for(0, 1000, [&](int i) { sum.fetch_add(i); });
        crew::task_group g;
        for (int i = 0; i < 10; ++i) g.run([&] { sum.fetch_add(1); });
        g.wait();
        co_await crew::yield_now();
        co_return a + b + sum.load();
    };
    std::vector<crew::join_handle<long>> hs;
    for (int i = 0; i < 20; ++i) hs.push_back(pool().spawn(body()));
    for (auto& h : hs) EXPECT_EQ(h.get(), 3 + 499500 + 10);
}

CREW_ALL_POOL_SIZES(task_test);

// Session 12: a spawn from a task goes to its worker's LIFO slot, and the worker drops the
// displaced entry of a child whose awaiter ran it inline (task_state.hpp, "Displacement") instead
// of pushing it to its ring. Before, at 2 workers, about 130 such stale entries piled up in the
// spawner's ring and the idle worker stole them in batches (about 86 % of the children), dropping
// them there (cross-core frees) and pulling the awaiting task over. Now nothing reaches the ring:
// its high-water mark stays at a few entries, steals stay rare (a thief may still take the slot
// of a spawner that was descheduled, after the lone-task grace), and every child runs once.
// Session 19: the awaiter takes its child's entry back from the slot (worker::take_back_lifo), so
// no stale entry waits there either; before, an idle worker took one whenever a cycle outlasted
// the grace (114-255 per 10,000 cycles under TSan, where a cycle takes about 4 us).
TEST(task_lifo_spawn, spawn_await_at_two_workers_leaves_no_stale_entries_behind) {
    crew_test::watchdog dog(120s);
    crew::pool_options o;
    o.threads = 2;
    crew::pool p(o);
    const long n = crew_test::scaled(100'000);
    std::atomic<long> runs{0};
    auto child = [](std::atomic<long>& runs) -> crew::task<long> {
        runs.fetch_add(1, std::memory_order_relaxed);
        co_return 1;
    };
    auto parent = [](long n, std::atomic<long>& runs, auto child) -> crew::task<long> {
        long sum = 0;
        for (long i = 0; i < n; ++i) sum += co_await crew::spawn(child(runs));
        co_return sum;
    };
    const crew::pool_metrics before = p.metrics();
    EXPECT_EQ(p.block_on(parent(n, runs, child)), n);
    EXPECT_EQ(runs.load(), n);
    const crew::worker_metrics d = (p.metrics() - before).total();
    std::printf("spawn+await x %ld at 2 workers: max ring depth %llu, steals %llu, lifo hits %llu\n", n,
                static_cast<unsigned long long>(d.max_ring_depth), static_cast<unsigned long long>(d.steals),
                static_cast<unsigned long long>(d.lifo_hits));
    if constexpr (CREW_METRICS != 0) {
        EXPECT_LE(d.max_ring_depth, 4u);  // was ~130: stale entries of inline-run children
        EXPECT_LE(d.steals, static_cast<std::uint64_t>(n / 100));  // was ~86 % of n
    }
}

}  // namespace

// Session 12: a child spawned by a task that then runs on for long waits in that worker's LIFO
// slot. When every other worker is busy (a task that yields for ever: none of them runs a steal
// round), their stuck-worker watch (worker::steal_stuck_cold) must take it from the slot while
// the run goes on, as it takes a stuck ring's tasks (docs/DESIGN.md, "A busy worker takes a stuck
// worker's ring"); before the watch looked at the slot, the child waited for the run's end (here
// up to 10 s, then the test fails).
TEST(task_lifo_spawn, a_child_spawned_before_a_long_run_starts_on_a_busy_worker) {
    crew_test::watchdog dog(120s);
    crew::pool_options o;
    o.threads = 2;
    crew::pool p(o);
    struct flags {
        std::atomic<bool> yielder_running{false}, victim_started{false}, stop{false};
    };
    auto yielder = [](flags& f) -> crew::task<void> {
        f.yielder_running.store(true, std::memory_order_release);
        while (!f.stop.load(std::memory_order_acquire)) co_await crew::yield_now();
    };
    auto victim = [](flags& f) -> crew::task<void> {
        f.victim_started.store(true, std::memory_order_release);
        co_return;
    };
    // The long run: the yielder first (the idle worker takes it from this worker's slot), then the
    // victim, then spin until the victim has started elsewhere. Returns the latency (us), or -1.
    auto long_run = [](flags& f, auto yielder, auto victim) -> crew::task<double> {
        auto y = crew::spawn(yielder(f));
        while (!f.yielder_running.load(std::memory_order_acquire)) {
        }
        const auto queued_at = std::chrono::steady_clock::now();
        auto v = crew::spawn(victim(f));
        while (!f.victim_started.load(std::memory_order_acquire) &&
               std::chrono::steady_clock::now() - queued_at < 10s) {
        }
        const bool during = f.victim_started.load(std::memory_order_acquire);
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - queued_at).count();
        f.stop.store(true, std::memory_order_release);
        co_await std::move(y);
        co_await std::move(v);
        co_return during ? us : -1.0;
    };
    for (int rep = 0; rep < 3; ++rep) {
        flags f;
        const double us = p.block_on(long_run(f, yielder, victim));
        std::printf("a child spawned before a long run, the other worker busy: started after %.1f us\n", us);
        ASSERT_GE(us, 0.0) << "stranded in the LIFO slot until the long run ended";
    }
}
