// tests/reliability/model_task_word.hpp -- a Relacy model of one coroutine task's two words
// together: the task state (task_state<Policy>) and the suspension word (suspension_word<Policy>),
// driven as src/async/async_task.cpp and crew/async/detail/waiter.hpp drive them.
//
// One mock task, born queued (the entry's reference, the handle's, and with Cancel the
// canceller's). Its coroutine is a three-step machine, run only under RUNNING:
//   step 0: arm suspension 1 (cancellable) and publish its waker W1 in slot a; suspend.
//   step 1: resumed: signaled -> the payload W1 handed over must be visible; cancelled -> the
//           canceller's note must be visible; catch it, take W1 back if it is still in slot a.
//           Arm suspension 2 (not cancellable) and publish W2 in slot b; suspend.
//   step 2: resumed: must be signaled by W2, with W2's payload visible; the task completes.
// (A refused arm -- cancellation requested before -- reads the note and goes on, as a
// coroutine that catches crew::cancelled_error.) Thread 0 is a worker; thread 1 fires slot a and
// slot b (write the payload, resolve, wake by value; a failed resolve drops the reference) and
// then works (it looks at slot a three times, so the late-W1 race is reachable); thread 2 cancels
// (Cancel: note, request_cancel, wake by reference) and drops the
// handle. after() fires what is left and runs every entry.
// Checked: the frame is never resumed on two threads at once (an rl::var), at most one resume per
// suspension, a late W1 (its suspension was cancelled) never resolves suspension 2, the task
// completes exactly once, its result is dropped once, and the header is freed exactly once and
// never touched after.
// Teeth (model_teeth.cpp): susp_relaxed_arm (a refused arm does not acquire the canceller's
// writes: a data race on the note) is caught within a few schedules. susp_wake_ignores_generation
// (the late W1 resolves suspension 2) is rarely reached here by the random scheduler (W1 taken
// from slot a, then cancel, the step-1 run and the arm of suspension 2, then W1's resolve), so
// late_waker_model below sequences exactly that race on the suspension word alone and catches it.
#pragma once

#include <cstdint>

#include "crew/detail/task_state.hpp"
#include "reliability/model_oneshot.hpp"
#include "reliability/model_wait_block.hpp"

namespace crew_model {

template <class Policy, bool Cancel>
struct task_word_model : rl::test_suite<task_word_model<Policy, Cancel>, 3> {
    using state = crew::detail::task_state<Policy>;
    using word = crew::detail::suspension_word<Policy>;
    aligned_box<state> st{std::uint64_t{Cancel ? 3u : 2u}};  // entry, handle (, canceller)
    aligned_box<word> susp;
    model_run_queue queue{1};  // the task's entries (one: its first run)
    model_atomic<std::uint64_t> slot_a{0}, slot_b{0};  // a published waker's generation (0: none)
    rl::var<int> frame, step, payload_a, payload_b, note;
    int completed = 0, results_dropped = 0, freed = 0, resumes[3] = {0, 0, 0};  // ghosts
    std::uint64_t armed = 0;  // ghost: the generation of the task's current suspension

    task_word_model() {
        frame(RL_INFO) = 0;
        step(RL_INFO) = 0;
        payload_a(RL_INFO) = 0;
        payload_b(RL_INFO) = 0;
        note(RL_INFO) = 0;
    }

    void alive() { RL_ASSERT(freed == 0); }
    void free_header() {
        RL_ASSERT(freed == 0);
        ++freed;
    }
    void release() {
        if (st->ref_dec()) free_header();
    }
    void submit() { queue.submit(); }
    bool take_entry() { return queue.take_entry(); }

    // async_task::run + run_once + after_run.
    void run() {
        alive();
        switch (st->transition_to_running()) {
            case crew::detail::run_result::failed: return;
            case crew::detail::run_result::dealloc: free_header(); return;
            case crew::detail::run_result::cancelled: complete(); return;  // not used: no state.cancel()
            case crew::detail::run_result::success: break;
        }
        frame(RL_INFO) = frame(RL_INFO) + 1;  // never on two threads at once
        bool done = false;
        if (susp->phase() != word::phase_waiting) done = resume();  // else a stale entry
        if (done) return complete();
        switch (st->transition_to_idle()) {
            case crew::detail::idle_result::ok: return;
            case crew::detail::idle_result::ok_notified: submit(); return;
            case crew::detail::idle_result::ok_dealloc: free_header(); return;
            case crew::detail::idle_result::cancelled: complete(); return;
        }
    }

    // The coroutine body from its current step; true when it finished.
    bool resume() {
        const int at = step(RL_INFO);
        if (at == 2) {
            RL_ASSERT(++resumes[2] == 1);
            RL_ASSERT(susp->phase() == word::phase_signaled);  // not cancellable
            RL_ASSERT(payload_b(RL_INFO) == 1);                // W2 delivered, not a late W1
            return true;
        }
        if (at == 1) {
            RL_ASSERT(++resumes[1] == 1);
            if (susp->phase() == word::phase_signaled) {
                RL_ASSERT(payload_a(RL_INFO) == 1);
            } else {
                RL_ASSERT(note(RL_INFO) == 1);  // caught cancelled_error
                // Unlink our waker if no waker took it (a waker that did fails its resolve).
                if (slot_a.exchange(0, std::memory_order::acq_rel) != 0) release();
            }
            return arm_and_publish(false, slot_b, 2);
        }
        return arm_and_publish(true, slot_a, 1);
    }

    bool arm_and_publish(bool cancellable, model_atomic<std::uint64_t>& slot, int next_step) {
        const std::uint64_t gen = susp->arm(cancellable);
        if (gen == 0) {  // cancellation requested before: catch it and go on
            RL_ASSERT(note(RL_INFO) == 1);
            return arm_and_publish(false, slot_b, 2);
        }
        armed = gen;
        step(RL_INFO) = next_step;
        st->ref_inc();                                 // the waker's reference
        slot.store(gen, std::memory_order::release);  // publish (a waiter list's lock, in crew)
        return false;
    }

    void complete() {
        std::uint64_t snap = st->transition_to_complete();
        ++completed;
        if ((snap & state::join_interest) == 0) drop_result();
        if (st->transition_to_terminal(1)) free_header();
    }
    void drop_result() { ++results_dropped; }

    // A waker fires: deliver, resolve, queue (waker::wake).
    void fire(model_atomic<std::uint64_t>& slot, rl::var<int>& payload) {
        const std::uint64_t gen = slot.exchange(0, std::memory_order::acq_rel);
        if (gen == 0) return;
        alive();
        payload(RL_INFO) = 1;
        if (!susp->resolve(gen, word::phase_signaled)) {
            release();
            return;
        }
        RL_ASSERT(gen == armed);  // a waker resolves only its own suspension, never a later one
        switch (st->transition_to_notified_by_val()) {
            case crew::detail::notify_result::submit: submit(); return;
            case crew::detail::notify_result::dealloc: free_header(); return;
            case crew::detail::notify_result::do_nothing: return;
        }
    }

    void drop_handle() {
        alive();
        crew::detail::join_drop d = st->unset_join_interested();
        if (d.drop_output) drop_result();
        release();
    }

    void work(int attempts) {
        for (int i = 0; i < attempts; ++i)
            if (take_entry()) run();
    }

    void thread(unsigned index) {
        if (index == 0) {
            work(3);
        } else if (index == 1) {
            for (int i = 0; i < 3; ++i) fire(slot_a, payload_a);  // W1 may not be published yet
            fire(slot_b, payload_b);
            work(2);
        } else {
            if (Cancel) {
                alive();
                note(RL_INFO) = 1;
                bool first = false;
                if (susp->request_cancel(first) &&
                    st->transition_to_notified_by_ref() == crew::detail::notify_result::submit)
                    submit();
                release();  // the canceller's reference
            }
            drop_handle();
        }
    }

    void after() {
        for (int round = 0; round < 4; ++round) {
            fire(slot_a, payload_a);
            fire(slot_b, payload_b);
            while (take_entry()) run();
        }
        RL_ASSERT(completed == 1);
        RL_ASSERT(results_dropped == 1);
        RL_ASSERT(freed == 1);
    }
};

// The late waker, directly: the suspension word alone. Thread 0 (the task) arms suspension 1
// (cancellable) and publishes its generation; thread 1 cancels it; once the task sees the cancel
// it arms suspension 2 (not cancellable) and says so; thread 2 holds the waker of suspension 1 and
// fires it only after suspension 2 is armed (the interleaving the random scheduler rarely reaches
// in task_word_model). The stale resolve must fail, and the task's own retract of suspension 2
// must then succeed (nobody else resolved it).
template <class Policy>
struct late_waker_model : rl::test_suite<late_waker_model<Policy>, 3> {
    using word = crew::detail::suspension_word<Policy>;
    static constexpr std::uint64_t refused = 1;  // slot value: suspension 1 was never armed
    aligned_box<word> susp;
    model_atomic<std::uint64_t> first{0}, second{0};  // published generations (0: not yet)

    void thread(unsigned self) {
        if (self == 0) {
            const std::uint64_t g1 = susp->arm(true);
            first.store(g1 == 0 ? refused : g1, std::memory_order_release);
            while (susp->phase() == word::phase_waiting) rl::yield(1, RL_INFO);  // until cancelled
            const std::uint64_t g2 = susp->arm(false);
            RL_ASSERT(g2 != 0);
            second.store(g2, std::memory_order_release);
            RL_ASSERT(susp->resolve(g2, word::phase_none));  // the retract: still waiting
        } else if (self == 1) {
            bool is_first = false;
            susp->request_cancel(is_first);
        } else {
            std::uint64_t g1 = 0;
            while ((g1 = first.load(std::memory_order_acquire)) == 0) rl::yield(1, RL_INFO);
            if (g1 == refused) return;
            while (second.load(std::memory_order_acquire) == 0) rl::yield(1, RL_INFO);
            RL_ASSERT(!susp->resolve(g1, word::phase_signaled));  // stale: a later one is armed
        }
    }
};

// The deferred wake of a primitive's wait list (crew/async/detail/wait_list.hpp, wake_batch,
// session 9), with the production suspension word and task state: one waiter task, suspended on
// a one-value channel's receiver list (its node, in its frame, linked; its waker holds a
// reference). Thread 0 runs the task's entries (a worker). Thread 1 sends one value: under the
// primitive's lock it pops the node, writes the value into it and CLAIMS the wake (the resolving
// CAS); when cancellation won the claim it takes the value back into the buffer, still under the
// lock; the claimed task is queued (notify by value) only after the unlock. Thread 2 cancels
// (request_cancel, queue by reference) and drops its reference. The resumed task reads its node's
// value when signaled; when cancelled it unlinks its node under the lock if it is still linked
// (dropping the waker's reference). Either way its frame -- the node -- dies at once.
// Checked: the task resumes exactly once; the value ends exactly once either in the task or in
// the buffer (never lost, never both); nobody touches the node after its frame died (a ghost flag
// and an rl::var); the header is freed exactly once.
// Teeth: bug::wait_claim_after_unlock (the naive deferral: pop and write under the lock, claim
// after the unlock, take back under the lock again) -- the cancelled task found its node popped
// and died; the sender's take-back reads a dead node.
template <class Policy>
struct deferred_wake_model : rl::test_suite<deferred_wake_model<Policy>, 3> {
    using state = crew::detail::task_state<Policy>;
    using word = crew::detail::suspension_word<Policy>;
    static constexpr bool claim_after_unlock = Policy::injected_bug == crew::detail::bug::wait_claim_after_unlock;
    aligned_box<state> st{std::uint64_t{3}};  // the first entry's, the canceller's, the waker's
    aligned_box<word> susp;
    model_mutex lock;              // the primitive's wait_lock
    model_run_queue queue{0};      // the task's entries
    bool linked = true;            // guarded by lock: the node is on the receiver list
    int buffered = 0;              // guarded by lock: the channel's buffer (0 or 1 values)
    std::uint64_t gen = 0;         // the waker's generation (in the node)
    rl::var<int> node_value;       // the node's outcome (in the task's frame)
    bool frame_alive = true;       // ghost
    int resumes = 0, received = 0, freed = 0;  // ghosts

    // The task's first run: it suspends on the list (prepare_suspend + link) and goes idle (the
    // entry's reference is dropped there).
    void before() {
        node_value(RL_INFO) = 0;
        RL_ASSERT(st->transition_to_running() == crew::detail::run_result::success);
        gen = susp->arm(true);
        RL_ASSERT(gen != 0);
        RL_ASSERT(st->transition_to_idle() == crew::detail::idle_result::ok);
    }

    void free_header() {
        RL_ASSERT(freed == 0);
        ++freed;
    }
    void release() {
        if (st->ref_dec()) free_header();
    }
    void submit() { queue.submit(); }
    bool take_entry() { return queue.take_entry(); }
    void touch_node() { RL_ASSERT(frame_alive); }

    // async_task::run: resume the receiver (its co_await ends: the node dies with the awaitable;
    // the task then goes idle, which drops the entry's reference).
    void run() {
        switch (st->transition_to_running()) {
            case crew::detail::run_result::success: break;
            case crew::detail::run_result::dealloc: free_header(); return;
            default: return;
        }
        if (susp->phase() == word::phase_waiting) {  // a stale entry: nothing to resume
            go_idle();
            return;
        }
        RL_ASSERT(++resumes == 1);
        if (susp->phase() == word::phase_signaled) {
            received = node_value(RL_INFO);  // the sender's write, ordered by the claim and the queue
            RL_ASSERT(received == 1);
        } else {
            lock.lock();  // finish_suspension: unlink if no sender popped us
            if (linked) {
                linked = false;
                release();  // the waker's reference (waker::reset)
            }
            lock.unlock();
        }
        frame_alive = false;  // await_resume returned/threw: the node is gone
        go_idle();
    }
    void go_idle() {
        switch (st->transition_to_idle()) {
            case crew::detail::idle_result::ok: return;
            case crew::detail::idle_result::ok_notified: submit(); return;
            case crew::detail::idle_result::ok_dealloc: free_header(); return;
            case crew::detail::idle_result::cancelled: RL_ASSERT(false); return;  // no state.cancel()
        }
    }

    // channel::try_send(1) with a wake_batch.
    void send() {
        bool claimed = false, popped = false;
        lock.lock();
        if (linked) {
            linked = false;
            popped = true;
            touch_node();
            node_value(RL_INFO) = 1;
            if (!claim_after_unlock) claimed = claim_or_take_back();
        } else {
            ++buffered;
        }
        lock.unlock();
        if (claim_after_unlock && popped) {
            claimed = susp->resolve(gen, word::phase_signaled);
            if (!claimed) {
                lock.lock();
                touch_node();  // the cancelled task may be gone: this is the bug
                buffered += node_value(RL_INFO);
                lock.unlock();
                release();
            }
        }
        if (claimed && st->transition_to_notified_by_val() == crew::detail::notify_result::submit) submit();
    }

    // Under the lock: the claim; on failure the value goes back to the buffer (the node is alive:
    // the cancelled task unlinks under this lock, and we popped it, so it waits for the lock or
    // has not run yet).
    bool claim_or_take_back() {
        if (susp->resolve(gen, word::phase_signaled)) return true;
        touch_node();
        buffered += node_value(RL_INFO);
        node_value(RL_INFO) = 0;
        release();  // the waker's reference (claim() failed)
        return false;
    }

    void thread(unsigned index) {
        if (index == 0) {
            for (int i = 0; i < 3; ++i)
                if (take_entry()) run();
        } else if (index == 1) {
            send();
        } else {
            bool first = false;
            if (susp->request_cancel(first) &&
                st->transition_to_notified_by_ref() == crew::detail::notify_result::submit)
                submit();
            release();  // the canceller's reference
        }
    }

    void after() {
        while (take_entry()) run();
        RL_ASSERT(resumes == 1);
        RL_ASSERT(received + buffered == 1);
        RL_ASSERT(freed == 1);
    }
};

template <bug Bug, bool Cancel>
constexpr scenario task_word_scenario(const char* name) {
    return {name, &simulate<task_word_model<relacy_atomics<Bug>, Cancel>>};
}
template <bug Bug>
constexpr scenario late_waker_scenario(const char* name) {
    return {name, &simulate<late_waker_model<relacy_atomics<Bug>>>};
}
template <bug Bug>
constexpr scenario deferred_wake_scenario(const char* name) {
    return {name, &simulate<deferred_wake_model<relacy_atomics<Bug>>>};
}

// The task state word with a detached handle (model_task_state.hpp, task_state_model's Detach).
template <bug Bug>
constexpr scenario task_detach_scenario(const char* name) {
    return {name, &simulate<task_state_model<relacy_atomics<Bug>, false, true>>};
}

// The displacement of a stale entry from the LIFO slot (model_task_state.hpp, task_displace_model).
template <bug Bug, bool Cancel>
constexpr scenario task_displace_scenario(const char* name) {
    return {name, &simulate<task_displace_model<relacy_atomics<Bug>, Cancel>>};
}

// The awaiter's take-back of its own spawn from the LIFO slot (model_task_state.hpp,
// task_take_back_model).
template <bug Bug, bool Cancel>
constexpr scenario task_take_back_scenario(const char* name) {
    return {name, &simulate<task_take_back_model<relacy_atomics<Bug>, Cancel>>};
}

// The lifetime of a primitive's state block (model_wait_block.hpp).
template <bug Bug, bool Send>
constexpr scenario wait_block_scenario(const char* name) {
    return {name, &simulate<wait_block_model<relacy_atomics<Bug>, Send>>};
}

// The one-shot channel's word (model_oneshot.hpp).
template <bug Bug, bool Send, oneshot_rx Rx>
constexpr scenario oneshot_scenario(const char* name) {
    return {name, &simulate<oneshot_model<relacy_atomics<Bug>, Send, Rx>>};
}

// Registered in model_check.cpp (the correct code) and model_teeth.cpp (the bugs).
inline constexpr int task_word_scenario_count = 16;
extern const scenario task_word_scenarios[task_word_scenario_count];
inline constexpr int task_word_bug_count = 18;
extern const bug_entry task_word_bugs[task_word_bug_count];

}  // namespace crew_model
