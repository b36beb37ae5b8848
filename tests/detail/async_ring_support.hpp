// tests/detail/async_ring_support.hpp -- the owner + 2 thieves exactly-once run of async_ring,
// shared by async_ring_test.cpp (short) and async_ring_stress_test.cpp (10,000,000 tasks).
//
// Thread 0 owns ring 0 and pushes every id (overflowing to a mutex-protected injector when the
// ring is full), popping now and then; threads 1 and 2 own rings 1 and 2, steal from ring 0 and
// from each other's ring, pop their own, and drain the injector. Every id must be taken exactly
// once, by exactly one pop, steal or injector take.
#pragma once

#include <crew/detail/async_ring.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace crew_test {

struct ring_item {
    long id = 0;
};

template <std::size_t Capacity>
class ring_exactly_once {
    using ring = crew::detail::async_ring<ring_item, crew::detail::std_atomics, Capacity>;

public:
    ring_exactly_once(long n, std::uint32_t first_index)
        : n_(n), items_(static_cast<std::size_t>(n)), hits_(std::make_unique<std::atomic<std::uint8_t>[]>(n)) {
        for (long i = 0; i < n; ++i) {
            items_[static_cast<std::size_t>(i)].id = i;
            hits_[i].store(0, std::memory_order_relaxed);
        }
        for (auto& r : rings_) r = std::make_unique<ring>(first_index);
    }

    void go() {
        std::thread t1([this] { thief(1); });
        std::thread t2([this] { thief(2); });
        owner();
        t1.join();
        t2.join();
    }

    void expect_exactly_once() const {
        long lost = 0, twice = 0, first_bad = -1;
        for (long i = 0; i < n_; ++i) {
            std::uint8_t h = hits_[i].load(std::memory_order_relaxed);
            if (h == 1) continue;
            (h == 0 ? lost : twice) += 1;
            if (first_bad < 0) first_bad = i;
        }
        EXPECT_EQ(lost, 0) << "tasks never taken; first bad id " << first_bad;
        EXPECT_EQ(twice, 0) << "tasks taken twice; first bad id " << first_bad;
        EXPECT_GT(overflows_.load(), 0) << "the run never overflowed: it did not test the overflow path";
        EXPECT_GT(steals_.load(), 0) << "no steal succeeded";
    }

private:
    void take(ring_item* p) {
        ASSERT_NE(p, nullptr);
        hits_[p->id].fetch_add(1, std::memory_order_relaxed);
        taken_.fetch_add(1, std::memory_order_release);
    }
    bool finished() const { return taken_.load(std::memory_order_acquire) >= n_; }

    void push(int self, ring_item* p) {
        auto sink = [this](ring_item** items, std::size_t k) {
            std::lock_guard lock(injector_mutex_);
            injector_.insert(injector_.end(), items, items + k);
            overflows_.fetch_add(1, std::memory_order_relaxed);
        };
        rings_[self]->push_back(p, sink);
    }
    bool take_injected() {
        std::lock_guard lock(injector_mutex_);
        if (injector_.empty()) return false;
        ring_item* p = injector_.front();
        injector_.pop_front();
        take(p);
        return true;
    }

    void owner() {
        while (started_.load(std::memory_order_acquire) < 2) std::this_thread::yield();  // thieves at work
        for (long i = 0; i < n_; ++i) {
            // Halfway, if the thieves have kept ring 0 from ever filling (as they can, stealing half
            // at a time, on a run shrunk by CREW_TEST_SCALE_DOWN), hold them off ring 0 and push
            // without popping until the ring overflows, so every run tests the overflow path while
            // the thieves go on stealing from each other and draining the injector.
            if (i == n_ / 2 && overflows_.load(std::memory_order_relaxed) == 0)
                hold_.store(true, std::memory_order_relaxed);
            push(0, &items_[static_cast<std::size_t>(i)]);
            if (hold_.load(std::memory_order_relaxed)) {
                if (overflows_.load(std::memory_order_relaxed) > 0) hold_.store(false, std::memory_order_relaxed);
                continue;
            }
            if ((i & 7) == 0)
                if (ring_item* p = rings_[0]->pop()) take(p);
        }
        hold_.store(false, std::memory_order_relaxed);
        while (!finished()) {
            // Until a thief has stolen, the owner leaves its ring to the thieves: on a loaded machine
            // the owner can push every id before a thief gets a time slice, and the run would then
            // not test a steal at all. The thieves keep trying ring 0, so they empty it.
            ring_item* p = steals_.load(std::memory_order_relaxed) > 0 ? rings_[0]->pop() : nullptr;
            if (p) {
                take(p);
            } else if (!take_injected()) {
                std::this_thread::yield();
            }
        }
    }

    void thief(int self) {
        const int other = 3 - self;
        std::uint64_t round = 0;
        started_.fetch_add(1, std::memory_order_release);
        while (!finished()) {
            ++round;
            const bool from_other = (round & 3) == 0 || hold_.load(std::memory_order_relaxed);
            auto s = rings_[from_other ? other : 0]->steal_into(*rings_[self]);
            if (s.status == crew::detail::ring_steal::success) {
                steals_.fetch_add(1, std::memory_order_relaxed);
                take(s.task);
            }
            // Keep some of the stolen tasks a while, so the other thief can steal from this ring.
            for (int k = 0; k < 3; ++k)
                if (ring_item* p = rings_[self]->pop()) take(p);
            if ((round & 15) == 0) take_injected();
            if (s.status != crew::detail::ring_steal::success && (round & 63) == 0) std::this_thread::yield();
        }
    }

    long n_;
    std::vector<ring_item> items_;
    std::unique_ptr<std::atomic<std::uint8_t>[]> hits_;
    std::unique_ptr<ring> rings_[3];
    std::atomic<long> taken_{0};
    std::atomic<long> overflows_{0};
    std::atomic<long> steals_{0};
    std::atomic<int> started_{0};
    std::atomic<bool> hold_{false};  // owner writes; thieves read: keep off ring 0 while set
    std::mutex injector_mutex_;
    std::deque<ring_item*> injector_;
};

}  // namespace crew_test
