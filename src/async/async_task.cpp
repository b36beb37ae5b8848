// The runner, cancellation and shutdown of spawned coroutine tasks (crew/async/detail/async_task.hpp).
#include "crew/async/detail/async_task.hpp"

#include <new>

#include "crew/async/detail/waiter.hpp"
#include "crew/detail/registry.hpp"
#include "crew/detail/worker.hpp"

namespace crew::detail {

namespace {

// The thread-locals of one run. Not saved and restored here: a run nested on top of another
// coroutine's run starts only inside worker::wait_until, which saves them (nested_async_run,
// async_schedule.hpp); at the top of the worker loop there is nothing to restore. Saving them on
// every run kept three values in callee-saved registers across the resume.
class run_scope {
public:
    run_scope(async_task* t, std::uint32_t transfers) noexcept {
        current_async_task = t;
        inline_transfers = transfers;
        begin_async_run();
    }
    ~run_scope() { current_async_task = nullptr; }
    run_scope(const run_scope&) = delete;
    run_scope& operator=(const run_scope&) = delete;
};

using state_t = task_state<>;

// Inline runs nested on this thread now (async_task::run_inline).
constinit thread_local std::uint32_t inline_run_depth = 0;

}  // namespace

bool is_async_task(const task* t) noexcept { return t->execute == &async_task::run; }

bool drop_stale_entry(task* t) noexcept {
    // schedule_async also queues plain tasks (tests/detail/async_schedule_test.cpp): those have no
    // state word and are never stale. (is_async_task's test, spelled here: gcc kept it a call.)
    if (t->execute != &async_task::run) return false;
    auto* self = static_cast<async_task*>(t);
    const state_t::displaced r = self->state.drop_stale_entry();
    if (r == state_t::displaced::dealloc) self->deallocate();
    return r != state_t::displaced::live;
}

void async_task::deallocate() noexcept {
    destroy_root();  // normally done by the result's owner already
    void* const memory = frame_memory_;
    const std::size_t size = frame_size_;
    this->~async_task();  // it lives in that block
    free_frame(memory, size);
}

void async_task::destroy_root() noexcept {
    if (!root) return;
    async_task* const outer = std::exchange(deferred_root, this);
    std::exchange(root, {}).destroy();  // its operator delete hands the block to defer_root_free
    deferred_root = outer;
}

void async_task::run_once(std::uint32_t transfers) noexcept {
    {
        run_scope scope(this, transfers);
        // acquire: pairs with the resolving CAS. A suspension still waiting means this entry
        // came from a stale notification (e.g. a retracted suspension): do not resume.
        if (susp.phase() != phase_waiting) resume_point.resume();
    }
    if (root_done) {
        complete(2);  // the entry that ran, and the list's
        return;
    }
    after_run();
}

// The holder of a queue entry (a popped one, or one taken back) takes the run. False: nothing
// to run (a stale entry, which dropped its reference; or the shutdown drain's cancel).
// Inlined into both callers (out of line, every popped run paid a call).
[[gnu::always_inline]] inline bool async_task::start_entry() noexcept {
    switch (state.transition_to_running()) {
    case run_result::failed:
        return false;  // a stale entry: it dropped its reference
    case run_result::dealloc:
        deallocate();
        return false;
    case run_result::cancelled:
        // Only the shutdown drain sets CANCELLED, after the workers stopped; defensive.
        destroy_root();
        frame_destroyed = true;
        complete(2);
        return false;
    case run_result::success:
        return true;
    }
    return false;
}

void async_task::run(task* t) noexcept {
    auto* self = static_cast<async_task*>(t);
    if (self->start_entry()) self->run_once();
}

bool async_task::run_inline() noexcept {
    // The stack bounds: nested inline runs, and the awaiter's transfers (the inline run counts as
    // one and continues the count, so a chain of inline runs and transfers stays within
    // max_inline_transfers frames).
    if (inline_run_depth >= max_inline_runs || inline_transfers >= max_inline_transfers) return false;
    // Spawned by this worker and still in its LIFO slot (a spawn+await): take the entry back and
    // run it as the worker's pop would (session 19). Else claim the run, leaving the entry stale.
    // (Inline: out of line, the failed look cost ping_pong about 30 instructions per round.)
    if (worker* const w = current_worker; w != nullptr && w->take_back_lifo(this)) {
        if (!start_entry()) return false;  // never the last reference: the awaiter's handle holds one
    } else if (!state.claim_to_run_inline()) {
        return false;
    } else if (owner != current_async_task->owner) [[unlikely]] {
        // `owner` is read after the claim (its acquire orders a migrate by an earlier run before
        // it). Another pool's task: give the run back, queued on its own pool (the claim's
        // reference becomes the new entry's; the old entry stays stale). (A taken-back entry was
        // in this worker's own queue: running it here is what the worker would do.)
        notify_self();
        after_run();
        return false;
    }
    const nested_async_run saved;  // the awaiter's run state
    ++inline_run_depth;
    run_once(saved.transfers + 1);
    --inline_run_depth;
    saved.restore();
    return true;
}

void async_task::after_run() noexcept {
    // A yield during the run (notify_self) sets NOTIFIED in the same RMW that ends the run.
    switch (state.transition_to_idle(std::exchange(yield_requested, false))) {
    case idle_result::ok:
        return;
    case idle_result::ok_dealloc:
        deallocate();
        return;
    case idle_result::ok_notified:
        requeue(async_wake::yield);  // a wake during the run: the back of the ring
        return;
    case idle_result::cancelled:
        destroy_root();  // the shutdown drain marked it while it ran (defensive, see run())
        frame_destroyed = true;
        complete(2);
        return;
    }
}

void async_task::requeue(async_wake how) noexcept {
    // Refused: the pool is shutting down; the drain frees the task. Drop the entry's reference.
    if (!schedule_async(*owner, this, how)) release();
}

// The root finished (or the shutdown drain dropped it). Nobody waits on the handle (the common
// case: a detached task, or a handle not awaited yet): one CAS completes the task and drops our
// references. Else complete_watched(), which fires the join waker in between.
void async_task::complete(std::uint64_t scheduler_refs) noexcept {
    // Leave the live-task list first: after the completing RMW the task is not ours to touch. (The
    // drain runs only after the workers exited, so no runner of this pool races it.)
    if (linked) owner->async_tasks().remove(this);
    bool output_dropped = false;
    for (;;) {
        switch (state.transition_to_complete_unwatched(scheduler_refs, output_dropped)) {
        case complete_result::done:
            return;
        case complete_result::done_dealloc:
            deallocate();
            return;
        case complete_result::drop_output:  // detached: the result is the runner's to drop
            drop_detached_output();
            output_dropped = true;
            break;
        case complete_result::join_waker:
            complete_watched(scheduler_refs);
            return;
        }
    }
}

void async_task::complete_watched(std::uint64_t scheduler_refs) noexcept {
    const std::uint64_t s = state.transition_to_complete();
    bool fired = false;
    if ((s & state_t::join_interest) == 0) {
        drop_detached_output();  // the handle was dropped after the unwatched attempt
    } else if ((s & state_t::join_waker) != 0) {
        fire_join_waker();  // the waker is consumed: nothing to drop when the slot is given back
        fired = true;
    }
    // The references, and a fired waker's slot (unset_waker_after_complete), in one RMW.
    if (state.transition_to_terminal(scheduler_refs, fired)) deallocate();
}

// A detached task's result: an exception goes to the pool's handler; the root frame is destroyed
// (its memory stays with the header). Nothing when the shutdown drain destroyed the frame.
void async_task::drop_detached_output() noexcept {
    if (frame_destroyed) return;
    if (root_promise->error) owner->report_unhandled(root_promise->error, "a detached coroutine task");
    destroy_root();
}

void async_task::fire_join_waker() noexcept {
    if (join.blocked != nullptr) {
        std::exchange(join.blocked, nullptr)->set();
        return;
    }
    // This run is over (the task completed): the joiner goes to the LIFO slot with the notify of
    // a run that ends (async_schedule.hpp, async_wake::wake_at_end).
    waker::from_parts(std::exchange(join.task, nullptr), join.gen).wake(async_wake::wake_at_end);
}

void async_task::wake_by_val(async_wake how) noexcept {
    switch (state.transition_to_notified_by_val()) {
    case notify_result::submit:
        requeue(how);
        return;
    case notify_result::dealloc:
        deallocate();
        return;
    case notify_result::do_nothing:
        return;
    }
}

void async_task::wake_by_ref(async_wake how) noexcept {
    if (state.transition_to_notified_by_ref() == notify_result::submit) requeue(how);
}

void async_task::request_cancel() noexcept {
    bool first = false;
    const bool resolve = susp.request_cancel(first);  // acq_rel: see suspension_word
    if (!first) return;
    if (resolve) wake_by_ref(async_wake::wake);
    lock_hooks();
    for (cancel_hook* h = hooks_; h != nullptr; h = h->next) h->on_cancel(h);
    unlock_hooks();
}

bool async_task::add_cancel_hook(cancel_hook* h) noexcept {
    lock_hooks();
    // Under the lock: request_cancel() sets the bit before it takes the lock, so either we see
    // the bit here or it sees the hook there.
    if (cancel_requested()) {
        unlock_hooks();
        return false;
    }
    h->prev = nullptr;
    h->next = hooks_;
    if (hooks_ != nullptr) hooks_->prev = h;
    hooks_ = h;
    unlock_hooks();
    return true;
}

void async_task::remove_cancel_hook(cancel_hook* h) noexcept {
    lock_hooks();
    if (h->prev != nullptr) h->prev->next = h->next;
    else if (hooks_ == h) hooks_ = h->next;
    if (h->next != nullptr) h->next->prev = h->prev;
    h->next = h->prev = nullptr;
    unlock_hooks();
}

void async_task::lock_hooks() noexcept {
    // acquire: pairs with unlock_hooks()'s release (the list and the hooks' effects).
    for (unsigned spins = 0; hooks_locked_.exchange(true, std::memory_order_acquire); ++spins) {
        if (spins < 64) std_atomics::pause();
        else std_atomics::yield();
    }
}

// release: pairs with lock_hooks()'s acquire exchange.
void async_task::unlock_hooks() noexcept { hooks_locked_.store(false, std::memory_order_release); }

void async_task::link_cold() noexcept {
    // Our pool's list is open: we run on one of its workers, and the list closes only after they
    // all exited (registry::shutdown).
    linked = owner->async_tasks().add(this);
}

bool async_task::migrate(registry& to) noexcept {
    if (&to == owner) return true;
    if (linked) owner->async_tasks().remove(this);  // open: we run on one of its workers
    // Linked into `to` at once, linked or not before: a refused add is how a closing `to` says no.
    if (!to.async_tasks().add(this)) {
        if (linked) owner->async_tasks().add(this);
        return false;
    }
    linked = true;
    owner = &to;  // read by requeue() after the run, on this thread
    return true;
}

void async_task::shut_down() noexcept {
    if (!state.transition_to_shutdown()) {  // running or complete: its runner finishes it
        release();                          // the list's reference
        return;
    }
    // Settle the suspension first: one still waiting ends cancelled (resolve(), the CAS of every
    // waker and canceller), so no releaser can claim it while its frames go, and an awaiter
    // destroyed there knows from the phase whether a releaser had claimed it (wait_list.hpp,
    // finish_destroyed_cold: then the block is no longer its to touch).
    (void)susp.resolve(susp.generation(), phase_cancelled);
    async_task* const outer = std::exchange(draining_task, this);
    destroy_root();
    draining_task = outer;
    frame_destroyed = true;
    complete(1);  // the list's reference (the drain unlinked it already)
}

void async_task_list::shard::lock() noexcept {
    // acquire: pairs with unlock()'s release (the links written by the previous holder).
    for (unsigned spins = 0; locked.exchange(true, std::memory_order_acquire); ++spins) {
        while (locked.load(std::memory_order_relaxed)) {  // relaxed: a hint; the exchange decides
            if (++spins < 64) std_atomics::pause();
            else std_atomics::yield();
        }
    }
}

// release: pairs with lock()'s acquire exchange.
void async_task_list::shard::unlock() noexcept { locked.store(false, std::memory_order_release); }

unsigned async_task_list::shard_of_caller() noexcept {
    worker* w = current_worker;
    return w == nullptr ? 0 : w->index() % shard_count;
}

// The caller is the only worker of this list's pool (see task_list.hpp, the lone shard).
[[gnu::always_inline]] inline bool async_task_list::lone_caller() const noexcept {
    worker* w = current_worker;
    return w != nullptr && w->alone() && &w->owner().async_tasks() == this;
}

void async_task_list::link(shard& s, unsigned i, async_task* t) noexcept {
    t->list_prev = nullptr;
    t->list_next = s.head;
    if (s.head != nullptr) s.head->list_prev = t;
    s.head = t;
    t->list_shard = static_cast<std::uint8_t>(i);
    t->listed = true;
}

bool async_task_list::add(async_task* t) noexcept {
    if (lone_caller()) {
        // No lock: only this thread touches the lone shard while the pool runs (task_list.hpp);
        // `closed` is set by the drain, after this thread was joined.
        shard& s = shards_[lone_shard];
        if (s.closed) return false;
        link(s, lone_shard, t);
        return true;
    }
    const unsigned i = shard_of_caller();
    shard& s = shards_[i];
    s.lock();
    if (s.closed) {
        s.unlock();
        return false;
    }
    link(s, i, t);
    s.unlock();
    return true;
}

void async_task_list::unlink(shard& s, async_task* t) noexcept {
    if (t->list_prev != nullptr) t->list_prev->list_next = t->list_next;
    else s.head = t->list_next;
    if (t->list_next != nullptr) t->list_next->list_prev = t->list_prev;
    t->listed = false;
}

void async_task_list::remove(async_task* t) noexcept {
    // list_shard was written before the task was queued (the queue hand-off orders it) or, by
    // migrate(), on the thread that calls remove() next.
    shard& s = shards_[t->list_shard];
    if (t->list_shard == lone_shard) {  // the lone worker's, or the drain's: no lock (task_list.hpp)
        if (t->listed) unlink(s, t);
        return;
    }
    s.lock();
    if (t->listed) unlink(s, t);
    s.unlock();
}

void async_task_list::drain() noexcept {
    for (shard& s : shards_) {
        for (;;) {
            s.lock();
            s.closed = true;
            async_task* t = s.head;
            if (t != nullptr) unlink(s, t);
            s.unlock();
            if (t == nullptr) break;
            t->shut_down();  // outside the lock: destroying frames may touch other tasks
        }
    }
}

}  // namespace crew::detail
