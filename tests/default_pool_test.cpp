// The default pool and CREW_NUM_THREADS. CTest runs this binary twice with different environments
// (see tests/CMakeLists.txt): CREW_NUM_THREADS=3 (also " 3" and "3 "), CREW_NUM_THREADS=abc, and
// under taskset.
#include <crew/crew.hpp>
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace {

// CREW_NUM_THREADS without surrounding whitespace (crew ignores it on both sides).
std::string env_value() {
    const char* s = std::getenv("CREW_NUM_THREADS");
    std::string v = s ? s : "";
    v.erase(0, v.find_first_not_of(" \t\n"));
    v.erase(v.find_last_not_of(" \t\n") + 1);
    return v;
}

TEST(default_pool, honours_or_rejects_crew_num_threads) {
    if (env_value() == "3") {
        EXPECT_EQ(crew::default_pool().size(), 3u);
        auto [a, b] = crew::join([] { return 1; }, [] { return 2; });
        EXPECT_EQ(a + b, 3);
    } else if (env_value() == "abc") {
        EXPECT_THROW(crew::default_pool(), std::invalid_argument);
        EXPECT_THROW(crew::join([] {}, [] {}), std::invalid_argument);
        EXPECT_THROW(crew::task_group{}, std::invalid_argument);
    } else {
        EXPECT_EQ(crew::default_pool().size(), crew::default_concurrency());
    }
}

// Run by CTest under `taskset -c 0` with CREW_EXPECT_CONCURRENCY=1: the affinity mask counts.
TEST(default_pool, follows_the_affinity_mask) {
    const char* expect = std::getenv("CREW_EXPECT_CONCURRENCY");
    if (expect == nullptr) GTEST_SKIP() << "only meaningful under taskset (see tests/CMakeLists.txt)";
    EXPECT_EQ(crew::default_concurrency(), std::stoul(expect));
    crew::pool p;
    EXPECT_EQ(p.size(), std::stoul(expect));
}

}  // namespace
