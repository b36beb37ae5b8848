// crew/detail/completion.hpp -- a one-shot "done" flag that one waiter can sleep on.
//
// set() is called once by the thread that finishes the work; one waiter watches it:
//   * a worker waiting inside its pool keeps running other tasks and, when it finds none, parks in
//     its pool's parking lot after announce_parked(); set() then wakes that lot (notify_all);
//   * a thread outside any pool calls block(), which futex-waits on this word.
//
// state_ (one word): done_bit | busy_bit | blocked_bit | (parking* | parked_bit). The parking lot's
// address is stored in the word itself.
//
// Lifetime: the completion often lives on the waiter's stack, and the parking lot belongs to the
// waiter's pool, which may be another pool than the setter's. So the waiter must not return while
// the setter still needs either. set() therefore finishes in one CAS when no waiter announced
// itself; otherwise it marks the word busy, wakes the lot, and only then publishes plain done_bit.
// The waiter treats "done but busy" as not yet done. The futex wake for a blocked thread comes after
// that, using only the address, which is harmless if stale (a spurious wake elsewhere at worst).
//
// C++20 review (release sequences continue only through RMWs). A waiter's acquire read that sees
// done_bit without busy_bit reads either set()'s CAS (acq_rel) or set_cold()'s final release store;
// both are the setter's own release, sequenced after the work it publishes, so no release sequence
// has to reach across a plain store. After set() nobody else writes the word (announce_parked()
// and block() CAS only while done_bit is clear), and the flag is one-shot: there is no reset (a
// task group makes a fresh completion per wait()). set()'s acquire reads the parking pointer from
// announce_parked()'s release CAS. Holds as written.
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
    static constexpr std::uintptr_t busy_bit = 8;
    static constexpr std::uintptr_t flag_mask = 15;
    static_assert(alignof(parking) > flag_mask, "parking pointers need four free low bits");
    static_assert(std::endian::native == std::endian::little, "the futex word is the low half of state_");

public:
    // Any thread. acquire: pairs with set()'s release, so the finished work's results are visible.
    bool is_set() const noexcept {
        return (state_.load(std::memory_order_acquire) & (done_bit | busy_bit)) == done_bit;
    }

    // Has set() begun? (It may still be waking the waiter's lot.) A waiter about to park must
    // re-check this, not is_set(): set() may have looked for sleepers before the waiter announced
    // itself, and then nobody would wake it once busy clears.
    // acquire: as in is_set().
    bool set_started() const noexcept { return (state_.load(std::memory_order_acquire) & done_bit) != 0; }

    // The finishing thread, once.
    void set() noexcept {
        std::uintptr_t expected = 0;
        // acq_rel: release publishes the results to is_set()/block(); on failure, acquire reads the
        // waiter's announcement (the parking pointer) that announce_parked() stored with release.
        if (state_.compare_exchange_strong(expected, done_bit, std::memory_order_acq_rel, std::memory_order_acquire))
            return;
        set_cold();
    }

    // The waiting worker, before it parks in `lot`. Returns false when the flag is already set.
    bool announce_parked(parking* lot) noexcept {
        std::uintptr_t s = state_.load(std::memory_order_relaxed);
        const auto mine = reinterpret_cast<std::uintptr_t>(lot) | parked_bit;
        do {
            if (s & done_bit) return false;
            // release: pairs with set()'s acquire (it reads the pointer from this value).
        } while (!state_.compare_exchange_weak(s, mine, std::memory_order_release, std::memory_order_relaxed));
        return true;
    }

    // A thread outside every pool: sleep until set().
    void block() noexcept {
        std::uintptr_t s = state_.load(std::memory_order_acquire);
        while ((s & (done_bit | busy_bit)) != done_bit) {
            if (s & busy_bit) {  // set() is finishing its wake-ups: a moment
                std_atomics::yield();
            } else if (!(s & blocked_bit)) {
                // acquire on both paths: the loop may exit on the value read here.
                if (state_.compare_exchange_weak(s, s | blocked_bit, std::memory_order_acquire,
                                                 std::memory_order_acquire))
                    s |= blocked_bit;
                continue;
            } else {
                os::futex_wait(&state_, static_cast<std::uint32_t>(s));
            }
            s = state_.load(std::memory_order_acquire);
        }
    }

    // A thread that must not help (a timed wait): one round of block(), sleeping at most
    // `timeout_ns`. Returns is_set(); the caller loops with its own deadline. A blocked_bit left
    // behind after a timeout costs set() one futex wake, nothing more.
    bool block_for(std::int64_t timeout_ns) noexcept {
        std::uintptr_t s = state_.load(std::memory_order_acquire);
        if ((s & (done_bit | busy_bit)) == done_bit) return true;
        if (s & busy_bit) {  // set() is finishing its wake-ups: a moment
            std_atomics::yield();
            return is_set();
        }
        if (!(s & blocked_bit)) {
            // acquire: as in block().
            if (!state_.compare_exchange_strong(s, s | blocked_bit, std::memory_order_acquire,
                                                std::memory_order_acquire))
                return is_set();  // the word changed: let the caller look again
            s |= blocked_bit;
        }
        os::futex_wait_for(&state_, static_cast<std::uint32_t>(s), timeout_ns);
        return is_set();
    }

private:
    void set_cold() noexcept {
        // acq_rel: as in set(); busy keeps the waiter (and with it its pool) in place until the
        // release store below.
        std::uintptr_t old = state_.exchange(done_bit | busy_bit, std::memory_order_acq_rel);
        if (old & parked_bit) reinterpret_cast<parking*>(old & ~flag_mask)->notify_all();
        const void* address = &state_;
        // release: pairs with the waiter's acquire in is_set()/block(); from here on *this may be gone.
        state_.store(done_bit, std::memory_order_release);
        if (old & blocked_bit) os::futex_wake(address, os::wake_everyone);
    }

    // state_: see the header comment. Written by the waiter (announce/block) and the setter.
    std_atomics::atomic<std::uintptr_t> state_{0};
};

}  // namespace crew::detail
