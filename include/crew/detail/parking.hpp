// crew/detail/parking.hpp -- the sleep/wake protocol of a group of workers: who searches, who
// sleeps, and who gets woken. It knows nothing about tasks or queues; callers say what "work" is.
//
// Design: an event count (epoch word + futex, as in Folly's EventCount and Rayon's sleep module)
// combined with Tokio's rule that at most about half of the workers search for work at once.
//
//   state_  (one 64-bit word, all changes by RMW): searching | sleepers | wake tokens
//     searching -- workers spinning through the queues looking for work (bounded: see
//                  try_begin_search), plus workers woken by notify_one that have not yet looked;
//     sleepers  -- workers between prepare_park() and their exit from park()/cancel_park();
//     tokens    -- wakes handed out by notify_one: it moves one sleeper to searching and adds a
//                  token; the first sleeper to leave takes it (any sleeper will do: they are alike).
//   epoch_  (32-bit futex word): bumped by every notify; a sleeper sleeps only while it is unchanged.
//
// The sleeper's side (announce, re-check, then sleep):
//     key = prepare_park();            // read epoch_, then sleepers += 1, then a seq_cst fence
//     if (work is visible) { cancel_park(); ... }   // re-check every queue after announcing
//     else park(key);                  // futex-wait while epoch_ == key
// The waker's side: publish the work, then notify_one() (a seq_cst fence, then a look at state_).
//
// Invariant (no lost wakeup): after a waker publishes work and calls notify_one(), either some
// sleeper's re-check sees the work, or the waker sees that sleeper in state_ and bumps epoch_ after
// publishing; the sleeper read its key before announcing itself, so the key is stale and its futex
// wait returns. The two seq_cst fences (prepare_park, notify_one) form the store-buffering pair that
// makes "neither sees the other" impossible. The same holds for a wake token handed out by a
// notify_one that published nothing (a searcher passing the baton): the token-holder cannot sleep
// on it, so the state never counts a sleeping worker as searching.
//
// notify_one_hinted() skips the fence. It is for a worker that pushes onto its *own* deque: that
// worker is awake and will run the item itself, so a missed wake there delays parallelism but never
// strands work. Every other publisher (injector, completion of a waited-on job) uses notify_one()
// or notify_all().
//
// Who calls what: every member may be called by any thread; prepare_park/cancel_park/park by the
// worker that is going to sleep, in that order.
//
// C++20 review (release sequences continue only through RMWs). Every write of state_ and epoch_ is
// an RMW, so no release sequence is cut by a plain store. state_ publishes no data (all relaxed);
// the work itself is published by its queue and ordered against the sleeper's re-check by the two
// seq_cst fences, whose guarantee does not involve release sequences. epoch_'s release fetch_add
// pairs with the sleepers' acquire loads. Holds as written.
#pragma once

#include <cstdint>

#include "crew/detail/atomics.hpp"

namespace crew::detail {

template <class Policy = std_atomics>
class basic_parking {
    template <class U>
    using atomic = typename Policy::template atomic<U>;

    static constexpr unsigned field_bits = 21;
    static constexpr std::uint64_t field_mask = (std::uint64_t{1} << field_bits) - 1;
    static constexpr std::uint64_t one_searching = 1;
    static constexpr std::uint64_t one_sleeper = std::uint64_t{1} << field_bits;
    static constexpr std::uint64_t one_token = std::uint64_t{1} << (2 * field_bits);
    // Set while the sleeper counted in `sleepers` includes the driver sleeper (one at most).
    static constexpr std::uint64_t driver_bit = std::uint64_t{1} << 63;

    static constexpr std::uint64_t searching_of(std::uint64_t s) { return s & field_mask; }
    static constexpr std::uint64_t sleepers_of(std::uint64_t s) { return (s >> field_bits) & field_mask; }
    static constexpr std::uint64_t tokens_of(std::uint64_t s) { return (s >> (2 * field_bits)) & field_mask; }

public:
    static constexpr std::uint32_t max_workers = static_cast<std::uint32_t>(field_mask);

    explicit basic_parking(std::uint32_t workers) noexcept : workers_(workers) {}

    std::uint32_t workers() const noexcept { return workers_; }

    // The I/O driver's wake (io_driver::unpark): called by a notify that finds the driver sleeper
    // the only sleeper, and by notify_all while it sleeps. Set before any worker starts.
    void set_driver_wake(void (*wake)(void*), void* context) noexcept {
        driver_wake_ = wake;
        driver_context_ = context;
    }

    // Become a searcher if fewer than about half of the workers are searching (at least one may).
    bool try_begin_search() noexcept {
        std::uint64_t s = state_.load(std::memory_order_relaxed);
        do {
            if (2 * searching_of(s) >= workers_ && searching_of(s) != 0) return false;
        } while (!state_.compare_exchange_weak(s, s + one_searching, std::memory_order_relaxed,
                                               std::memory_order_relaxed));
        return true;
    }

    // Stop searching. Returns true when the caller was the last searcher: a searcher that found
    // work should then notify_one(), so that work keeps spreading while some is left.
    bool end_search() noexcept {
        std::uint64_t before = state_.fetch_sub(one_searching, std::memory_order_relaxed);
        return searching_of(before) == 1;
    }

    // A cheap, fence-free hint: is anyone asleep while no one searches?
    bool wake_wanted() const noexcept {
        std::uint64_t s = state_.load(std::memory_order_relaxed);
        return searching_of(s) == 0 && sleepers_of(s) != 0;
    }

    // The caller has published work. Wakes one sleeper if no one is searching for it.
    void notify_one() noexcept {
        // seq_cst fence: partner of the fence in prepare_park(); the work published before this
        // point is visible to a sleeper's re-check, or that sleeper is visible in state_ below.
        Policy::fence(std::memory_order_seq_cst);
        notify_one_hinted();
    }

    // As notify_one() without the fence: only for a publisher that will run the work itself if no
    // one comes (a worker pushing onto its own deque).
    void notify_one_hinted() noexcept {
        std::uint64_t s = state_.load(std::memory_order_relaxed);
        do {
            if (searching_of(s) != 0 || sleepers_of(s) == 0) return;
        } while (!state_.compare_exchange_weak(s, s - one_sleeper + one_searching + one_token,
                                               std::memory_order_relaxed, std::memory_order_relaxed));
        // The driver sleeper is the only sleeper: the futex wakes no one; its eventfd does. (With
        // other sleepers, the futex wakes one of them; no searcher exists, so tokens is 0 and the
        // sleepers count is exact.)
        const bool driver_only = (s & driver_bit) != 0 && sleepers_of(s) == 1;
        if constexpr (Policy::injected_bug == bug::no_driver_wake) {
            bump_and_wake(false);
        } else if (driver_only) {
            // release: pairs with the acquire loads of epoch_ (a futex sleeper's key goes stale).
            epoch_.fetch_add(1, std::memory_order_release);
            driver_wake_(driver_context_);
        } else {
            bump_and_wake(false);
        }
    }

    // Wake every sleeper (shutdown, or a waited-on job finished while its waiter slept). Each
    // sleeper re-checks and leaves or sleeps again; no token is handed out.
    void notify_all() noexcept {
        // seq_cst fence: as in notify_one(); whatever the caller published is seen by the re-check
        // of any sleeper this does not find.
        Policy::fence(std::memory_order_seq_cst);
        const std::uint64_t s = state_.load(std::memory_order_relaxed);
        if (sleepers_of(s) != 0) bump_and_wake(true);
        if ((s & driver_bit) != 0 && Policy::injected_bug != bug::no_driver_wake) driver_wake_(driver_context_);
    }

    // Announce the intent to sleep. Returns the key for park(). Re-check for work afterwards.
    std::uint32_t prepare_park() noexcept {
        // The key is read *before* announcing: a waker that sees the announcement bumps the epoch
        // after it, so the key is then stale and park() cannot sleep through that wake (reading it
        // after the announcement could pick up the bump itself, leaving a token-holder asleep).
        // acquire: pairs with bump_and_wake()'s release.
        std::uint32_t key = epoch_.load(std::memory_order_acquire);
        state_.fetch_add(one_sleeper, std::memory_order_relaxed);
        // seq_cst fence: partner of the fence in notify_one()/notify_all(); see the invariant above.
        if constexpr (Policy::injected_bug != bug::no_park_fence) Policy::fence(std::memory_order_seq_cst);
        return key;
    }

    // Leave the sleepers without sleeping. Returns true when the caller took a wake token, i.e. it
    // now counts as a searcher and must later call end_search().
    bool cancel_park() noexcept {
        std::uint64_t s = state_.load(std::memory_order_relaxed);
        std::uint64_t next;
        do {
            next = tokens_of(s) != 0 ? s - one_token : s - one_sleeper;
        } while (!state_.compare_exchange_weak(s, next, std::memory_order_relaxed, std::memory_order_relaxed));
        return tokens_of(s) != 0;
    }

    // The driver sleeper's prepare_park: counted as a sleeper, and marked so that a notify that
    // finds it alone wakes it through the driver. Then re-check, then sleep in the driver, then
    // cancel_park_driver(). At most one worker at a time (it holds the driver's try-lock).
    void prepare_park_driver() noexcept {
        state_.fetch_add(one_sleeper | (Policy::injected_bug == bug::driver_not_counted ? 0 : driver_bit),
                         std::memory_order_relaxed);
        // seq_cst fence: partner of the fence in notify_one()/notify_all(), as in prepare_park().
        Policy::fence(std::memory_order_seq_cst);
    }

    // Leave as the driver sleeper: clears the mark; returns as cancel_park() does.
    bool cancel_park_driver() noexcept {
        std::uint64_t s = state_.load(std::memory_order_relaxed);
        std::uint64_t next;
        do {
            next = (tokens_of(s) != 0 ? s - one_token : s - one_sleeper) & ~driver_bit;
        } while (!state_.compare_exchange_weak(s, next, std::memory_order_relaxed, std::memory_order_relaxed));
        return tokens_of(s) != 0;
    }

    // Sleep until the epoch moves past `key`, or until a wake finds a token waiting, then leave as
    // cancel_park() does. The token test: a futex wake reaches *some* waiter (futex(2) promises no
    // order; a higher-priority one first), possibly one that announced itself after the bump and
    // so holds the current key. Were it to sleep again, the sleeper the wake was meant for (a stale
    // key) would sleep on with the token unclaimed and the work unsearched: the Relacy model
    // parking_sleep_wake found that at schedule 6,625,586. Any sleeper may take a token (they are
    // alike), so the one the wake reached takes it. A spurious return with no token sleeps again.
    bool park(std::uint32_t key) noexcept {
        // acquire: pairs with bump_and_wake()'s release.
        while (epoch_.load(std::memory_order_acquire) == key) {
            Policy::wait(epoch_, key);
            // relaxed: the waiter this is for holds the bumped epoch as its key, read by
            // prepare_park's acquire load, which pairs with bump_and_wake()'s release; the notify
            // added its token before that bump, so this load sees the token or a later value.
            if constexpr (Policy::injected_bug != bug::park_ignores_token) {
                if (tokens_of(state_.load(std::memory_order_relaxed)) != 0) break;
            }
        }
        return cancel_park();
    }

    // Snapshot for tests and metrics.
    std::uint32_t searching() const noexcept {
        return static_cast<std::uint32_t>(searching_of(state_.load(std::memory_order_relaxed)));
    }
    std::uint32_t sleepers() const noexcept {
        return static_cast<std::uint32_t>(sleepers_of(state_.load(std::memory_order_relaxed)));
    }

private:
    void bump_and_wake(bool everyone) noexcept {
        // release: pairs with the acquire loads of epoch_ in prepare_park()/park().
        epoch_.fetch_add(1, std::memory_order_release);
        if (everyone)
            Policy::wake_all(epoch_);
        else
            Policy::wake_one(epoch_);
    }

    // workers_, driver_wake_, driver_context_: immutable once workers run.
    const std::uint32_t workers_;
    void (*driver_wake_)(void*) = [](void*) {};
    void* driver_context_ = nullptr;
    // state_: written (RMW) by searchers, sleepers and wakers; read by all.
    alignas(cache_line) atomic<std::uint64_t> state_{0};
    // epoch_: bumped by wakers; read and futex-waited on by sleepers.
    alignas(cache_line) atomic<std::uint32_t> epoch_{0};
};

using parking = basic_parking<>;

}  // namespace crew::detail
