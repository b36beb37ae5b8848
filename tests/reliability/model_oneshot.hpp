// tests/reliability/model_oneshot.hpp -- the one-shot channel's state word (crew/detail/oneshot_word.hpp,
// crew::make_oneshot), with the production word. Included by model_task_word.hpp.
//
// Thread 0 is the sender: with Send it writes the value (an rl::var) and closes with it, else it
// closes unsent (dropped); on close_result::wake it moves the waker out of the block and wakes: the
// wake resolves the receiver's suspension (a CAS waiting -> signaled, standing for the suspension
// word); if it wins, the receiver resumes on its own thread (its acquire load of `signaled` stands
// for the queue hand-off) and frees the block without an RMW; if a cancel won, the sender releases
// its reference instead.
// (The receiver's wait for `signaled` spins: a wake that never comes is a livelock report.) Thread 1 is the
// receiver, in one of three modes:
//   await:  poll; closed -> take; else write the waker, publish; published -> suspended (the
//           sender's wake runs the continuation); not published -> take the waker back, take.
//   cancel: as await, but once published the receiver's task is cancelled: the cancel's CAS
//           (waiting -> cancelled) and, if it wins, the continuation as a cancelled resume:
//           withdraw (true: reset the waker; false: the close took it), then take what is there.
//   drop:   the receiver lets go without awaiting (release_receiver).
// The continuation takes the value if sent and not taken, then releases the receiver's reference.
// Checked: the receiver's continuation runs exactly once (no lost wake, no double resume); with
// Send and without cancel it receives the value; the published waker is used exactly once (woken
// by the close, or reset by a withdraw or a failed publish); the block is freed exactly once and
// after every touch (a ghost, and an rl::var the free writes: an unordered free is a data race); a
// value not taken is destroyed exactly once, by whoever frees; the value is read without a race.
// Teeth (model_teeth.cpp): bug::oneshot_close_relaxed, bug::oneshot_publish_ignores_closed,
// bug::oneshot_withdraw_blind, bug::oneshot_close_drops_ref_waiting, bug::oneshot_sole_free_relaxed,
// bug::oneshot_hand_off_touches (the sender writes the block after its wake resolved the
// suspension: the woken receiver may have freed it).
#pragma once

#include <cstdint>

#include "crew/detail/oneshot_word.hpp"

namespace crew_model {

enum class oneshot_rx : int { await, cancel, drop };

template <class Policy, bool Send, oneshot_rx Rx>
struct oneshot_model : rl::test_suite<oneshot_model<Policy, Send, Rx>, 2> {
    using word_t = crew::detail::basic_oneshot_word<Policy>;
    static constexpr int waiting = 1, signaled = 2, cancelled = 3;

    aligned_box<word_t> word;                 // in the block
    rl::var<int> value;                       // the block's value slot
    rl::var<int> waker;                       // the block's waker slot: 1 while it holds one
    rl::var<int> block;                       // the block's lifetime: the free writes it
    rl::var<bool> taken;                      // the receiver's mark
    aligned_box<model_atomic<int>> susp{0};   // the receiver's suspension (0: not armed)
    bool block_alive = true;                  // ghost
    int frees = 0, continuations = 0, received = -1, waker_uses = 0, value_destroys = 0;  // ghosts
    bool published = false, waker_written = false;  // ghosts

    void before() {
        value(RL_INFO) = 0;
        waker(RL_INFO) = 0;
        block(RL_INFO) = 0;
        taken(RL_INFO) = false;
    }

    // The access first: it is a scheduling point, so another thread's free can land between a
    // thread's last RMW and this touch, and the ghost then sees it.
    void touch() {
        (void)block(RL_INFO);
        RL_ASSERT(block_alive);
    }
    // oneshot_block::destroy: an untaken value goes with the block.
    void free_block() {
        touch();
        RL_ASSERT(waker(RL_INFO) == 0);  // consumed before the free (and ordered before it: a race otherwise)
        if ((word->poll() & word_t::sent) != 0 && !taken(RL_INFO)) {
            (void)value(RL_INFO);
            ++value_destroys;
        }
        block_alive = false;
        ++frees;
        block(RL_INFO) = -1;
    }
    void use_waker() {  // move it out / reset it: exactly one side may
        touch();
        RL_ASSERT(waker(RL_INFO) == 1);
        waker(RL_INFO) = 0;
        ++waker_uses;
    }

    // The receiver's await_resume and its awaiter's destructor. `handed_off`: resumed by the
    // sender's wake, which kept its reference and left the block to the receiver to free.
    void continuation(bool was_cancelled, bool handed_off = false) {
        ++continuations;
        touch();
        if (was_cancelled && word->withdraw()) use_waker();  // else the close took it
        const std::uint32_t s = word->poll();
        if ((s & word_t::sent) != 0 && !taken(RL_INFO)) {
            taken(RL_INFO) = true;
            received = value(RL_INFO);
        } else {
            received = 0;
        }
        if (handed_off || word->release_receiver()) free_block();
    }

    void sender() {
        touch();
        if (Send) value(RL_INFO) = 42;
        switch (word->close(Send)) {
        case crew::detail::close_result::done:
            return;
        case crew::detail::close_result::free_block:
            free_block();
            return;
        case crew::detail::close_result::wake:
            break;
        }
        use_waker();
        int w = waiting;  // the wake (waker::claim): resolve the suspension, then the resumed continuation
        if (susp->compare_exchange_strong(w, signaled, std::memory_order_acq_rel, std::memory_order_relaxed)) {
            // The receiver resumes on its own thread (it waits for `signaled` with acquire, as a
            // worker pops the queued task) and frees the block: nothing more here.
            if constexpr (Policy::injected_bug == crew::detail::bug::oneshot_hand_off_touches) waker(RL_INFO) = 0;  // a late write to the block
            return;
        }
        if (word->release_sender()) free_block();  // a cancel won: the receiver may be withdrawing
    }

    void receiver() {
        touch();
        if (Rx == oneshot_rx::drop) {
            if (word->release_receiver()) free_block();
            ++continuations;
            return;
        }
        if ((word->poll() & word_t::closed) != 0) {  // ready: no suspension
            continuation(false);
            return;
        }
        susp->store(waiting, std::memory_order_relaxed);  // armed (prepare_suspend); this thread's own
        waker(RL_INFO) = 1;
        waker_written = true;
        if (!word->publish()) {  // closed meanwhile: take the waker back, go on (retract_suspend)
            use_waker();
            continuation(false);
            return;
        }
        published = true;
        if (Rx == oneshot_rx::cancel) {
            int w = waiting;
            if (susp->compare_exchange_strong(w, cancelled, std::memory_order_acq_rel, std::memory_order_relaxed)) {
                continuation(true);
                return;
            }
        }
        // Suspended until the sender's wake resolves the suspension (the queue hand-off).
        while (susp->load(std::memory_order_acquire) != signaled) rl::yield(1, RL_INFO);
        continuation(false, true);
    }

    void thread(unsigned index) {
        if (index == 0)
            sender();
        else
            receiver();
    }

    void after() {
        RL_ASSERT(continuations == 1);  // resumed exactly once: never lost, never twice
        RL_ASSERT(frees == 1 && !block_alive);
        RL_ASSERT(waker_uses == (waker_written ? 1 : 0));  // the waker is used exactly once
        RL_ASSERT(waker(RL_INFO) == 0);
        if (Send && Rx == oneshot_rx::await) RL_ASSERT(received == 42);
        if (!Send) RL_ASSERT(received <= 0 && value_destroys == 0);
        if (Send) RL_ASSERT((received == 42 ? 1 : 0) + value_destroys == 1);  // delivered or destroyed, once
    }
};

}  // namespace crew_model
