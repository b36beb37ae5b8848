// crew/detail/completion.hpp -- a one-shot "done" flag that one waiter can sleep on.
//
// set() is called once by the thread that finishes the work; one waiter watches it:
//   * a worker waiting inside its pool keeps running other tasks and, when it finds none, parks in
//     its pool's parking lot after announce_parked(); set() then wakes that lot (notify_all);
//   * a thread outside any pool calls block(), which futex-waits on this word.
//
// state_ (one word): done_bit | blocked_bit | (parking* | parked_bit). The parking lot's address is
// stored in the word itself, so set() needs nothing from *this after its exchange: the waiter may
// return and destroy the completion (it often lives on the waiter's stack) the moment the exchange
// lands. The futex wake that may follow uses only the address, which is harmless if stale.
#pragma once

#include <bit>
#include <cstdint>

#include "crew/detail/atomics.hpp"
#include "crew/detail/os.hpp"
#include "crew/detail/parking.hpp"

namespace crew::detail {

class completion {
    static constexpr std::uintptr_t done_bit = 1;
    static constexpr std::uintptr_t blocked_bit = 2;
    static constexpr std::uintptr_t parked_bit = 4;
    static constexpr std::uintptr_t flag_mask = 7;
    static_assert(alignof(parking) > flag_mask, "parking pointers need three free low bits");
    static_assert(std::endian::native == std::endian::little, "the futex word is the low half of state_");

public:
    // Any thread. acquire: pairs with set()'s release, so the finished work's results are visible.
    bool is_set() const noexcept { return (state_.load(std::memory_order_acquire) & done_bit) != 0; }

    // The finishing thread, once.
    void set() noexcept {
        // acq_rel: release publishes the results to is_set()/block(); acquire reads the waiter's
        // announcement (the parking pointer) that it stored with release in announce_parked().
        const void* address = &state_;
        std::uintptr_t old = state_.exchange(done_bit, std::memory_order_acq_rel);
        if (old != 0) wake_cold(old, address);  // *this may already be gone: use only these two
    }

    // Make the flag reusable. Only while nobody else touches it.
    void reset() noexcept { state_.store(0, std::memory_order_relaxed); }

    // The waiting worker, before it parks in `lot`. Returns false when the flag is already set.
    bool announce_parked(parking* lot) noexcept {
        std::uintptr_t s = state_.load(std::memory_order_relaxed);
        const auto mine = reinterpret_cast<std::uintptr_t>(lot) | parked_bit;
        do {
            if (s & done_bit) return false;
            // release: pairs with set()'s acquire exchange (it reads the pointer from this value).
        } while (!state_.compare_exchange_weak(s, mine, std::memory_order_release, std::memory_order_relaxed));
        return true;
    }

    // A thread outside every pool: sleep until set().
    void block() noexcept {
        std::uintptr_t s = state_.load(std::memory_order_acquire);
        while (!(s & done_bit)) {
            if (!(s & blocked_bit)) {
                if (!state_.compare_exchange_weak(s, s | blocked_bit, std::memory_order_acquire,
                                                  std::memory_order_acquire))
                    continue;
                s |= blocked_bit;
            }
            os::futex_wait(&state_, static_cast<std::uint32_t>(s));
            s = state_.load(std::memory_order_acquire);
        }
    }

private:
    static void wake_cold(std::uintptr_t old, const void* address) noexcept {
        if (old & parked_bit) reinterpret_cast<parking*>(old & ~flag_mask)->notify_all();
        if (old & blocked_bit) os::futex_wake(address, os::wake_everyone);
    }

    // state_: see the header comment. Written by the waiter (announce/block) and the setter.
    std_atomics::atomic<std::uintptr_t> state_{0};
};

}  // namespace crew::detail
