// The cold half of crew::task_group: waiting, destruction, recording a child's exception. The
// counting protocol itself is detail/group_count.hpp.
#include "crew/task_group.hpp"

#include <cstdint>
#include <cstdio>
#include <exception>
#include <mutex>
#include <utility>

namespace crew {

namespace {
constexpr const char* uncollected_source = "a task_group child whose exception was never collected by wait()";

// Guards every cancel_context's links (parent, first_child, next, prev) and orders cancel()
// against nesting: cancel() sets the flag before taking it, nest_cold() reads the parent's flag
// after linking under it, so a group nested concurrently with cancel() is either found by
// cancel()'s walk or sees the flag. Only groups that were ever nested take it (plus cancel()).
//
// A test-and-test-and-set lock rather than std::mutex: every group created inside another group's
// child takes it three times (nest, wait, destroy), always briefly, and a recursive task_group
// (skynet, tree walks) creates one per node. Unlocking is a release store instead of the mutex's
// RMW; a waiter spins with pause, then yields (cancel() of a large tree holds it longest).
class nesting_lock {
public:
    void lock() noexcept {
        // acquire: pairs with unlock()'s release store (the links written under the lock).
        std::uint32_t spins = 0;
        while (flag_.exchange(true, std::memory_order_acquire)) {
            while (flag_.load(std::memory_order_relaxed)) {  // relaxed: the exchange re-checks
                if (++spins < 64) detail::std_atomics::pause();
                else detail::std_atomics::yield();
            }
        }
    }
    void unlock() noexcept { flag_.store(false, std::memory_order_release); }  // release: see lock()

private:
    detail::std_atomics::atomic<bool> flag_{false};
};
constinit nesting_lock nesting_mutex;

void cancel_below_locked(detail::cancel_context& c) noexcept {
    for (detail::cancel_context* k = c.first_child; k != nullptr; k = k->next) {
        k->canceled.store(true, std::memory_order_relaxed);  // relaxed: no data (see cancellation_requested)
        cancel_below_locked(*k);
    }
}

// Takes c out of the tree: out of its parent's list, and its children become roots.
void unlink_locked(detail::cancel_context& c) noexcept {
    if (c.parent != nullptr) {
        if (c.prev != nullptr) c.prev->next = c.next;
        else c.parent->first_child = c.next;
        if (c.next != nullptr) c.next->prev = c.prev;
    }
    for (detail::cancel_context* k = c.first_child; k != nullptr;) {
        detail::cancel_context* following = k->next;
        k->parent = k->next = k->prev = nullptr;
        k = following;
    }
    c.parent = c.next = c.prev = c.first_child = nullptr;
}
}  // namespace

// Constructed while a child of another group runs on this thread: nest under that group, and start
// canceled when it is.
void task_group::nest_cold() {
    detail::cancel_context& outer = *detail::current_context;
    std::lock_guard lock(nesting_mutex);
    ctx_.parent = &outer;
    ctx_.next = outer.first_child;
    if (ctx_.next != nullptr) ctx_.next->prev = &ctx_;
    outer.first_child = &ctx_;
    // release: pairs with the acquire loads of `nested` in ~task_group and finish_wait() (which may
    // run on another thread, after a wait that acquired the child that ran this constructor).
    ctx_.nested.store(true, std::memory_order_release);
    outer.nested.store(true, std::memory_order_release);
    // relaxed: under the mutex, after cancel()'s store of the flag when cancel() locked first.
    if (outer.canceled.load(std::memory_order_relaxed)) ctx_.canceled.store(true, std::memory_order_relaxed);
}

void task_group::cancel() noexcept {
    // relaxed: the flag carries no data; the mutex below orders it against nest_cold().
    ctx_.canceled.store(true, std::memory_order_relaxed);
    std::lock_guard lock(nesting_mutex);
    cancel_below_locked(ctx_);
}

// After the children finished: take the cancellation state and reset it (to the enclosing group's,
// for a nested group).
task_group_status task_group::finish_wait() noexcept {
    const bool was_canceled = ctx_.canceled.load(std::memory_order_relaxed);
    // Not canceled: nothing to reset, and no lock (a recursive task_group program waits once per
    // node). A cancel() racing with this wait leaves the flag set, as if it came just after the
    // wait returned; the enclosing group's cancel() reaches this group through its walk anyway.
    if (!was_canceled) return task_group_status::complete;
    // acquire: pairs with nest_cold()'s release store (ours, or a child's nesting a group here).
    if (!ctx_.nested.load(std::memory_order_acquire)) {
        ctx_.canceled.store(false, std::memory_order_relaxed);
    } else {
        std::lock_guard lock(nesting_mutex);
        const bool inherited = ctx_.parent != nullptr && ctx_.parent->canceled.load(std::memory_order_relaxed);
        ctx_.canceled.store(inherited, std::memory_order_relaxed);
    }
    return was_canceled ? task_group_status::canceled : task_group_status::complete;
}

task_group::~task_group() {
    try {
        // acquire (unfinished()): pairs with the last finish's release, as begin_wait()'s load.
        // Count 0: nothing to wait for, and no own task can be running below (a running child is
        // counted until it finished, a drained one until the fold), so the usage checks of
        // wait_for_children() cannot fire: skip them (a group waited for by wait() lands here).
        if (count_.unfinished() != 0) wait_for_children();
    } catch (const usage_error& e) {
        // Destroyed inside one of its own children, or while another thread waits: children still
        // hold pointers to *this, so there is no safe way on (as a pool destroyed by its own task).
        std::fprintf(stderr, "crew: a task_group was destroyed while in use: %s\n", e.what());
        std::terminate();
    }
    if (detail::workspan_groups_pending()) [[unlikely]] detail::workspan_group_end(this);  // crew::workspan
    if (ctx_.nested.load(std::memory_order_acquire)) {  // acquire: as in finish_wait()
        std::lock_guard lock(nesting_mutex);
        unlink_locked(ctx_);
    }
    // acquire: pairs with record()'s release store of error_ready (ordered before that child's
    // finish, which wait_for_children() acquired).
    if (failed_.load(std::memory_order_acquire) == error_ready)
        error_pool_->report_unhandled(std::exchange(error_, nullptr), uncollected_source);
}

// The unstolen-child fast path: before announcing itself as the waiter, a worker runs what the
// waiting task pushed (its children among it); children finishing on this thread meanwhile are
// counted in `d` and subtracted in one RMW (detail/group_count.hpp, "The drain").
void task_group::drain(detail::worker& w) noexcept {
    if (count_.unfinished() == 0) return;  // nothing to wait for
    detail::group_drain d{this, 0, detail::current_drain};
    detail::current_drain = &d;
    w.run_related_work();
    detail::current_drain = d.outer;
    if (d.finished != 0) count_.finish(d.finished);  // the fold: before begin_wait announces us
}

// The usage check comes only before a wait that would block: while a task of this group runs
// lower on this stack, the count includes it (a running child is counted until it finished, a
// drained one until the fold), so a count of 0 after the drain proves there is none, and the walk
// of the running-group frames (linear in the nesting depth) is skipped on that fast path. A drain
// from inside an own task runs only what that task pushed (above its floor), then the check throws.
void task_group::wait_for_children() {
    if (detail::worker* w = detail::current_worker) drain(*w);
    // acquire: pairs with the last finish's release (the fold's, or a thief's), as begin_wait().
    if (count_.unfinished() == 0) return;
    check_not_below_own_task();
    detail::completion done;  // fresh per wait: nothing to reset, nothing for a late child to race
    switch (count_.begin_wait(done)) {
        case decltype(count_)::wait_status::done:
            return;
        case decltype(count_)::wait_status::busy:
            throw usage_error("crew::task_group::wait: another thread is already waiting for this group");
        case decltype(count_)::wait_status::must_wait:
            break;
    }
    detail::wait_for(done);  // acquire (completion): the last child's effects, and theirs before it
    count_.end_wait();
}

// A wait for this group from a stack that holds one of its tasks cannot end: that task resumes
// only after the wait returns. Either the caller is that task (or inline work of it), or a wait
// inside that task picked the caller up as other work to run meanwhile.
void task_group::check_not_below_own_task() const {
    detail::worker* w = detail::current_worker;
    const unsigned here = w != nullptr ? w->helped_nesting() : 0;
    for (auto* f = detail::running_groups; f != nullptr; f = f->outer) {
        if (f->group != this) continue;
        if (f->nesting == here)
            throw usage_error("crew::task_group::wait: called from inside one of the group's own tasks, "
                              "which would wait for itself");
        throw usage_error("crew::task_group::wait: this task was started by a worker while one of the "
                          "group's own tasks, lower on the same stack, was waiting; that task (and so "
                          "the group) cannot finish until this one returns. Wait for the group elsewhere, "
                          "or wrap the lower task's wait in crew::isolate so it runs no unrelated work");
    }
}

task_group_status task_group::wait() {
    if (detail::workspan_active()) [[unlikely]] return detail::workspan_group_wait(*this);  // crew::workspan
    wait_for_children();
    const task_group_status status = finish_wait();
    // acquire: pairs with record()'s release store of error_ready. A child still storing (it was
    // added concurrently with this wait) is left for the next wait().
    if (failed_.load(std::memory_order_acquire) == error_ready) {
        std::exception_ptr e = std::exchange(error_, nullptr);
        // release: pairs with record()'s acquire CAS, so the next child to store error_ does so
        // after we took it.
        failed_.store(no_error, std::memory_order_release);
        std::rethrow_exception(e);
    }
    return status;
}

void task_group::record(std::exception_ptr e) noexcept {
    std::uint8_t expected = no_error;
    // acquire: pairs with wait()'s release store of no_error (the previous error_ was taken).
    if (!failed_.compare_exchange_strong(expected, storing_error, std::memory_order_acquire,
                                         std::memory_order_relaxed))
        return;  // not the first: dropped
    error_ = std::move(e);
    detail::worker* w = detail::current_worker;  // children run on workers; run()'s pool otherwise
    error_pool_ = w != nullptr ? &w->owner() : pool_ != nullptr ? pool_ : &detail::current_registry();
    // release: publishes error_ and error_pool_ to wait()'s and the destructor's acquire load.
    failed_.store(error_ready, std::memory_order_release);
    cancel();  // as oneTBB: the first exception cancels the group; children not started are dropped
}

}  // namespace crew
