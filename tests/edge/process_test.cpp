// Process events: static destruction, std::exit from a task, detached work at exit, fork(), and
// CREW_NUM_THREADS parsing. Each scenario runs in a child process reaped with a watchdog
// (child.hpp), so a hang shows up as a failure.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <initializer_list>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "edge/child.hpp"
#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

// ThreadSanitizer does not support starting threads in a child forked from a multithreaded
// process (by default the child dies at its first pthread_create), so the fork scenarios whose
// child starts a pool are skipped there; they run in every other build.
#define CREW_SKIP_IF_TSAN_CHILD_THREADS()                                                            \
    do {                                                                                            \
        if (crew::detail::under_tsan) GTEST_SKIP() << "TSan cannot start threads in a forked child"; \
    } while (0)

using crew::detail::under_asan;

// Under ASan (clang 14), fork() while another thread is inside ASan's allocator copies its locked
// allocator mutex into the child, whose next allocations then hang inside the ASan runtime (glibc's
// own malloc has fork handlers for this; ASan's got them later). So under ASan the fork tests first
// wait until every worker of the given pools is asleep, when no thread of the parent allocates.
// Other builds fork at once, with workers possibly still running.
void quiesce_before_fork(std::initializer_list<crew::pool*> pools) {
    if (!under_asan) return;
    for (crew::pool* p : pools)
        while (crew::detail::registry_of(*p).lot().sleepers() != p->size()) std::this_thread::yield();
}

long sum_to(long n) {
    std::vector<long> v(static_cast<std::size_t>(n));
    std::iota(v.begin(), v.end(), 1L);
    return crew::parallel_reduce(v.begin(), v.end(), 0L);
}

// ---- exit and static destruction (crew_edge_child, fork + exec) ----

TEST(process_exit, a_static_object_may_use_the_default_pool_in_its_destructor) {
    edge::child_result r = edge::run_helper({"static_destructor"});
    EXPECT_EQ(r.exit_code(), 0) << r.describe();
    EXPECT_NE(r.output.find("sum=5000050000 join=3 run=7"), std::string::npos) << r.describe();
    EXPECT_EQ(r.output.find("terminate"), std::string::npos) << r.describe();
}

TEST(process_exit, std_exit_from_a_task_exits_with_its_status) {
    edge::child_result r = edge::run_helper({"exit_from_task"});
    EXPECT_EQ(r.exit_code(), 3) << r.describe();
    EXPECT_EQ(r.output.find("terminate"), std::string::npos) << r.describe();
    EXPECT_EQ(r.output.find("unreachable"), std::string::npos) << r.describe();
}

TEST(process_exit, a_never_ending_spawned_task_does_not_keep_the_process_alive) {
    edge::child_result r = edge::run_helper({"endless_task"});
    EXPECT_EQ(r.exit_code(), 0) << r.describe();
    EXPECT_NE(r.output.find("main returns"), std::string::npos) << r.describe();
}

// ---- CREW_NUM_THREADS: surrounding whitespace is ignored on both sides ----

TEST(process_env, crew_num_threads_ignores_surrounding_whitespace) {
    for (const char* value : {"3", " 3", "3 ", " 3 ", "\t3\n"}) {
        edge::child_result r = edge::run_helper({"num_threads"}, {std::string("CREW_NUM_THREADS=") + value});
        EXPECT_EQ(r.exit_code(), 0) << r.describe();
        EXPECT_NE(r.output.find("size=3\n"), std::string::npos) << "value '" << value << "': " << r.describe();
    }
}

TEST(process_env, crew_num_threads_rejects_what_is_not_a_whole_number_in_range) {
    for (const char* value : {"3 4", "3x", "x3", "-3", "0", "1025", "99999999999999999999999", " 3.0"}) {
        edge::child_result r = edge::run_helper({"num_threads"}, {std::string("CREW_NUM_THREADS=") + value});
        EXPECT_EQ(r.exit_code(), 0) << r.describe();
        EXPECT_NE(r.output.find("invalid_argument: crew: CREW_NUM_THREADS"), std::string::npos)
            << "value '" << value << "': " << r.describe();
    }
}

TEST(process_env, an_empty_or_blank_crew_num_threads_means_unset) {
    for (const char* value : {"", "  "}) {
        edge::child_result r = edge::run_helper({"num_threads"}, {std::string("CREW_NUM_THREADS=") + value});
        EXPECT_NE(r.output.find("size=" + std::to_string(crew::default_concurrency()) + "\n"), std::string::npos)
            << "value '" << value << "': " << r.describe();
    }
}

// ---- fork ----

TEST(process_fork, a_child_forked_after_the_default_pool_started_gets_a_working_default_pool) {
    CREW_SKIP_IF_TSAN_CHILD_THREADS();
    crew_test::watchdog dog(120s);
    ASSERT_EQ(sum_to(1000), 500500);  // the default pool exists and has run work
    quiesce_before_fork({&crew::default_pool()});
    edge::child_result r = edge::fork_and_wait([] {
        long s = sum_to(100'000);
        auto [a, b] = crew::join([] { return 20; }, [] { return 22; });
        int c = crew::default_pool().submit([] { return 1; }).get();
        return s == 5000050000L && a + b == 42 && c == 1 ? 42 : 1;
    });
    EXPECT_EQ(r.exit_code(), 42) << r.describe();
    EXPECT_EQ(sum_to(1000), 500500);  // the parent's pool is unaffected
}

TEST(process_fork, a_child_that_does_not_use_crew_is_unaffected_and_may_exit_normally) {
    crew_test::watchdog dog(120s);
    ASSERT_EQ(sum_to(1000), 500500);
    quiesce_before_fork({&crew::default_pool()});
    edge::child_result quick = edge::fork_and_wait([] { return 7; });  // _exit
    EXPECT_EQ(quick.exit_code(), 7) << quick.describe();
    // std::exit runs static destructors in the child: they must not wait for the parent's workers.
    edge::child_result normal = edge::fork_and_wait([]() -> int { std::exit(8); });
    EXPECT_EQ(normal.exit_code(), 8) << normal.describe();
}

class process_fork_from_task : public crew_test::pool_test {};

TEST_P(process_fork_from_task, a_child_forked_inside_a_task_can_use_crew) {
    CREW_SKIP_IF_TSAN_CHILD_THREADS();
    crew_test::watchdog dog(120s);
    ASSERT_EQ(sum_to(1000), 500500);  // the default pool exists too
    crew::pool& p = pool();
    edge::child_result r = p.run([&p] {
        // Under ASan: every other worker asleep (this one runs the task, so it is not).
        if (under_asan)
            while (crew::detail::registry_of(p).lot().sleepers() + 1 != p.size()) std::this_thread::yield();
        quiesce_before_fork({&crew::default_pool()});
        return edge::fork_and_wait([] {
            // The child's only thread was a worker of the parent's pool; here it is not.
            if (crew::this_worker_index() != -1) return 2;
            int c = crew::default_pool().submit([] { return 2; }).get();
            auto [a, b] = crew::join([] { return 20; }, [] { return 20; });
            return a + b + c == 42 && sum_to(10'000) == 50005000L ? 42 : 1;
        });
    });
    EXPECT_EQ(r.exit_code(), 42) << r.describe();
}

TEST_P(process_fork_from_task, an_explicit_pool_of_the_parent_is_a_usage_error_in_the_child) {
    crew_test::watchdog dog(120s);
    crew::pool& p = pool();
    EXPECT_EQ(p.run([] { return 1; }), 1);
    quiesce_before_fork({&p});
    edge::child_result r = edge::fork_and_wait([&p] {
        int code = 0;
        auto expect_usage_error = [&](int bit, auto&& submit) {
            try {
                submit();
            } catch (const crew::usage_error&) {
                return;
            } catch (...) {
            }
            code |= bit;
        };
        expect_usage_error(1, [&] { p.spawn([] {}); });
        expect_usage_error(2, [&] { (void)p.submit([] { return 1; }); });
        expect_usage_error(4, [&] { (void)p.run([] { return 1; }); });
        expect_usage_error(8, [&] {
            crew::task_group g(p);
            g.run([] {});
        });
        return code;
    });
    EXPECT_EQ(r.exit_code(), 0) << "bits of the submissions that did not throw usage_error: " << r.describe();
    EXPECT_EQ(p.run([] { return 2; }), 2);  // still fine in the parent
}

TEST_P(process_fork_from_task, destroying_an_explicit_pool_of_the_parent_in_the_child_does_not_hang) {
    crew_test::watchdog dog(120s);
    auto owned = std::make_unique<crew::pool>(workers());
    EXPECT_EQ(owned->run([] { return 1; }), 1);
    quiesce_before_fork({owned.get()});
    edge::child_result r = edge::fork_and_wait([&owned] {
        owned.reset();
        return 5;
    });
    EXPECT_EQ(r.exit_code(), 5) << r.describe();
    EXPECT_EQ(owned->run([] { return 2; }), 2);
}

CREW_ALL_POOL_SIZES(process_fork_from_task);

}  // namespace
