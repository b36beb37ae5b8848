// tests/reliability/model_wait_block.hpp -- the lifetime of a coroutine primitive's state block
// (crew/async/detail/wait_list.hpp, "Lifetime", session 15), with the production lock word
// (basic_wait_lock<Policy>: the lock bit and the count of the awaiters that may come back), the
// production suspension word and task state. Included by model_task_word.hpp.
//
// One waiter task, suspended on a one-value channel's receiver list: its node (in its frame) is
// linked and counted in the lock word, its waker holds a reference. Thread 0 runs the task's
// entries (a worker): signaled, the task reads its node's value and never touches the block;
// cancelled, it finishes as finish_suspension does (under the lock: unlink the node if still
// linked, drop its count if a releaser's claim did not, and free an orphaned block at the last
// count, after unlocking). Thread 1 owns the channel: with Send it first sends one value (under the
// lock: pop the node, write the value, claim -- success: uncount the node; failure: take the
// value back into the buffer), and the claimed task is queued after the unlock; then it destroys
// the channel: idle() (unlocked, nobody counted) frees the block at once; else, under the lock,
// close (pop and claim the node if still linked) and orphan_locked (free after the unlock when
// nobody is left counted, else leave the block to the awaiter). Thread 2 cancels the task
// (request_cancel, queue by reference) and drops its reference.
// Checked: the block is freed exactly once and after every touch of it (each touch and the free
// write an rl::var: a free not ordered after a touch is a data race; a touch after the free fails
// a ghost), the task resumes exactly once, the node is never touched after its frame died, the
// value ends exactly once in the task or in the buffer, and the header is freed exactly once.
// Teeth (model_teeth.cpp): bug::wait_idle_ignores_lock (the destructor's fast path reads only the
// count: it frees while the cancelled awaiter, its count already dropped, still holds the lock) and
// bug::wait_failed_claim_uncounts (a releaser drops the node's count when cancellation won the
// claim: the destructor frees before the cancelled awaiter comes back to unlink).
#pragma once

#include <cstdint>

#include "crew/async/detail/wait_lock.hpp"
#include "crew/detail/task_state.hpp"

namespace crew_model {

template <class Policy, bool Send>
struct wait_block_model : rl::test_suite<wait_block_model<Policy, Send>, 3> {
    using state = crew::detail::task_state<Policy>;
    using word = crew::detail::suspension_word<Policy>;
    using wait_lock = crew::detail::basic_wait_lock<Policy>;
    static constexpr bool failed_claim_uncounts = Policy::injected_bug == crew::detail::bug::wait_failed_claim_uncounts;
    aligned_box<state> st{std::uint64_t{3}};  // the first entry's, the canceller's, the waker's
    aligned_box<word> susp;
    aligned_box<wait_lock> lock;  // in the block
    model_run_queue queue{0};     // the task's entries
    rl::var<int> block;           // the block's lists and buffer (guarded by lock); the free writes it
    bool linked = true;           // guarded by lock: the node is on the receiver list
    bool counted = true;          // guarded by lock: the node is counted in the lock word
    bool orphaned = false;        // guarded by lock: the channel is gone
    int buffered = 0;             // guarded by lock: the channel's buffer (0 or 1 values)
    std::uint64_t gen = 0;        // the waker's generation (in the node)
    rl::var<int> node_value;      // the node's outcome (in the task's frame)
    bool frame_alive = true, block_alive = true;                          // ghosts
    int resumes = 0, received = 0, block_frees = 0, header_frees = 0;     // ghosts

    // The task's first run: under the lock it arms its suspension, links and counts its node
    // (suspend_on), then goes idle (the entry's reference is dropped there).
    void before() {
        block(RL_INFO) = 0;
        node_value(RL_INFO) = 0;
        RL_ASSERT(st->transition_to_running() == crew::detail::run_result::success);
        lock->lock();
        gen = susp->arm(true);
        RL_ASSERT(gen != 0);
        lock->add_waiter();
        lock->unlock();
        RL_ASSERT(st->transition_to_idle() == crew::detail::idle_result::ok);
    }

    void touch_block() {
        RL_ASSERT(block_alive);
        block(RL_INFO) = block(RL_INFO) + 1;
    }
    void free_block() {
        RL_ASSERT(block_alive);
        block_alive = false;
        ++block_frees;
        block(RL_INFO) = -1;
    }
    void touch_node() { RL_ASSERT(frame_alive); }
    void release() {
        if (st->ref_dec()) ++header_frees;
    }
    void submit() { queue.submit(); }

    void run() {
        switch (st->transition_to_running()) {
            case crew::detail::run_result::success: break;
            case crew::detail::run_result::dealloc: ++header_frees; return;
            default: return;
        }
        if (susp->phase() != word::phase_waiting) {  // else a stale entry: nothing to resume
            RL_ASSERT(++resumes == 1);
            if (susp->phase() == word::phase_signaled) {
                received = node_value(RL_INFO);  // no touch of the block: it may be gone
            } else {
                finish_cancelled();
            }
            frame_alive = false;  // await_resume returned/threw: the node is gone
        }
        switch (st->transition_to_idle()) {
            case crew::detail::idle_result::ok: return;
            case crew::detail::idle_result::ok_notified: submit(); return;
            case crew::detail::idle_result::ok_dealloc: ++header_frees; return;
            case crew::detail::idle_result::cancelled: RL_ASSERT(false); return;  // no state.cancel()
        }
    }
    // finish_suspension(cancelled = true).
    void finish_cancelled() {
        bool last = false;
        lock->lock();
        touch_block();
        if (linked) {
            linked = false;
            release();  // waker::reset: the node still held the waker
        }
        if (counted) {
            counted = false;
            last = lock->drop_waiter() == 0 && orphaned;
        }
        lock->unlock();
        if (last) free_block();
    }

    // Under the lock: pop the node, hand it `value`, claim its wake (wake_batch::claim). False:
    // cancellation won; the value goes back to the buffer and the node stays counted.
    bool pop_and_claim(int value) {
        linked = false;
        touch_node();
        node_value(RL_INFO) = value;
        counted = false;  // wake_batch::claim: uncounted before the claim, counted again if it fails
        if (susp->resolve(gen, word::phase_signaled)) {
            (void)lock->drop_waiter();  // a signaled awaiter never comes back
            return true;
        }
        counted = true;
        buffered += node_value(RL_INFO);
        node_value(RL_INFO) = 0;
        if (failed_claim_uncounts) {  // the bug: the cancelled awaiter still comes back
            counted = false;
            (void)lock->drop_waiter();
        }
        release();  // the waker's reference (claim() failed)
        return false;
    }
    void wake_claimed() {
        if (st->transition_to_notified_by_val() == crew::detail::notify_result::submit) submit();
    }

    // channel::try_send(1).
    void send() {
        bool claimed = false;
        lock->lock();
        touch_block();
        if (linked) claimed = pop_and_claim(1);
        else ++buffered;
        lock->unlock();
        if (claimed) wake_claimed();  // after the unlock (wake_batch)
    }

    // ~channel().
    void destroy() {
        if (lock->idle()) {
            free_block();
            return;
        }
        bool claimed = false, last = false;
        lock->lock();
        touch_block();
        if (linked) claimed = pop_and_claim(0);  // close_locked: a closed receive gets nothing
        if (lock->waiters() == 0) last = true;   // orphan_locked
        else orphaned = true;
        lock->unlock();
        if (claimed) wake_claimed();
        if (last) free_block();
    }

    void thread(unsigned index) {
        if (index == 0) {
            for (int i = 0; i < 3; ++i)
                if (queue.take_entry()) run();
        } else if (index == 1) {
            if (Send) send();
            destroy();
        } else {
            bool first = false;
            if (susp->request_cancel(first) &&
                st->transition_to_notified_by_ref() == crew::detail::notify_result::submit)
                submit();
            release();  // the canceller's reference
        }
    }

    void after() {
        while (queue.take_entry()) run();
        RL_ASSERT(resumes == 1);
        RL_ASSERT(block_frees == 1);
        RL_ASSERT(header_frees == 1);
        if (Send) RL_ASSERT(received + buffered == 1);
    }
};

}  // namespace crew_model
