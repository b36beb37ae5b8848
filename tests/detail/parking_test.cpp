// The sleep/wake protocol on its own: counting rules, and no lost wakeups with real threads.
#include <crew/detail/parking.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "support/watchdog.hpp"

namespace {

using crew::detail::parking;

TEST(parking, at_most_about_half_of_the_workers_search) {
    parking lot(4);
    EXPECT_TRUE(lot.try_begin_search());
    EXPECT_TRUE(lot.try_begin_search());
    EXPECT_FALSE(lot.try_begin_search());
    EXPECT_FALSE(lot.end_search());
    EXPECT_TRUE(lot.end_search());  // the last searcher
    parking single(1);
    EXPECT_TRUE(single.try_begin_search());  // one worker may always search
    EXPECT_FALSE(single.try_begin_search());
}

TEST(parking, notify_moves_a_sleeper_to_searching_and_hands_it_a_token) {
    parking lot(2);
    std::uint32_t key = lot.prepare_park();
    EXPECT_EQ(lot.sleepers(), 1u);
    EXPECT_TRUE(lot.wake_wanted());
    lot.notify_one();
    EXPECT_EQ(lot.sleepers(), 0u);
    EXPECT_EQ(lot.searching(), 1u);
    EXPECT_FALSE(lot.wake_wanted());
    EXPECT_TRUE(lot.park(key));  // epoch moved: returns at once, taking the token
    EXPECT_TRUE(lot.end_search());
}

TEST(parking, cancel_without_a_token_just_leaves) {
    parking lot(2);
    lot.prepare_park();
    EXPECT_FALSE(lot.cancel_park());
    EXPECT_EQ(lot.sleepers(), 0u);
    EXPECT_EQ(lot.searching(), 0u);
}

TEST(parking, notify_with_a_searcher_present_wakes_nobody) {
    parking lot(4);
    ASSERT_TRUE(lot.try_begin_search());
    lot.prepare_park();
    lot.notify_one();
    EXPECT_EQ(lot.sleepers(), 1u);  // the searcher will find the work
    EXPECT_FALSE(lot.cancel_park());
}

// A producer publishes one item at a time into a flag; consumers follow the protocol
// (announce, re-check, sleep). Every item must be consumed: a lost wakeup hangs (watchdog).
TEST(parking, no_lost_wakeups_under_real_threads) {
    crew_test::watchdog dog(std::chrono::seconds(120));
    constexpr int consumers = 3;
    const long rounds = crew_test::scaled(20000);
    parking lot(consumers);
    std::atomic<long> available{0};
    std::atomic<long> consumed{0};
    std::atomic<bool> stop{false};

    auto try_take = [&] {
        long a = available.load(std::memory_order_acquire);
        while (a > 0)
            if (available.compare_exchange_weak(a, a - 1, std::memory_order_acq_rel)) return true;
        return false;
    };
    std::vector<std::thread> threads;
    for (int c = 0; c < consumers; ++c) {
        threads.emplace_back([&] {
            bool searching = false;
            while (!stop.load(std::memory_order_acquire)) {
                if (try_take()) {
                    if (searching) {
                        searching = false;
                        if (lot.end_search()) lot.notify_one();
                    }
                    consumed.fetch_add(1, std::memory_order_acq_rel);
                    continue;
                }
                if (searching) {
                    searching = false;
                    lot.end_search();
                }
                std::uint32_t key = lot.prepare_park();
                if (available.load(std::memory_order_acquire) > 0 || stop.load(std::memory_order_acquire)) {
                    searching = lot.cancel_park();
                    continue;
                }
                searching = lot.park(key);
            }
            if (searching) lot.end_search();
        });
    }
    for (long i = 0; i < rounds; ++i) {
        available.fetch_add(1, std::memory_order_release);
        lot.notify_one();
        while (consumed.load(std::memory_order_acquire) <= i) std::this_thread::yield();
    }
    stop.store(true, std::memory_order_release);
    lot.notify_all();
    for (auto& t : threads) t.join();
    EXPECT_EQ(consumed.load(), rounds);
    EXPECT_EQ(lot.sleepers(), 0u);
    EXPECT_EQ(lot.searching(), 0u);
}

}  // namespace
