// tests/reliability/model_task_state.hpp -- Relacy scenarios for the coroutine task's state word
// (task_state.hpp).
// Part of model_scenarios.hpp (which says what is checked and how a scenario runs).
#pragma once

// Before relacy.hpp (through relacy_policy.hpp) redefines `new` and friends for user code.
#include "crew/detail/frame_cache.hpp"
#include "reliability/relacy_policy.hpp"

namespace crew_model {

// ---------------------------------------------------------------------------------------------
// Task state word (crew/detail/task_state.hpp): one mock task, born queued. Threads 0 and 1 are
// workers that run its queue entries (a locked count: the only task); thread 1 first sends the
// message the task waits for (msg = 1, then a by-value wake). Thread 2 holds the join handle
// (Cancel = false: waits through the waker slot or reads the result, then drops it) or cancels
// the task first (Cancel = true) and then drops the handle. A run writes the frame (an rl::var:
// two concurrent runs are a data race) and completes when it sees the message; after() runs the
// entries left. Checked: the task completes exactly once (a lost wake leaves it unfinished), the
// result is destroyed exactly once, the frame is freed exactly once and never touched after, and a
// join waker the handle installed (and did not take back) is fired.

//
// Detach (session 11; Cancel is false then): thread 2 drops the handle at once, as a detached
// spawn does, through the one-CAS drop_join_interest_unwatched() that every drop_handle() tries
// first (join_handle::drop). Checked as above: the result is dropped exactly once (by the runner
// when the drop came first, by the handle when COMPLETE came first) and the frame freed once;
// and the one-CAS drop is never taken while a join waker is installed (Cancel = false without
// Detach installs one), which would leave the waker unreleased.
template <class Policy, bool Cancel, bool Detach = false>
struct task_state_model : rl::test_suite<task_state_model<Policy, Cancel, Detach>, 3> {
    using state = crew::detail::task_state<Policy>;
    aligned_box<state> st{std::uint64_t{Cancel ? 4u : 3u}};  // entry, handle, sender (, canceller)
    model_run_queue queue{1};  // the task's entries (one: its first run)
    rl::var<int> frame;
    rl::var<int> result;
    model_atomic<int> msg{0};
    model_atomic<int> joined{0};
    int completed = 0, results_dropped = 0, freed = 0;  // ghosts (Relacy runs one fiber at a time)
    bool waker_installed = false, waker_taken_back = false;  // ghosts: the handle's waker slot

    task_state_model() {
        frame(RL_INFO) = 0;
        result(RL_INFO) = 0;
    }

    void alive() { RL_ASSERT(freed == 0); }
    void free_frame() {
        RL_ASSERT(freed == 0);
        ++freed;
    }
    void submit() { queue.submit(); }
    bool take_entry() { return queue.take_entry(); }

    void run() {
        alive();
        switch (st->transition_to_running()) {
            case crew::detail::run_result::failed: return;
            case crew::detail::run_result::dealloc: free_frame(); return;
            case crew::detail::run_result::cancelled: complete(); return;
            case crew::detail::run_result::success: break;
        }
        frame(RL_INFO) = frame(RL_INFO) + 1;  // never on two threads at once
        if (msg.load(std::memory_order::acquire) == 1) return complete();
        // The first run yields (notify_self: folded into transition_to_idle(true)), a later one
        // just suspends.
        switch (st->transition_to_idle(frame(RL_INFO) == 1)) {
            case crew::detail::idle_result::ok: return;
            case crew::detail::idle_result::ok_notified: submit(); return;
            case crew::detail::idle_result::ok_dealloc: free_frame(); return;
            case crew::detail::idle_result::cancelled: complete(); return;
        }
    }
    // async_task::complete: the one-CAS completion while no join waker is installed (a detached
    // task's result dropped first, still RUNNING), else the long way (complete_watched).
    void complete() {
        result(RL_INFO) = 1;
        bool output_dropped = false;
        for (;;) {
            switch (st->transition_to_complete_unwatched(1, output_dropped)) {
                case crew::detail::complete_result::done: ++completed; return;
                case crew::detail::complete_result::done_dealloc: ++completed; free_frame(); return;
                case crew::detail::complete_result::drop_output: drop_result(); output_dropped = true; break;
                case crew::detail::complete_result::join_waker: return complete_watched();
            }
        }
    }
    void complete_watched() {
        std::uint64_t snap = st->transition_to_complete();
        ++completed;
        bool fired = false;
        if ((snap & state::join_interest) == 0) {
            drop_result();
        } else if ((snap & state::join_waker) != 0) {
            joined.store(1, std::memory_order::release);
            fired = true;  // the slot goes back in transition_to_terminal's RMW
        }
        alive();  // the terminal RMW is a use of the task (its word lives in the frame)
        if (st->transition_to_terminal(1, fired)) free_frame();
    }
    void drop_result() {
        RL_ASSERT(result(RL_INFO) == 1);
        ++results_dropped;
    }
    void wake_by_val() {
        alive();
        crew::detail::notify_result r = st->transition_to_notified_by_val();
        if (r == crew::detail::notify_result::submit) submit();
        if (r == crew::detail::notify_result::dealloc) free_frame();
    }
    void drop_handle() {
        alive();
        if (const auto f = st->drop_join_interest_unwatched(); f.taken) {  // join_handle::drop's fast path
            RL_ASSERT(!waker_installed || waker_taken_back);  // the slot must be empty
            if (f.last) free_frame();
            return;
        }
        crew::detail::join_drop d = st->unset_join_interested();
        waker_taken_back = d.drop_waker;
        if (d.drop_output) drop_result();
        if (st->ref_dec()) free_frame();
    }
    // join_handle::drop_complete: the handle saw COMPLETE; the result and the slot first, then one RMW.
    void drop_handle_complete() {
        alive();
        drop_result();
        if (st->owns_join_slot()) alive();  // join_handle reads the slot while its reference holds the frame
        if (st->drop_join_interest_complete().last) free_frame();
    }
    void work(int attempts) {
        for (int i = 0; i < attempts; ++i)
            if (take_entry()) run();
    }

    void thread(unsigned index) {
        if (index == 0) {
            work(3);
        } else if (index == 1) {
            msg.store(1, std::memory_order::release);
            wake_by_val();
            work(2);
        } else if (Detach) {
            drop_handle();
        } else if (Cancel) {
            alive();
            if (st->cancel() == crew::detail::notify_result::submit) submit();
            if (st->ref_dec()) free_frame();  // the canceller's reference
            drop_handle();
        } else {
            alive();
            if (st->set_join_waker()) {
                waker_installed = true;
                if (joined.load(std::memory_order::acquire) == 1) {  // woken: COMPLETE, the result is ours
                    RL_ASSERT(result(RL_INFO) == 1);
                    return drop_handle_complete();
                }
            } else {
                RL_ASSERT(result(RL_INFO) == 1);  // COMPLETE seen (acquire): the result is visible
                return drop_handle_complete();
            }
            drop_handle();
        }
    }

    void after() {
        while (take_entry()) run();
        RL_ASSERT(completed == 1);
        RL_ASSERT(results_dropped == 1);
        RL_ASSERT(freed == 1);
        // A waker the handle installed and did not take back was fired (no lost join wake).
        RL_ASSERT(!waker_installed || waker_taken_back || joined.load(std::memory_order::relaxed) == 1);
    }
};

// The mock task both run-inline models below share: its state word, its queue (the owner's ring,
// where a wake's submit goes), the frame and the result (rl::vars: a run on two threads at once, or
// a free not ordered after a run, is a data race), and the ghosts Relacy checks after the run
// (Relacy runs one fiber at a time). `queued`: the entry starts in the queue (else elsewhere: the
// owner's LIFO slot). The models add their threads.
template <class Policy, bool Cancel>
struct claimable_task {
    using state = crew::detail::task_state<Policy>;
    aligned_box<state> st{std::uint64_t{Cancel ? 4u : 3u}};  // entry, handle, sender (, canceller)
    model_run_queue queue;
    rl::var<int> frame;
    rl::var<int> result;
    model_atomic<int> msg{0};
    int completed = 0, results_dropped = 0, freed = 0, runs = 0;  // ghosts
    int entries = 1;  // ghost: queue entries of the task (at most one: the injector's intrusive links)

    explicit claimable_task(bool queued) : queue{queued ? 1 : 0} {
        frame(RL_INFO) = 0;
        result(RL_INFO) = 0;
    }

    void submit() {
        RL_ASSERT(entries == 0);  // a second entry of one task
        ++entries;
        queue.submit();
    }
    bool take_entry() {
        const bool got = queue.take_entry();
        if (got) --entries;
        return got;
    }
    void alive() { RL_ASSERT(freed == 0); }
    void free_frame() {
        RL_ASSERT(freed == 0);
        ++freed;
        frame(RL_INFO) = -1;  // the free: ordered after every run's access, or a data race
    }
    // A worker popped an entry.
    void run() {
        alive();
        switch (st->transition_to_running()) {
            case crew::detail::run_result::failed: return;
            case crew::detail::run_result::dealloc: free_frame(); return;
            case crew::detail::run_result::cancelled: complete(); return;
            case crew::detail::run_result::success: break;
        }
        body();
    }
    // RUNNING held (a popped entry, or the awaiter's claim): one run of the coroutine.
    void body() {
        frame(RL_INFO) = frame(RL_INFO) + 1;  // never on two threads at once
        const bool sent = msg.load(std::memory_order::acquire) == 1;
        RL_ASSERT(runs == 0 || sent);  // a later run needs the wake (the message comes first)
        ++runs;
        if (sent) return complete();
        switch (st->transition_to_idle()) {
            case crew::detail::idle_result::ok: return;
            case crew::detail::idle_result::ok_notified: submit(); return;
            case crew::detail::idle_result::ok_dealloc: free_frame(); return;
            case crew::detail::idle_result::cancelled: complete(); return;
        }
    }
    void complete() {
        result(RL_INFO) = 1;
        bool output_dropped = false;
        for (;;) {
            switch (st->transition_to_complete_unwatched(1, output_dropped)) {
                case crew::detail::complete_result::done: ++completed; return;
                case crew::detail::complete_result::done_dealloc: ++completed; free_frame(); return;
                case crew::detail::complete_result::drop_output:
                    RL_ASSERT(result(RL_INFO) == 1);
                    ++results_dropped;
                    output_dropped = true;
                    break;
                case crew::detail::complete_result::join_waker: RL_ASSERT(false); return;  // none installed
            }
        }
    }
    // The awaiter: claims the run and runs it inline (its entry goes stale), or leaves it.
    void await_inline_then_drop_handle() {
        alive();
        if (st->claim_to_run_inline()) body();
        drop_handle();
    }
    void drop_handle() {
        alive();
        crew::detail::join_drop d = st->unset_join_interested();
        if (d.drop_output) {
            RL_ASSERT(result(RL_INFO) == 1);
            ++results_dropped;
        }
        if (st->ref_dec()) free_frame();
    }
    // The sender: (Cancel: cancels the task first,) sends the message and wakes the task by value.
    void send_and_wake() {
        if (Cancel) {
            alive();
            if (st->cancel() == crew::detail::notify_result::submit) submit();
            if (st->ref_dec()) free_frame();  // the canceller's reference
        }
        msg.store(1, std::memory_order::release);
        alive();
        crew::detail::notify_result r = st->transition_to_notified_by_val();
        if (r == crew::detail::notify_result::submit) submit();
        if (r == crew::detail::notify_result::dealloc) free_frame();
    }
    // After the threads: the entries left run; the task completed, its result and frame went once.
    void drain_and_check() {
        while (take_entry()) run();
        RL_ASSERT(entries == 0);
        RL_ASSERT(completed == 1);
        RL_ASSERT(results_dropped == 1);
        RL_ASSERT(freed == 1);
    }
};

// ---------------------------------------------------------------------------------------------
// Run inline (task_state::claim_to_run_inline, async_task::run_inline): the awaiter of a queued
// task takes its run against a worker that pops its entry (a thief) and a waker (Cancel: and a
// canceller first). One mock task, born queued (one entry), that completes when it sees the
// message and otherwise suspends. Thread 0 is the awaiter: it claims the run and runs it inline,
// or leaves it to the queue, then drops its handle. Thread 1 is a worker running the queue's
// entries; thread 2 sends the message and wakes the task by value (Cancel: cancels it first).
// Checked, besides task_state_model's (completes once, result and frame freed once, one run at
// a time through the rl::var frame): a run after the first starts only once the message was sent
// (the claimed entry never runs the task again: "both run it"), and the task completes (the wake
// after an inline run is never dropped as the stale entry: "neither runs it").
template <class Policy, bool Cancel>
struct task_claim_model : rl::test_suite<task_claim_model<Policy, Cancel>, 3>, claimable_task<Policy, Cancel> {
    using task = claimable_task<Policy, Cancel>;
    task_claim_model() : task(true) {}

    void thread(unsigned index) {
        if (index == 0) {
            task::await_inline_then_drop_handle();
        } else if (index == 1) {
            for (int i = 0; i < 3; ++i)
                if (task::take_entry()) task::run();
        } else {
            task::send_and_wake();
        }
    }

    void after() { task::drain_and_check(); }
};

// ---------------------------------------------------------------------------------------------
// Displacement (session 12; task_state::drop_stale_entry, worker::wake_async): the task's one
// entry sits in its owner's LIFO slot (a spawn from a task). Thread 0 is the awaiter: it claims
// the run and runs it inline (the entry goes stale), or leaves it, then drops its handle. Thread 1
// is the owner: a newer task displaces the entry from its slot (an exchange: a thief may have taken
// it first), and drop_stale_entry() either drops it (stale) or pushes it to the ring (live); then
// it runs ring entries. Thread 2 is a thief that takes the slot (steal_lifo_from) and runs the
// entry. Thread 3 sends the message and wakes the task by value (Cancel: cancels it first), which
// may turn the stale entry into the live one again while the owner holds it. Checked, besides
// task_claim_model's (one run at a time, a later run only after the message, completes once,
// result and frame freed once, at most one entry): a live entry is never dropped (the task still
// completes), a dropped entry is never queued too, and the frame's free happens after every
// access to it (the free writes the rl::var frame: a free not ordered after a run is a race).
template <class Policy, bool Cancel>
struct task_displace_model : rl::test_suite<task_displace_model<Policy, Cancel>, 4>, claimable_task<Policy, Cancel> {
    using task = claimable_task<Policy, Cancel>;
    using displaced = typename task::state::displaced;
    model_atomic<int> slot{1};  // the owner's LIFO slot holds the entry
    task_displace_model() : task(false) {}

    // worker::wake_async: the displaced occupant is dropped when stale, else pushed to the ring.
    void displace() {
        if (slot.exchange(0, std::memory_order::acq_rel) == 0) return;  // a thief took it
        task::alive();
        switch (task::st->drop_stale_entry()) {
            case displaced::live: task::queue.submit(); return;  // the same entry moves: `entries` unchanged
            case displaced::dropped: --task::entries; return;
            case displaced::dealloc: --task::entries; task::free_frame(); return;
        }
    }

    void thread(unsigned index) {
        if (index == 0) {
            task::await_inline_then_drop_handle();
        } else if (index == 1) {
            displace();
            for (int i = 0; i < 2; ++i)
                if (task::take_entry()) task::run();
        } else if (index == 2) {
            if (slot.exchange(0, std::memory_order::acq_rel) == 1) {  // steal_lifo_from
                --task::entries;
                task::run();
            }
        } else {
            task::send_and_wake();
        }
    }

    void after() { task::drain_and_check(); }
};

// ---------------------------------------------------------------------------------------------
// Take-back (session 19; worker::take_back_lifo, async_task::run_inline): the task's one entry
// sits in its owner's LIFO slot (a spawn from a task), and its awaiter runs on that owner. Thread
// 0 is the owner and awaiter: it takes the entry back from the slot with a CAS and runs it as a
// pop would (transition_to_running), or, when a thief took it first, claims the run inline (or
// leaves it), then drops its handle. Thread 1 is a thief that takes the slot (steal_lifo_from)
// and runs the entry. Thread 2 sends the message and wakes the task by value (Cancel: cancels it
// first). Checked, as task_displace_model: one run at a time, a later run only after the message,
// completes once, result and frame freed once, at most one entry (the slot's entry is taken once:
// by the CAS or by the thief, never both).
template <class Policy, bool Cancel>
struct task_take_back_model : rl::test_suite<task_take_back_model<Policy, Cancel>, 3>, claimable_task<Policy, Cancel> {
    using task = claimable_task<Policy, Cancel>;
    model_atomic<int> slot{1};  // the owner's LIFO slot holds the entry
    task_take_back_model() : task(false) {}

    // worker::take_back_lifo: only the owner puts, so the slot holds the entry or nothing.
    bool take_back() {
        if (slot.load(std::memory_order::relaxed) != 1) return false;
        if constexpr (Policy::injected_bug == crew::detail::bug::lifo_take_back_store) {
            slot.store(0, std::memory_order::relaxed);  // the bug: a store, racing the thief's exchange
            return true;
        }
        int expected = 1;
        return slot.compare_exchange_strong(expected, 0, std::memory_order::acquire, std::memory_order::relaxed);
    }

    void thread(unsigned index) {
        if (index == 0) {
            if (take_back()) {
                --task::entries;
                task::run();  // async_task::start_entry, then the run
                task::drop_handle();
            } else {
                task::await_inline_then_drop_handle();
            }
        } else if (index == 1) {
            if (slot.exchange(0, std::memory_order::acq_rel) == 1) {  // steal_lifo_from
                --task::entries;
                task::run();
            }
            for (int i = 0; i < 2; ++i)
                if (task::take_entry()) task::run();
        } else {
            task::send_and_wake();
        }
    }

    void after() { task::drain_and_check(); }
};

}  // namespace crew_model
