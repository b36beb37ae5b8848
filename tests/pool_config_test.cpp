// Pool configuration: on_thread_start/on_thread_stop hooks and pin_threads on pools of 1, 2, 4 and
// 8 workers, and crew::configure_default_pool. A process configures its default pool once, before
// its first use, so each configure scenario runs in a process of its own: the test re-executes this
// binary (fork + exec of /proc/self/exe, with a watchdog) running one DISABLED_child test.
#include <crew/crew.hpp>
#include <gtest/gtest.h>

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#define CREW_EDGE_CHILD "/proc/self/exe"
#include "edge/child.hpp"
#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

// Poll `done` for up to 30 s (hooks run on the workers, asynchronously to the pool's constructor).
template <class F>
bool eventually(F done) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

// The names of this process's threads (/proc/self/task/*/comm).
std::multiset<std::string> thread_names() {
    std::multiset<std::string> names;
    DIR* dir = opendir("/proc/self/task");
    if (dir == nullptr) return names;
    while (dirent* e = readdir(dir)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream in(std::string("/proc/self/task/") + e->d_name + "/comm");
        std::string name;
        if (std::getline(in, name)) names.insert(name);
    }
    closedir(dir);
    return names;
}

// One thread of each of these names (a worker names itself as it starts).
bool has_threads_named(std::initializer_list<const char*> wanted) {
    std::multiset<std::string> names = thread_names();
    for (const char* name : wanted)
        if (names.count(name) != 1) return false;
    return true;
}

std::vector<int> affinity_of_this_thread() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0) return cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    return cpus;
}

std::vector<int> process_affinity() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(getpid(), sizeof(set), &set) != 0) return cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    return cpus;
}

// ---- hooks on explicit pools ----

class hooks_test : public ::testing::TestWithParam<std::size_t> {};

TEST_P(hooks_test, start_runs_before_any_task_and_stop_after_the_last_each_index_once) {
    crew_test::watchdog dog(60s);
    const std::size_t n = GetParam();
    std::vector<std::atomic<int>> starts(n), stops(n);
    std::vector<std::atomic<long>> ran(n), ran_at_stop(n);
    std::atomic<int> misplaced{0};  // a task before its worker's start hook or after its stop hook
    std::atomic<int> wrong_index{0};
    std::atomic<long> total{0};
    {
        crew::pool_options options;
        options.threads = n;
        options.on_thread_start = [&](std::size_t i) {
            if (i >= n || crew::this_worker_index() != static_cast<int>(i)) ++wrong_index;
            else ++starts[i];
        };
        options.on_thread_stop = [&](std::size_t i) {
            if (i >= n || crew::this_worker_index() != -1) ++wrong_index;  // it has left the pool
            else {
                ran_at_stop[i] = ran[i].load();
                ++stops[i];
            }
        };
        auto note_task = [&] {  // declared before the pool: the drain in its destructor calls it
            auto w = static_cast<std::size_t>(crew::this_worker_index());
            if (starts[w].load() != 1 || stops[w].load() != 0) ++misplaced;
            ++ran[w];
            ++total;
        };
        crew::pool pool(options);
        pool.run([&] { crew::parallel_for(0, 20'000, [&](int) { note_task(); }); });
        // Queued work the destructor drains: it must all run before any stop hook.
        for (int i = 0; i < 200; ++i)
            pool.spawn([&] {
                std::this_thread::sleep_for(std::chrono::microseconds(50));
                note_task();
            });
    }
    EXPECT_EQ(total.load(), 20'200);
    EXPECT_EQ(misplaced.load(), 0);
    EXPECT_EQ(wrong_index.load(), 0);
    for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(starts[i].load(), 1) << "worker " << i;
        EXPECT_EQ(stops[i].load(), 1) << "worker " << i;
        EXPECT_EQ(ran_at_stop[i].load(), ran[i].load()) << "worker " << i << " ran a task after its stop hook";
    }
}

TEST_P(hooks_test, exceptions_escaping_hooks_go_to_the_handler_and_the_workers_carry_on) {
    crew_test::watchdog dog(60s);
    const std::size_t n = GetParam();
    std::mutex m;
    std::multiset<std::string> reported;
    std::atomic<int> refused{0};
    crew::pool* self = nullptr;
    {
        crew::pool_options options;
        options.threads = n;
        options.on_unhandled_exception = [&](std::exception_ptr e) {
            try {
                std::rethrow_exception(e);
            } catch (const crew::pool_closed_error&) {
                ++refused;
            } catch (const std::exception& x) {
                std::lock_guard lock(m);
                reported.insert(x.what());
            }
        };
        options.on_thread_start = [](std::size_t) { throw std::runtime_error("start"); };
        options.on_thread_stop = [&](std::size_t) {
            self->spawn([] {});  // refused: the pool is closing; the exception escapes the hook
        };
        crew::pool pool(options);
        self = &pool;
        std::atomic<long> sum{0};
        pool.run([&] { crew::parallel_for(0, 10'000, [&](int i) { sum += i; }); });
        EXPECT_EQ(sum.load(), 10'000L * 9'999 / 2);
        EXPECT_EQ(pool.run([] { return 7; }), 7);
    }
    EXPECT_EQ(reported.count("start"), n);
    EXPECT_EQ(reported.size(), n);
    EXPECT_EQ(refused.load(), static_cast<int>(n));
}

TEST_P(hooks_test, a_start_hook_may_use_its_pool) {
    crew_test::watchdog dog(60s);
    const std::size_t n = GetParam();
    std::atomic<int> spawned_ran{0}, joined{0};
    {
        crew::pool_options options;
        options.threads = n;
        options.on_thread_start = [&](std::size_t) {
            crew::spawn([&] { spawned_ran.fetch_add(1); });  // on this worker's own pool
            auto [a, b] = crew::join([] { return 1; }, [] { return 2; });
            joined.fetch_add(a + b);
        };
        crew::pool pool(options);
    }  // drained: every task a start hook spawned ran
    EXPECT_EQ(spawned_ran.load(), static_cast<int>(n));
    EXPECT_EQ(joined.load(), 3 * static_cast<int>(n));
}

TEST_P(hooks_test, pinned_workers_run_on_the_expected_cpu) {
    crew_test::watchdog dog(60s);
    const std::size_t n = GetParam();
    const std::vector<int> cpus = process_affinity();
    ASSERT_FALSE(cpus.empty());
    std::vector<std::vector<int>> affinity(n);
    std::vector<int> ran_on(n, -1);
    {
        crew::pool_options options;
        options.threads = n;
        options.pin_threads = true;
        options.on_thread_start = [&](std::size_t i) {  // each index once: no lock needed
            affinity[i] = affinity_of_this_thread();
            ran_on[i] = sched_getcpu();
        };
        crew::pool pool(options);
        pool.run([] { crew::parallel_for(0, 1000, [](int) {}); });
    }  // joined: every start hook has returned
    for (std::size_t i = 0; i < n; ++i) {
        const int expected = cpus[i % cpus.size()];
        EXPECT_EQ(affinity[i], std::vector<int>{expected}) << "worker " << i;
        EXPECT_EQ(ran_on[i], expected) << "worker " << i;
    }
}

TEST_P(hooks_test, unpinned_workers_keep_the_whole_mask) {
    const std::size_t n = GetParam();
    std::vector<std::vector<int>> affinity(n);
    {
        crew::pool_options options;
        options.threads = n;
        options.on_thread_start = [&](std::size_t i) { affinity[i] = affinity_of_this_thread(); };
        crew::pool pool(options);
    }
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(affinity[i], affinity_of_this_thread()) << "worker " << i;
}

CREW_ALL_POOL_SIZES(hooks_test);

TEST(pinning, a_cpu_the_system_refuses_is_not_an_error) {
    std::thread t([] {
        const std::vector<int> before = affinity_of_this_thread();
        EXPECT_FALSE(crew::detail::os::pin_current_thread(-1));
        EXPECT_FALSE(crew::detail::os::pin_current_thread(CPU_SETSIZE + 5));
        EXPECT_EQ(affinity_of_this_thread(), before);  // unchanged
    });
    t.join();
}

TEST(pool_options_api, hooks_and_pinning_example) {
    crew_test::watchdog dog(60s);
    // --- example: hooks
    std::atomic<int> started{0}, stopped{0};
    {
        crew::pool_options options;
        options.threads = 2;
        options.pin_threads = true;  // worker i on the i-th CPU of the affinity mask
        options.on_thread_start = [&](std::size_t /*worker_index*/) { started.fetch_add(1); };
        options.on_thread_stop = [&](std::size_t /*worker_index*/) { stopped.fetch_add(1); };
        crew::pool pool(options);
        pool.run([] {});
    }  // the destructor returned: started == 2 and stopped == 2
    // ---
    EXPECT_EQ(started.load(), 2);
    EXPECT_EQ(stopped.load(), 2);
}

TEST(configure_default_pool, invalid_options_throw_invalid_argument) {
    crew::pool_options zero;
    zero.threads = 0;
    EXPECT_THROW(crew::configure_default_pool(zero), std::invalid_argument);
    crew::pool_options huge;
    huge.threads = crew::max_threads + 1;
    EXPECT_THROW(crew::configure_default_pool(huge), std::invalid_argument);
}

// ---- configure_default_pool: each scenario in a process of its own ----

// Run DISABLED_child.<scenario> in a fresh process with `env` added; it must pass.
void expect_child_passes(const std::string& scenario, std::vector<std::string> env) {
    edge::child_result r = edge::run_helper(
        {"--gtest_also_run_disabled_tests", "--gtest_filter=DISABLED_child." + scenario}, env);
    EXPECT_EQ(r.exit_code(), 0) << r.describe();
    EXPECT_NE(r.output.find("[  PASSED  ] 1 test."), std::string::npos) << r.describe();
}

TEST(configure_default_pool, takes_effect_before_the_first_use) {
    expect_child_passes("configure_takes_effect", {"CREW_NUM_THREADS=5"});
}
TEST(configure_default_pool, crew_num_threads_fills_a_size_left_empty) {
    expect_child_passes("environment_fills_an_empty_size", {"CREW_NUM_THREADS=2"});
}
TEST(configure_default_pool, a_size_in_code_wins_over_an_invalid_crew_num_threads) {
    expect_child_passes("code_size_wins_over_invalid_environment", {"CREW_NUM_THREADS=abc"});
}
TEST(configure_default_pool, an_invalid_crew_num_threads_still_counts_when_the_size_is_empty) {
    expect_child_passes("invalid_environment_still_throws_without_a_size", {"CREW_NUM_THREADS=abc"});
}
TEST(configure_default_pool, the_last_call_before_the_first_use_wins) {
    expect_child_passes("last_call_wins", {"CREW_NUM_THREADS="});
}
TEST(configure_default_pool, invalid_options_change_nothing) {
    expect_child_passes("invalid_options_change_nothing", {"CREW_NUM_THREADS="});
}
TEST(configure_default_pool, after_the_first_use_throws_usage_error_and_changes_nothing) {
    expect_child_passes("after_first_use", {"CREW_NUM_THREADS="});
}
TEST(configure_default_pool, a_forked_child_starts_its_default_pool_with_the_configuration) {
    if (crew::detail::under_tsan) GTEST_SKIP() << "TSan cannot start threads in a forked child";
    expect_child_passes("forked_child_uses_the_configuration", {"CREW_NUM_THREADS="});
}
TEST(configure_default_pool, racing_a_first_use_one_of_the_two_comes_first) {
    expect_child_passes("races_the_first_use", {"CREW_NUM_THREADS="});
}

TEST(configure_default_pool, api_example) {
    edge::child_result r = edge::run_helper(
        {"--gtest_also_run_disabled_tests", "--gtest_filter=DISABLED_child.api_example"}, {"CREW_NUM_THREADS="});
    EXPECT_EQ(r.exit_code(), 0) << r.describe();
    EXPECT_NE(r.output.find("[  PASSED  ] 1 test."), std::string::npos) << r.describe();
    EXPECT_NE(r.output.find("crew::configure_default_pool: the default pool already exists"), std::string::npos)
        << r.describe();
    for (const char* line : {"worker 0 up\n", "worker 1 up\n", "worker 2 up\n", "worker 3 up\n"})
        EXPECT_NE(r.output.find(line), std::string::npos) << line << r.describe();
}

// The child scenarios (run only through expect_child_passes).

TEST(DISABLED_child, api_example) {
    // --- example: configure_default_pool (the body of main)
    crew::pool_options options;
    options.threads = 4;                   // wins over CREW_NUM_THREADS
    options.name = "app";                  // app-0 ... app-3
    options.on_thread_start = [](std::size_t i) { std::printf("worker %zu up\n", i); };
    crew::configure_default_pool(options); // before the first use
    auto [a, b] = crew::join([] { return 1; }, [] { return 2; });  // the default pool starts now
    try {
        crew::configure_default_pool(options);
    } catch (const crew::usage_error& e) { // too late: the default pool exists
        std::printf("%s\n", e.what());
    }
    // ---
    EXPECT_EQ(a + b, 3);
    EXPECT_EQ(crew::default_pool().size(), 4u);
    EXPECT_TRUE(eventually([] { return has_threads_named({"app-0", "app-1", "app-2", "app-3"}); }));
    // The hooks print as the workers start. Four tasks that wait for each other need all four
    // workers, and a worker's first task runs after its hook returned.
    std::atomic<int> arrived{0};
    crew::task_group g;
    for (int i = 0; i < 4; ++i)
        g.run([&] {
            arrived.fetch_add(1);
            while (arrived.load() < 4) std::this_thread::yield();
        });
    g.wait();
    std::fflush(stdout);
}

struct hook_counts {
    std::vector<std::atomic<int>> starts = std::vector<std::atomic<int>>(crew::max_threads);
    std::atomic<int> stops{0};
    int total_starts() const {
        int s = 0;
        for (auto& x : starts) s += x.load();
        return s;
    }
};

TEST(DISABLED_child, configure_takes_effect) {
    crew_test::watchdog dog(60s);
    static hook_counts hooks;
    static std::atomic<int> handled{0};
    crew::pool_options options;
    options.threads = 3;  // wins over CREW_NUM_THREADS=5
    options.name = "cfgpool";
    options.on_unhandled_exception = [](std::exception_ptr) { ++handled; };
    options.on_thread_start = [](std::size_t i) { ++hooks.starts[i]; };
    options.on_thread_stop = [](std::size_t) { ++hooks.stops; };
    crew::configure_default_pool(options);

    EXPECT_EQ(crew::default_pool().size(), 3u);
    auto [a, b] = crew::join([] { return 1; }, [] { return 2; });
    EXPECT_EQ(a + b, 3);
    ASSERT_TRUE(eventually([] { return hooks.total_starts() == 3; }));
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(hooks.starts[i].load(), 1) << "worker " << i;
    EXPECT_TRUE(has_threads_named({"cfgpool-0", "cfgpool-1", "cfgpool-2"}));  // named before the hooks ran
    crew::spawn([] { throw std::runtime_error("boom"); });
    EXPECT_TRUE(eventually([] { return handled.load() == 1; }));
    EXPECT_EQ(hooks.stops.load(), 0);  // the default pool never stops
}

TEST(DISABLED_child, environment_fills_an_empty_size) {
    crew::pool_options options;
    options.name = "envcfg";
    crew::configure_default_pool(options);
    EXPECT_EQ(crew::default_pool().size(), 2u);  // CREW_NUM_THREADS=2
    EXPECT_TRUE(eventually([] { return has_threads_named({"envcfg-0", "envcfg-1"}); }));
}

TEST(DISABLED_child, code_size_wins_over_invalid_environment) {
    crew::pool_options options;
    options.threads = 2;
    crew::configure_default_pool(options);
    EXPECT_NO_THROW(crew::task_group{});  // checks the environment as the default pool would
    EXPECT_EQ(crew::default_pool().size(), 2u);
}

TEST(DISABLED_child, invalid_environment_still_throws_without_a_size) {
    crew::pool_options options;
    options.name = "nosize";
    crew::configure_default_pool(options);
    EXPECT_THROW(crew::task_group{}, std::invalid_argument);
    EXPECT_THROW(crew::default_pool(), std::invalid_argument);
    // Not created: configuring a size now is still allowed, and then the pool starts.
    options.threads = 2;
    crew::configure_default_pool(options);
    EXPECT_EQ(crew::default_pool().size(), 2u);
}

TEST(DISABLED_child, last_call_wins) {
    crew::pool_options first;
    first.threads = 2;
    first.name = "first";
    crew::configure_default_pool(first);
    crew::pool_options second;
    second.threads = 3;
    second.name = "second";
    crew::configure_default_pool(second);
    EXPECT_EQ(crew::default_pool().size(), 3u);
    EXPECT_TRUE(eventually([] { return has_threads_named({"second-0", "second-1", "second-2"}); }));
    EXPECT_EQ(thread_names().count("first-0"), 0u);
}

TEST(DISABLED_child, invalid_options_change_nothing) {
    crew::pool_options good;
    good.threads = 2;
    crew::configure_default_pool(good);
    crew::pool_options bad;
    bad.threads = 0;
    EXPECT_THROW(crew::configure_default_pool(bad), std::invalid_argument);
    bad.threads = crew::max_threads + 1;
    EXPECT_THROW(crew::configure_default_pool(bad), std::invalid_argument);
    EXPECT_EQ(crew::default_pool().size(), 2u);
}

TEST(DISABLED_child, after_first_use) {
    auto [a, b] = crew::join([] { return 1; }, [] { return 2; });  // creates the default pool
    EXPECT_EQ(a + b, 3);
    const std::size_t size = crew::default_pool().size();
    static std::atomic<int> starts{0};
    crew::pool_options options;
    options.threads = size + 1;
    options.on_thread_start = [](std::size_t) { ++starts; };
    try {
        crew::configure_default_pool(options);
        ADD_FAILURE() << "no usage_error";
    } catch (const crew::usage_error& e) {
        EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
    }
    EXPECT_THROW(crew::default_pool().run([&] { crew::configure_default_pool(options); }), crew::usage_error);
    EXPECT_EQ(crew::default_pool().size(), size);
    crew::parallel_for(0, 10'000, [](int) {});
    EXPECT_EQ(starts.load(), 0);
}

TEST(DISABLED_child, forked_child_uses_the_configuration) {
    static std::atomic<int> starts{0};
    crew::pool_options options;
    options.threads = 3;
    options.name = "forked";
    options.on_thread_start = [](std::size_t) { ++starts; };
    crew::configure_default_pool(options);
    EXPECT_EQ(crew::default_pool().size(), 3u);
    ASSERT_TRUE(eventually([] { return starts.load() == 3; }));
    // Under ASan, fork only while no worker allocates (see tests/edge/process_test.cpp).
    crew::detail::registry& r = crew::detail::registry_of(crew::default_pool());
    ASSERT_TRUE(eventually([&] { return r.lot().sleepers() == 3; }));
    edge::child_result child = edge::fork_and_wait([] {
        starts = 0;
        if (crew::default_pool().size() != 3) return 1;
        if (crew::join([] { return 1; }, [] { return 2; }).second != 2) return 2;
        if (!eventually([] { return starts.load() == 3; })) return 3;
        if (!eventually([] { return has_threads_named({"forked-0", "forked-1", "forked-2"}); })) return 4;
        return 0;
    });
    EXPECT_EQ(child.exit_code(), 0) << child.describe();
}

TEST(DISABLED_child, races_the_first_use) {
    crew_test::watchdog dog(60s);
    std::atomic<bool> go{false};
    std::atomic<int> configured{-1};
    std::vector<std::size_t> sizes(3);
    std::vector<std::thread> threads;
    threads.emplace_back([&] {
        while (!go.load()) std::this_thread::yield();
        crew::pool_options options;
        options.threads = crew::default_concurrency() + 1;  // tells the two outcomes apart
        options.name = "raced";
        try {
            crew::configure_default_pool(options);
            configured = 1;
        } catch (const crew::usage_error&) {
            configured = 0;
        }
    });
    for (std::size_t t = 0; t < sizes.size(); ++t)
        threads.emplace_back([&, t] {
            while (!go.load()) std::this_thread::yield();
            sizes[t] = crew::default_pool().size();
        });
    go = true;
    for (auto& t : threads) t.join();
    ASSERT_NE(configured.load(), -1);
    for (std::size_t s : sizes) EXPECT_EQ(s, sizes[0]);
    if (configured.load() == 1) EXPECT_EQ(sizes[0], crew::default_concurrency() + 1);
    else EXPECT_EQ(sizes[0], crew::default_concurrency());
}

}  // namespace
