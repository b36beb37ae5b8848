// tests/reliability/stress_support.hpp -- shared pieces of the real-thread stress tests: the
// seed (printed, reproducible), the tier (fast or long), and chaos injection (random yields and
// spins that shake up the interleavings).
//
// Reproduce a failure with the seed it printed:  CREW_STRESS_SEED=<seed> ./stress_exactly_once_test
// Long tier (scripts/test-long.sh):             CREW_STRESS_LONG=1 ./stress_exactly_once_test
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "support/watchdog.hpp"

namespace crew_test {

inline bool long_tier() {
    const char* s = std::getenv("CREW_STRESS_LONG");
    return s != nullptr && s[0] == '1';
}

// fast: the fast tier's count; slow: the long tier's; both shrunk by CREW_TEST_SCALE_DOWN.
inline long tier_count(long fast, long slow) { return scaled(long_tier() ? slow : fast); }

inline std::uint64_t mix64(std::uint64_t x) noexcept {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// The test's seed: CREW_STRESS_SEED if set, else fresh; printed so any failure can be replayed.
// Every random decision of a test is a pure function of (seed, id), so a replay makes the same
// decisions (the OS scheduler still differs, which is why the seeds vary from run to run).
inline std::uint64_t test_seed() {
    std::uint64_t seed;
    if (const char* s = std::getenv("CREW_STRESS_SEED"))
        seed = std::strtoull(s, nullptr, 0);
    else
        seed = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::printf("[ seed     ] %s.%s: CREW_STRESS_SEED=%llu\n", info ? info->test_suite_name() : "?",
                info ? info->name() : "?", static_cast<unsigned long long>(seed));
    std::fflush(stdout);
    ::testing::Test::RecordProperty("seed", std::to_string(seed));
    return seed;
}

// Chaos for item `id`: about 1 in 64 yields the core, 1 in 16 spins a little, the rest run on.
inline void chaos(std::uint64_t seed, std::uint64_t id) noexcept {
    std::uint64_t r = mix64(seed ^ (id * 0x9e3779b97f4a7c15ull));
    if ((r & 63) == 0) {
        std::this_thread::yield();
    } else if ((r & 15) == 1) {
        for (std::uint64_t i = 0, n = (r >> 8) & 255; i < n; ++i) asm volatile("" ::: "memory");
    }
}

// True for a fraction `per_million` / 1,000,000 of ids (deterministic in (seed, id)).
inline bool chosen(std::uint64_t seed, std::uint64_t id, std::uint64_t per_million) noexcept {
    return mix64(seed * 31 + id) % 1000000 < per_million;
}

}  // namespace crew_test
