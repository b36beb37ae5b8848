// tests/reliability/stress_exactly_once_test.cpp -- every submitted task runs exactly once, under
// real threads with random yields and spins (docs/GUARANTEES.md, "exactly once").
//
// Fast tier: 1,000,000 ids per test; long tier (CREW_STRESS_LONG=1): 10,000,000. Each test prints
// its seed (CREW_STRESS_SEED=<n> replays the same decisions).
#include <crew/crew.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "reliability/stress_support.hpp"

namespace {

using crew_test::chaos;
using crew_test::mix64;

std::chrono::seconds limit() { return std::chrono::seconds(crew_test::long_tier() ? 3000 : 600); }

// One slot per id; a slot that ends at anything but 1 names a lost or duplicated task.
class ledger {
public:
    explicit ledger(long n) : n_(n), hits_(std::make_unique<std::atomic<std::uint8_t>[]>(n)) {
        for (long i = 0; i < n; ++i) hits_[i].store(0, std::memory_order_relaxed);
    }
    void hit(long id) noexcept {
        hits_[id].fetch_add(1, std::memory_order_relaxed);
        done_.fetch_add(1, std::memory_order_release);
    }
    // Polls (with a watchdog around) until n hits arrived; the pool runs the tasks.
    void wait_all() const {
        while (done_.load(std::memory_order_acquire) < n_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    void expect_exactly_once() const {
        long lost = 0, twice = 0, first_bad = -1;
        for (long i = 0; i < n_; ++i) {
            std::uint8_t h = hits_[i].load(std::memory_order_relaxed);
            if (h == 1) continue;
            (h == 0 ? lost : twice) += 1;
            if (first_bad < 0) first_bad = i;
        }
        EXPECT_EQ(lost, 0) << "tasks never ran; first bad id " << first_bad;
        EXPECT_EQ(twice, 0) << "tasks ran more than once; first bad id " << first_bad;
        EXPECT_EQ(done_.load(), n_);
    }

private:
    long n_;
    std::unique_ptr<std::atomic<std::uint8_t>[]> hits_;
    std::atomic<long> done_{0};
};

// Splits [lo, hi) in halves down to single ids, choosing per node (from the seed) between
// crew::join (stack jobs, stolen or popped back) and two crew::spawn calls (heap tasks).
void split(ledger& l, std::uint64_t seed, long lo, long hi) {
    if (hi - lo == 1) {
        chaos(seed, static_cast<std::uint64_t>(lo));
        l.hit(lo);
        return;
    }
    long mid = lo + (hi - lo) / 2;
    if (mix64(seed + static_cast<std::uint64_t>(lo) * 7 + static_cast<std::uint64_t>(hi)) & 1) {
        crew::join([&l, seed, lo, mid] { split(l, seed, lo, mid); }, [&l, seed, mid, hi] { split(l, seed, mid, hi); });
    } else {
        crew::spawn([&l, seed, lo, mid] { split(l, seed, lo, mid); });
        crew::spawn([&l, seed, mid, hi] { split(l, seed, mid, hi); });
    }
}

TEST(stress_exactly_once, join_and_spawn_tree) {
    crew_test::watchdog dog(limit());
    const std::uint64_t seed = crew_test::test_seed();
    const long n = crew_test::tier_count(1'000'000, 10'000'000);
    for (std::size_t workers : {2u, 4u}) {
        ledger l(n);
        crew::pool p(workers);
        p.spawn([&l, seed, n] { split(l, seed, 0, n); });
        l.wait_all();
        l.expect_exactly_once();
    }
}

// Outside threads submit (the injector path) while the tasks they submit spawn more (the deque
// path); both kinds of id must run once.
TEST(stress_exactly_once, outside_submitters_and_inside_spawns) {
    crew_test::watchdog dog(limit());
    const std::uint64_t seed = crew_test::test_seed();
    const long n = crew_test::tier_count(1'000'000, 10'000'000) / 2 * 2;  // even: ids come in pairs
    ledger l(n);
    crew::pool p(4);
    constexpr int submitters = 3;
    std::vector<std::thread> threads;
    for (int s = 0; s < submitters; ++s) {
        threads.emplace_back([&, s] {
            for (long pair = s; pair < n / 2; pair += submitters) {
                p.spawn([&l, seed, pair] {
                    chaos(seed, static_cast<std::uint64_t>(2 * pair));
                    crew::spawn([&l, seed, pair] {
                        chaos(seed, static_cast<std::uint64_t>(2 * pair + 1));
                        l.hit(2 * pair + 1);
                    });
                    l.hit(2 * pair);
                });
                if ((mix64(seed ^ static_cast<std::uint64_t>(pair)) & 1023) == 0) std::this_thread::yield();
            }
        });
    }
    for (auto& t : threads) t.join();
    l.wait_all();
    l.expect_exactly_once();
}

// Futures: each one yields its own task's value exactly once.
TEST(stress_exactly_once, submit_futures) {
    crew_test::watchdog dog(limit());
    const std::uint64_t seed = crew_test::test_seed();
    const long n = crew_test::tier_count(200'000, 2'000'000);
    crew::pool p(3);
    std::vector<crew::future<long>> futures;
    futures.reserve(static_cast<std::size_t>(n));
    for (long i = 0; i < n; ++i)
        futures.push_back(p.submit([seed, i] {
            chaos(seed, static_cast<std::uint64_t>(i));
            return i;
        }));
    long wrong = 0;
    for (long i = 0; i < n; ++i) wrong += futures[static_cast<std::size_t>(i)].get() != i;
    EXPECT_EQ(wrong, 0);
}

}  // namespace
