// crew/async/detail/wait_lock.hpp -- the lock of a coroutine primitive's state block and the count
// of the awaiters that may come back to it (wait_list.hpp, "Lifetime"). Standalone (atomics only),
// so the Relacy model tests/reliability/model_wait_block.hpp runs this very code.
#pragma once

#include <cstddef>

#include "crew/detail/atomics.hpp"

namespace crew::detail {

// The lock of a primitive's state (BasicLockable, so std::lock_guard / std::unique_lock work), and
// the count of the awaiters that may come back to the block (wait_list.hpp, "Lifetime"), in one word:
// bit 0 locked, bits 1.. the count. Uncontended, lock() is one locked RMW (fetch_or of the lock
// bit) and unlock() a plain store; the count changes by plain loads and stores of the holder (a
// contender's fetch_or on a locked word writes the value it read, so the holder's later store
// loses nothing). A contended lock() spins with pauses, then yields the thread (lock_cold): a
// holder only moves list nodes and values and claims wakes (wake_batch: the queuing comes after
// unlock), it never waits for anything or makes a system call while holding it.
template <class Policy = std_atomics>
class basic_wait_lock {
public:
    static constexpr std::size_t locked_bit = 1;
    static constexpr std::size_t waiter_one = 2;

    void lock() noexcept {
        // acquire: pairs with unlock()'s release store (what the previous holder wrote).
        if ((word_.fetch_or(locked_bit, std::memory_order_acquire) & locked_bit) != 0) [[unlikely]] lock_cold();
    }
    // release: pairs with the acquire fetch_or of the next lock() and with idle()'s acquire load
    // (the holder's last touch of the block happens before a free that reads this store).
    // relaxed load: the holder reads its own latest value (contenders only rewrite it unchanged).
    void unlock() noexcept {
        word_.store(word_.load(std::memory_order_relaxed) & ~locked_bit, std::memory_order_release);
    }

    // The holder: count an awaiter that may come back / drop one; the count left. relaxed: the
    // lock orders them (published by unlock()'s release).
    void add_waiter() noexcept {
        word_.store(word_.load(std::memory_order_relaxed) + waiter_one, std::memory_order_relaxed);
    }
    std::size_t drop_waiter() noexcept {
        const std::size_t w = word_.load(std::memory_order_relaxed) - waiter_one;
        word_.store(w, std::memory_order_relaxed);
        return w / waiter_one;
    }
    std::size_t waiters() const noexcept { return word_.load(std::memory_order_relaxed) / waiter_one; }

    // The primitive's destructor, without the lock: unlocked and nobody counted, so nobody can
    // touch the block again (a member call may not race the destructor). acquire: pairs with the
    // unlock() that stored the 0 (the last holder's uses happen before the free).
    bool idle() const noexcept {
        const std::size_t w = word_.load(std::memory_order_acquire);
        if constexpr (Policy::injected_bug == bug::wait_idle_ignores_lock) return w / waiter_one == 0;
        return w == 0;
    }

private:
    // Contended: spin on a plain load (no cache-line ping-pong) with pauses, then also yield the
    // thread (the holder may have been preempted; on 2 cores spinning on would only delay it).
    [[gnu::noinline]] void lock_cold() noexcept {
        for (unsigned spins = 0;;) {
            while ((word_.load(std::memory_order_relaxed) & locked_bit) != 0) {  // relaxed: a hint
                if (++spins < 64) Policy::pause();
                else Policy::yield();
            }
            // acquire: pairs with unlock()'s release store, as lock()'s.
            if ((word_.fetch_or(locked_bit, std::memory_order_acquire) & locked_bit) == 0) return;
        }
    }
    typename Policy::template atomic<std::size_t> word_{0};
};
using wait_lock = basic_wait_lock<>;

}  // namespace crew::detail
