// The examples of docs/API.md, compiled and checked. Keep the two in step: each block between
// "// --- example: <name>" and "// ---" is the snippet the document shows.
#include <crew/crew.hpp>
#include <gtest/gtest.h>

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

TEST(api_examples, pool_options_stack_size_and_name) {
    crew_test::watchdog dog(60s);
    // --- example: pool_options
    crew::pool_options options;
    options.threads = 2;
    options.stack_size = std::size_t{8} << 20;  // 8 MiB per worker instead of 64 MiB
    options.name = "render";                    // threads show up as render-0, render-1
    crew::pool pool(options);
    // ---
    std::string name = pool.run([] {
        char buffer[16] = {};
        pthread_getname_np(pthread_self(), buffer, sizeof buffer);
        return std::string(buffer);
    });
    EXPECT_EQ(name.rfind("render-", 0), 0u) << name;
}

TEST(api_examples, default_concurrency) {
    // --- example: default_concurrency
    std::size_t cpus = crew::default_concurrency();   // affinity mask and cgroup quota, >= 1
    crew::pool half(cpus > 1 ? cpus / 2 : 1);          // leave room for something else
    // ---
    EXPECT_GE(cpus, 1u);
    EXPECT_EQ(crew::pool().size(), std::min(cpus, crew::max_threads));
    EXPECT_GE(half.size(), 1u);
}

TEST(api_examples, max_threads) {
    // --- example: max_threads
    try {
        crew::pool huge(crew::max_threads + 1);
    } catch (const std::invalid_argument& e) {
        std::printf("%s\n", e.what());  // crew::pool: at most crew::max_threads (1024) worker threads, ...
    }
    // ---
    EXPECT_THROW(crew::pool(crew::max_threads + 1), std::invalid_argument);
}

TEST(api_examples, this_worker_index) {
    crew_test::watchdog dog(60s);
    // --- example: this_worker_index
    crew::pool pool(4);
    std::vector<long> per_worker(pool.size());  // one slot per worker: no sharing, no atomics
    pool.run([&] {
        crew::parallel_for(0, 100'000, [&](int i) {
            per_worker[static_cast<std::size_t>(crew::this_worker_index())] += i;
        });
    });
    long total = 0;
    for (long x : per_worker) total += x;         // 4999950000
    int outside = crew::this_worker_index();      // -1: not on a worker
    // ---
    EXPECT_EQ(total, 4999950000L);
    EXPECT_EQ(outside, -1);
}

TEST(api_examples, future_valid_is_ready_wait) {
    crew_test::watchdog dog(60s);
    crew::pool pool(2);
    // --- example: future
    crew::future<int> f = pool.submit([] { return 6 * 7; });
    bool has_state = f.valid();   // true: it refers to a task
    f.wait();                     // blocks (or helps, on a worker) until the task finished
    bool ready = f.is_ready();    // true after wait(); never blocks
    int v = f.get();              // 42; f.valid() is false from now on
    crew::future<int> empty;      // valid() == false; wait(), is_ready() and get() throw
    // ---                           std::future_error(no_state)
    EXPECT_TRUE(has_state);
    EXPECT_TRUE(ready);
    EXPECT_EQ(v, 42);
    EXPECT_FALSE(f.valid());
    EXPECT_FALSE(empty.valid());
    EXPECT_THROW(empty.wait(), std::future_error);
    EXPECT_THROW((void)empty.is_ready(), std::future_error);
}

TEST(api_examples, task_group_on_a_given_pool) {
    crew_test::watchdog dog(60s);
    // --- example: task_group(pool&)
    crew::pool io(2);
    std::atomic<int> done{0};
    crew::task_group group(io);        // children run on `io`, wherever run() is called from
    for (int i = 0; i < 10; ++i) group.run([&] { done.fetch_add(1); });
    group.wait();                      // all 10 finished; rethrows a child's exception
    // ---
    EXPECT_EQ(done.load(), 10);
}

TEST(api_examples, isolate) {
    crew_test::watchdog dog(60s);
    // --- example: isolate
    std::mutex m;
    crew::pool p(2);
    p.run([&] {
        std::lock_guard lock(m);
        crew::isolate([&] {                // a wait in here runs only work spawned in here,
            crew::parallel_for(0, 1000, [](int) {});  // never an outside task that might lock m
        });
    });
    // ---
    EXPECT_TRUE(m.try_lock());
    m.unlock();
    EXPECT_EQ(crew::help_depth_limit, 32u);
}

TEST(api_examples, metrics) {
    crew_test::watchdog dog(60s);
    // --- example: metrics
    crew::pool pool(2);
    pool.run([] { crew::parallel_for(0, 10'000, [](int) {}); });
    crew::pool_metrics m = pool.metrics();     // a snapshot, one entry per worker
    for (std::size_t i = 0; i < m.workers.size(); ++i) {
        const crew::worker_metrics& w = m.workers[i];
        std::printf("worker %zu: ran %llu, stole %llu (%llu failed), parked %llu, injector %llu, depth %llu\n", i,
                    (unsigned long long)w.tasks_run, (unsigned long long)w.steals,
                    (unsigned long long)w.failed_steals, (unsigned long long)w.parks,
                    (unsigned long long)w.injector_pops, (unsigned long long)w.max_deque_depth);
    }
    crew::worker_metrics all = m.total();      // sums; max_deque_depth is the maximum
    // ---
    EXPECT_EQ(m.workers.size(), 2u);
    EXPECT_GE(all.tasks_run, 1u);
    EXPECT_GE(all.injector_pops, 1u);  // the run() job came from outside
}

TEST(api_examples, waiting_for_work_before_exit) {
    crew_test::watchdog dog(60s);
    // --- example: exit
    std::atomic<int> written{0};
    crew::task_group pending;                     // on the default pool
    pending.run([&] { written.fetch_add(1); });   // instead of crew::spawn, which may be
    pending.wait();                               // abandoned when main returns
    // ---
    EXPECT_EQ(written.load(), 1);
}

}  // namespace
