// crew/detail/oneshot_word.hpp -- the state word of a one-shot channel (crew::oneshot): one sender
// hands at most one value to one receiver, through a block both hold. Standalone: no scheduler
// code; the caller keeps the value, the receiver's waker and the block (async/oneshot.hpp).
//
// Algorithm (the shape of Tokio's oneshot, with the block's two references folded into the word):
// one 32-bit word, every write an RMW.
//   sent     the sender constructed the value in the block (set with closed, in one RMW)
//   closed   the sender is done: it sent, or it was dropped without sending
//   waiting  the receiver published its waker in the block (receiver sets it, only while !closed)
//   tx, rx   the sender's / the receiver's reference to the block
// Who owns the receiver's waker is decided by the order of two RMWs on the word: the sender's close
// and the receiver's withdraw. A close that finds `waiting` takes the waker (and keeps its reference
// until it has moved it out of the block); a withdraw that finds `closed` leaves it to the sender; a
// publish never succeeds after close (a CAS that tests closed), so a published waker is always
// either woken by the close or withdrawn by its receiver, never both and never neither.
// The block is freed by whoever clears the last reference (release_* returns true): the sender in
// close() when nothing waits and the receiver is gone, else in release_sender(); the receiver in
// release_receiver() (with no RMW when it finds the sender gone: nobody else can touch the block).
// Hand-off: a sender whose close took the waker and whose wake then resolved the receiver's
// suspension (signaled; the receiver cannot resume before the wake queues it) touches the block no
// more and does not release: the woken receiver frees it without an RMW. Only when a cancel
// resolved the suspension first does the sender call release_sender() (the receiver may be
// withdrawing at that moment).
//
// Orderings. close() is acq_rel: release publishes the value (and the sender's writes) to the
// receiver's acquire load in poll(); acquire reads the waker the receiver published with its
// release CAS in publish(), and the receiver's last writes when it finds rx gone (it frees). The
// releases of the references are acq_rel for the same reason: the freeing side sees everything the
// other side wrote to the block before letting go (the `taken` mark, the waker's reset).
//
// Who may call what: close() once, by the sender; release_sender() at most once, by a sender whose
// close() said close_result::wake, after it took the waker, when its wake did not resolve the
// suspension; poll()/publish()/withdraw()/release_receiver()
// by the receiver only (release_receiver() once, after any withdraw); is_receiver_gone() anyone.
#pragma once

#include <cstdint>

#include "crew/detail/atomics.hpp"

namespace crew::detail {

enum class close_result : std::uint8_t {
    done,        // delivered (or nothing to deliver); the receiver still holds the block
    free_block,  // the receiver is gone: the caller frees the block (destroying an untaken value)
    wake,        // a waker is published: take it out of the block and wake it (see "Hand-off")
};

template <class Policy = std_atomics>
class basic_oneshot_word {
    template <class U>
    using atomic = typename Policy::template atomic<U>;

public:
    static constexpr std::uint32_t sent = 1, closed = 2, waiting = 4, tx = 8, rx = 16;

    // Sender, once: `with_value` when it constructed the value in the block first.
    close_result close(bool with_value) noexcept {
        const std::uint32_t set = closed | (with_value ? sent : 0);
        std::uint32_t s = word_.load(std::memory_order_relaxed);  // relaxed: the CAS below decides
        for (;;) {
            // No waker: the sender lets go of the block in the same RMW (one RMW per send). A
            // waker: it keeps its reference until it has moved the waker out of the block.
            const bool keep = (s & waiting) != 0 && Policy::injected_bug != bug::oneshot_close_drops_ref_waiting;
            const std::uint32_t next = (s | set) & (keep ? ~0u : ~tx);
            // acq_rel: see the header (release: the value; acquire: the waker, the receiver's writes).
            constexpr auto order = Policy::injected_bug == bug::oneshot_close_relaxed ? std::memory_order_relaxed
                                                                                      : std::memory_order_acq_rel;
            if (word_.compare_exchange_weak(s, next, order, std::memory_order_relaxed)) break;
        }
        if ((s & waiting) != 0) return close_result::wake;
        return (s & rx) == 0 ? close_result::free_block : close_result::done;
    }

    // Sender, after close() said wake and the waker was taken out: true when the caller frees.
    bool release_sender() noexcept {
        // acq_rel: see the header (the receiver's writes before its release, if it went first).
        return (word_.fetch_and(~tx, std::memory_order_acq_rel) & rx) == 0;
    }

    // Receiver: the word now. acquire: pairs with close()'s release (the value is readable).
    std::uint32_t poll() const noexcept { return word_.load(std::memory_order_acquire); }

    // Receiver, after writing its waker into the block: true when published (the sender will wake
    // it, or a withdraw takes it back); false when the sender had closed (the receiver keeps the
    // waker, and the word it then reads with poll() says what it got).
    bool publish() noexcept {
        if constexpr (Policy::injected_bug == bug::oneshot_publish_ignores_closed) {
            word_.fetch_or(waiting, std::memory_order_acq_rel);  // published even after close: never woken
            return true;
        }
        std::uint32_t s = word_.load(std::memory_order_relaxed);  // relaxed: the CAS decides
        while ((s & closed) == 0) {
            // release: pairs with close()'s acquire (the waker is readable by the sender). relaxed
            // on failure: a closed word ends the loop, and the caller's poll() re-reads it (acquire).
            if (word_.compare_exchange_weak(s, s | waiting, std::memory_order_release, std::memory_order_relaxed))
                return true;
        }
        return false;
    }

    // Receiver, to take a published waker back (cancellation, or its awaiter destroyed while
    // suspended): true when it is the receiver's again (reset it); false when the sender's close
    // took it (the sender wakes it; a wake of a resolved suspension does nothing).
    bool withdraw() noexcept {
        if constexpr (Policy::injected_bug == bug::oneshot_withdraw_blind) {
            (void)word_.fetch_and(~waiting, std::memory_order_acq_rel);
            return true;
        }
        // acq_rel: ordered against close() in the word (see the header).
        return (word_.fetch_and(~waiting, std::memory_order_acq_rel) & closed) == 0;
    }

    // Receiver, once, after any withdraw: true when the caller frees the block. When the sender
    // has let go already (the usual case: it sent, then the receiver took the value), the
    // receiver is the block's sole holder and frees it without an RMW.
    bool release_receiver() noexcept {
        // acquire: pairs with the release of the sender's RMW that cleared tx (close() or
        // release_sender()): every touch of the block by the sender happens before the free.
        constexpr auto order = Policy::injected_bug == bug::oneshot_sole_free_relaxed ? std::memory_order_relaxed
                                                                                     : std::memory_order_acquire;
        if ((word_.load(order) & tx) == 0) return true;
        // acq_rel: see the header (each side's writes to the block reach the side that frees it).
        return (word_.fetch_and(~rx, std::memory_order_acq_rel) & tx) == 0;
    }

    // Anyone: has the receiver let go? (a sender's early out: no value is constructed for nobody).
    bool is_receiver_gone() const noexcept { return (word_.load(std::memory_order_relaxed) & rx) == 0; }  // relaxed: a hint

private:
    // sent | closed | waiting | tx | rx; both references at the start.
    atomic<std::uint32_t> word_{tx | rx};
};

using oneshot_word = basic_oneshot_word<>;

}  // namespace crew::detail
