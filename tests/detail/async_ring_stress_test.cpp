// async_ring under real threads: owner + 2 thieves, 10,000,000 tasks in all (shrunk by
// CREW_TEST_SCALE_DOWN), with overflows to an injector and steals between the thieves' rings;
// every task is taken exactly once. Labelled `stress`, like tests/reliability's exactly-once test.
#include <gtest/gtest.h>

#include "detail/async_ring_support.hpp"
#include "support/watchdog.hpp"

namespace {

TEST(async_ring_stress, ten_million_tasks_exactly_once) {
    crew_test::watchdog dog(std::chrono::seconds(600));
    // Two runs of 5,000,000: one from index 0, one crossing the 2^32 wrap early.
    for (std::uint32_t first : {0u, 0u - 100'000u}) {
        crew_test::ring_exactly_once<256> run(crew_test::scaled(5'000'000), first);
        run.go();
        run.expect_exactly_once();
    }
}

}  // namespace
