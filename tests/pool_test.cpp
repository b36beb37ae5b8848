// crew::pool: outside and inside submission, wakeups, shutdown, metrics, misuse.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

class pool_suite : public crew_test::pool_test {};

// Wait until every worker of `p` is parked.
void wait_fully_parked(crew::pool& p) {
    while (crew::detail::registry_of(p).lot().sleepers() != p.size()) std::this_thread::yield();
}

TEST_P(pool_suite, a_million_tasks_from_outside_threads_and_from_tasks_run_exactly_once) {
    crew_test::watchdog dog(300s);
    const long per_source = crew_test::scaled(250'000);
    const long total = per_source * 4;  // 2 outside threads + 2 spawning tasks
    std::vector<std::atomic<unsigned char>> seen(static_cast<std::size_t>(total));
    std::atomic<long> ran{0};
    crew::pool& p = pool();
    auto body = [&](long id) {
        return [&, id] {
            seen[static_cast<std::size_t>(id)].fetch_add(1, std::memory_order_relaxed);
            ran.fetch_add(1, std::memory_order_release);
        };
    };
    std::thread outside_a([&] { for (long i = 0; i < per_source; ++i) p.spawn(body(i)); });
    std::thread outside_b([&] { for (long i = per_source; i < 2 * per_source; ++i) p.spawn(body(i)); });
    for (long s = 2; s < 4; ++s)
        p.spawn([&, s] { for (long i = s * per_source; i < (s + 1) * per_source; ++i) crew::spawn(body(i)); });
    outside_a.join();
    outside_b.join();
    while (ran.load(std::memory_order_acquire) < total) std::this_thread::sleep_for(1ms);
    long wrong = 0;
    for (auto& s : seen)
        if (s.load() != 1) ++wrong;
    EXPECT_EQ(wrong, 0);
    EXPECT_EQ(p.metrics().total().tasks_run, static_cast<std::uint64_t>(total + 2));
}

TEST_P(pool_suite, a_fully_parked_pool_wakes_for_one_outside_task_every_time) {
    crew_test::watchdog dog(300s);
    crew::pool& p = pool();
    const long rounds = crew_test::scaled(30'000) / static_cast<long>(workers());
    std::atomic<long> done{0};
    for (long i = 0; i < rounds; ++i) {
        wait_fully_parked(p);
        p.spawn([&] { done.fetch_add(1, std::memory_order_release); });
        while (done.load(std::memory_order_acquire) <= i) std::this_thread::yield();
    }
    EXPECT_EQ(done.load(), rounds);
    // Each round starts with every worker announced as a sleeper: either it re-checks and sees the
    // task, or it really sleeps and is woken; the latter happens in most rounds.
    EXPECT_GE(p.metrics().total().parks, static_cast<std::uint64_t>(rounds) / 2);
}

TEST_P(pool_suite, run_returns_the_value_and_rethrows) {
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    EXPECT_EQ(p.run([] { return 42; }), 42);
    EXPECT_THROW(p.run([]() -> int { throw std::runtime_error("boom"); }), std::runtime_error);
    int x = 0;
    int& r = p.run([&]() -> int& { return x; });
    EXPECT_EQ(&r, &x);
    EXPECT_GE(p.run([] { return crew::this_worker_index(); }), 0);
    EXPECT_EQ(crew::this_worker_index(), -1);
}

TEST_P(pool_suite, spawn_exceptions_go_to_the_handler_and_workers_survive) {
    crew_test::watchdog dog(60s);
    std::atomic<int> caught{0};
    crew::pool_options options;
    options.threads = workers();
    options.on_unhandled_exception = [&](std::exception_ptr e) {
        try {
            std::rethrow_exception(e);
        } catch (const std::logic_error&) {
            caught.fetch_add(1);
        }
    };
    std::atomic<int> ran{0};
    {
        crew::pool p(options);
        for (int i = 0; i < 1000; ++i)
            p.spawn([&, i] {
                ran.fetch_add(1);
                if (i % 10 == 0) throw std::logic_error("one in ten");
            });
    }  // the destructor runs everything already queued
    EXPECT_EQ(ran.load(), 1000);
    EXPECT_EQ(caught.load(), 100);
}

TEST_P(pool_suite, destroying_a_pool_under_load_finishes_queued_work) {
    crew_test::watchdog dog(300s);
    const int cycles = static_cast<int>(crew_test::scaled(500));
    for (int c = 0; c < cycles; ++c) {
        std::atomic<int> ran{0};
        {
            crew::pool p(workers());
            for (int i = 0; i < 50; ++i)
                p.spawn([&] {
                    for (int k = 0; k < 4; ++k) crew::spawn([&] { ran.fetch_add(1, std::memory_order_relaxed); });
                    ran.fetch_add(1, std::memory_order_relaxed);
                });
        }
        ASSERT_EQ(ran.load(), 250) << "cycle " << c;
    }
}

TEST_P(pool_suite, accepts_lvalue_and_move_only_callables) {
    crew_test::watchdog dog(60s);
    std::atomic<int> ran{0};
    auto count = [&] { ran.fetch_add(1); };
    pool().spawn(count);  // an lvalue: copied in
    crew::future<void> f = pool().submit(count);
    f.get();
    pool().run([&] { crew::spawn(count); });
    auto owned = std::make_unique<int>(5);
    auto g = pool().submit([p = std::move(owned)] { return *p; });  // move-only closure
    EXPECT_EQ(g.get(), 5);
    while (ran.load() != 3) std::this_thread::yield();
}

TEST_P(pool_suite, metrics_count_steals_and_depth) {
    crew_test::watchdog dog(60s);
    crew::pool& p = pool();
    p.run([] {
        for (int i = 0; i < 1000; ++i) crew::spawn([] {});
    });
    auto m = p.metrics();
    ASSERT_EQ(m.workers.size(), workers());
    EXPECT_GE(m.total().max_deque_depth, 1u);
    EXPECT_GE(m.total().injector_pops, 1u);  // the run() job came through the injector
}

CREW_ALL_POOL_SIZES(pool_suite);

TEST(pool, zero_workers_is_an_error) {
    EXPECT_THROW(crew::pool(0), std::invalid_argument);
    crew::pool_options options;
    options.threads = 0;
    EXPECT_THROW(crew::pool{options}, std::invalid_argument);
}

TEST(pool, default_size_is_the_usable_cpu_count) {
    crew::pool p;
    EXPECT_EQ(p.size(), crew::default_concurrency());
    EXPECT_GE(crew::default_concurrency(), 1u);
}

TEST(pool, submitting_from_outside_to_a_closing_pool_throws_and_loses_nothing) {
    crew_test::watchdog dog(60s);
    std::atomic<bool> release{false};
    std::atomic<bool> entered{false};
    std::atomic<int> rejected{0};
    std::atomic<int> accepted{0};
    std::atomic<int> ran{0};
    auto p = std::make_unique<crew::pool>(1);
    crew::pool* raw = p.get();
    p->spawn([&] {
        entered.store(true);
        while (!release.load()) std::this_thread::yield();
    });
    while (!entered.load()) std::this_thread::yield();
    std::thread destroyer([&] { p.reset(); });  // blocks: the worker is busy
    // The destructor closes the injector first; keep trying until it has.
    std::thread submitter([&] {
        for (;;) {
            try {
                raw->spawn([&] { ran.fetch_add(1); });
                accepted.fetch_add(1);
            } catch (const crew::pool_closed_error&) {
                rejected.fetch_add(1);
                release.store(true);
                return;
            }
            std::this_thread::sleep_for(100us);
        }
    });
    submitter.join();
    destroyer.join();
    EXPECT_EQ(rejected.load(), 1);
    // Everything accepted before the close ran; nothing was dropped.
    EXPECT_EQ(ran.load(), accepted.load());
}

// Outside spawns take their task blocks from the target pool's depot, which the workers refill
// with the blocks of the tasks they ran (worker.hpp, new_outside_task). A chain taken from one pool
// outlives that pool and serves spawns into another; nothing is lost or run twice, and the
// sanitizer builds see no leak or stale block.
TEST(pool, outside_spawns_reuse_blocks_across_pools_and_their_destruction) {
    crew_test::watchdog dog(120s);
    const long per_pool = crew_test::scaled(100'000);  // well past the workers' caches and the depot
    for (int round = 0; round < 3; ++round) {
        std::vector<std::atomic<unsigned char>> seen(static_cast<std::size_t>(per_pool));
        std::atomic<long> ran{0};
        {
            crew::pool p(round == 0 ? 1 : 2);
            for (long i = 0; i < per_pool; ++i)
                p.spawn([&, i] {
                    seen[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
                    ran.fetch_add(1, std::memory_order_release);
                });
            while (ran.load(std::memory_order_acquire) < per_pool) std::this_thread::yield();
            // Keep spawning until this thread surely holds a chain from p's depot when p goes.
            for (int i = 0; i < 1000; ++i) p.spawn([] {});
        }
        long wrong = 0;
        for (auto& s : seen)
            if (s.load() != 1) ++wrong;
        EXPECT_EQ(wrong, 0);
    }
}

// A closure whose copy throws while an outside thread spawns it: the exception reaches the caller,
// the block goes back (ASan's leak check), and the pool carries on.
TEST(pool, an_outside_spawn_whose_closure_copy_throws_loses_nothing) {
    struct throws_on_copy {
        std::atomic<int>* ran;
        bool fail;
        throws_on_copy(std::atomic<int>* r, bool f) : ran(r), fail(f) {}
        throws_on_copy(const throws_on_copy& o) : ran(o.ran), fail(o.fail) {
            if (fail) throw std::runtime_error("copy");
        }
        void operator()() const { ran->fetch_add(1); }
    };
    crew::pool p(2);
    std::atomic<int> ran{0};
    for (int i = 0; i < 1000; ++i) {
        const throws_on_copy f(&ran, i % 2 == 0);
        if (i % 2 == 0)
            EXPECT_THROW(p.spawn(f), std::runtime_error);
        else
            p.spawn(f);
    }
    while (ran.load() < 500) std::this_thread::yield();
    EXPECT_EQ(ran.load(), 500);
}

TEST(pool, default_pool_serves_free_functions) {
    int a = 0, b = 0;
    crew::join([&] { a = 1; }, [&] { b = 2; });
    EXPECT_EQ(a + b, 3);
    EXPECT_GE(crew::default_pool().size(), 1u);
}

}  // namespace
