// Pool lifetimes and sizes: the size limit, a failed thread start, and submissions made during
// the destructor's drain by code that the drain itself waits for.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "edge/child.hpp"
#include "support/pool_sizes.hpp"
#include "support/sanitizers.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

using crew_test::sanitized;

// ---- sizes ----

TEST(pool_size, max_threads_is_accepted_and_one_more_is_rejected) {
    crew_test::watchdog dog(300s);
    static_assert(crew::max_threads == 1024);
    crew::pool_options options;
    options.threads = crew::max_threads;
    options.stack_size = std::size_t{256} << 10;  // 1024 x 64 MiB of address space is not the point here
    {
        crew::pool p(options);
        EXPECT_EQ(p.size(), crew::max_threads);
        std::atomic<int> ran{0};
        for (int i = 0; i < 2000; ++i) p.spawn([&] { ran.fetch_add(1, std::memory_order_relaxed); });
        EXPECT_EQ(p.run([] { return 5; }), 5);
        while (ran.load() != 2000) std::this_thread::yield();
    }
    options.threads = crew::max_threads + 1;
    EXPECT_THROW(crew::pool{options}, std::invalid_argument);
    EXPECT_THROW(crew::pool{crew::max_threads + 1}, std::invalid_argument);
    EXPECT_THROW(crew::pool{100'000}, std::invalid_argument);
}

// A failed thread start throws std::system_error after stopping and joining the threads that did
// start. Run by crew_edge_child in a fresh (single-threaded) process: outside the sanitizers it caps
// its address space (RLIMIT_AS) so that three 64 MiB worker stacks fit and the fourth does not; a
// pool of 3 still starts under the cap, a pool of 16 then fails part-way. The sanitizers reserve
// terabytes of shadow memory and abort (instead of failing) when their own mappings hit the cap, so
// there the helper asks for a stack no machine can map, which fails at the first thread.
TEST(pool_size, a_failed_thread_start_throws_system_error_and_joins_the_started_threads) {
    edge::child_result r = edge::run_helper({"thread_start_failure"});
    EXPECT_EQ(r.exit_code(), 0) << r.describe();
    EXPECT_NE(r.output.find("pool of 16: std::system_error"), std::string::npos) << r.describe();
    if (!sanitized) {
        EXPECT_NE(r.output.find("pool of 3 under the cap: ran 3"), std::string::npos) << r.describe();
    }
}

// ---- submissions during the destructor's drain ----

// A task of pool p waits (through q.run) for code on another pool's worker; that code submits to
// p while p's destructor drains. p is alive (its destructor waits for the task), so the submission
// either is accepted and runs before the destructor returns, or throws pool_closed_error.
class drain_submission : public crew_test::pool_test {};

TEST_P(drain_submission, code_the_drain_waits_for_gets_pool_closed_error) {
    crew_test::watchdog dog(120s);
    crew::pool q(2);
    auto p = std::make_unique<crew::pool>(workers());
    crew::pool* raw = p.get();
    std::atomic<bool> destroying{false};
    std::atomic<int> accepted{0}, rejected{0}, ran{0};
    p->spawn([&] {
        q.run([&] {
            while (!destroying.load()) std::this_thread::yield();
            for (;;) {
                try {
                    raw->spawn([&] { ran.fetch_add(1); });
                    accepted.fetch_add(1);
                } catch (const crew::pool_closed_error&) {
                    rejected.fetch_add(1);
                    return;
                }
                std::this_thread::sleep_for(50us);
            }
        });
    });
    std::thread destroyer([&] {
        destroying.store(true);
        p.reset();
    });
    destroyer.join();
    EXPECT_EQ(rejected.load(), 1);
    EXPECT_EQ(ran.load(), accepted.load());  // everything accepted ran before ~pool returned
}

CREW_ALL_POOL_SIZES(drain_submission);

}  // namespace
