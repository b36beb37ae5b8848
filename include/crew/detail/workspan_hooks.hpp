// crew/detail/workspan_hooks.hpp -- the instrumented fork points behind crew::workspan.
//
// crew::join, crew::fork_join and task_group::run read one thread-local word first, fork_worker
// (detail/thread_state.hpp): the worker when no strand is measured on this thread, else nullptr.
// Their cold path then checks workspan_active() and takes the instrumented version. Off (the
// default) nothing else is paid. On, a fork point pauses the forking strand (closes its
// segment and clears the thread's current strand, so that the plain fork point runs below, and so
// that whatever a waiter helps with meanwhile is not charged to it), wraps each branch so that it
// runs as a strand of its own (on whichever thread runs it), and folds the branches back into the
// forking strand when they are done (the Cilkscale recurrence, docs/OBSERVABILITY.md "Work and span").
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "crew/detail/thread_state.hpp"

namespace crew {

class task_group;
enum class task_group_status;

namespace detail {

// One strand of the measured program: the work and span of what it ran so far (its own segments
// and the fork points it joined), all in ns. `open` is when its current segment began (ws_paused:
// none open).
inline constexpr std::int64_t ws_paused = -1;
struct ws_strand {
    std::int64_t work = 0;
    std::int64_t span = 0;
    std::int64_t burdened = 0;  // span with every potential steal on the path charged its cost
    std::int64_t open = ws_paused;
};

// The measured strand running on this thread (ws_current, nullptr when none or while it waits at a
// fork) and workspan_active(): detail/thread_state.hpp. Written only through set_ws_current.

// The clock of the segments (the calling thread's CPU time, or steady_clock; ns), chosen by the
// outermost running measure() scope, and the wall clock of the steal latencies (steady_clock).
std::int64_t ws_now() noexcept;
std::int64_t ws_wall_now() noexcept;
// What one empty segment measures (the clock reads at its ends), subtracted from each segment.
std::int64_t ws_strand_overhead() noexcept;
// What a plain fork point costs the forking strand (calibrated: an empty join, an empty task_group
// child), charged to it in place of the instrumented fork's own cost.
std::int64_t ws_join_cost() noexcept;
std::int64_t ws_spawn_cost() noexcept;
// The cost charged to every potential steal in the burdened span (set by the measuring workspan).
std::int64_t ws_burden() noexcept;
// Statistics of the running measurements: a fork point, and a branch that ran on another thread
// than its forking strand, with the time from the fork to its start there.
void ws_note_fork(std::int64_t branches) noexcept;
void ws_note_steal(std::int64_t latency_ns) noexcept;
// A thread identity for "did the branch run where it was forked".
inline const void* ws_thread_id() noexcept {
    static thread_local const char here = 0;
    return &here;
}

// Opens a strand on this thread for a scope: pauses the strand running here (if any), makes `s`
// current, and on exit closes `s` and resumes the previous one.
class ws_strand_scope {
public:
    explicit ws_strand_scope(ws_strand& s) noexcept : s_(s), outer_(ws_current) {
        const std::int64_t now = ws_now();
        if (outer_ != nullptr) close(*outer_, now);
        set_ws_current(&s_);
        s_.open = now;
    }
    ~ws_strand_scope() {
        const std::int64_t now = ws_now();
        close(s_, now);
        set_ws_current(outer_);
        if (outer_ != nullptr) outer_->open = now;
    }
    ws_strand_scope(const ws_strand_scope&) = delete;
    ws_strand_scope& operator=(const ws_strand_scope&) = delete;

    // Charge the segment that ends at `now` to `s` (a serial piece: work and span alike), minus
    // what the clock reads at its two ends add to it (calibrated: an empty segment).
    static void close(ws_strand& s, std::int64_t now) noexcept {
        if (s.open == ws_paused) return;
        const std::int64_t d = std::max<std::int64_t>(now - s.open - ws_strand_overhead(), 0);
        s.work += d;
        s.span += d;
        s.burdened += d;
        s.open = ws_paused;
    }

private:
    ws_strand& s_;
    ws_strand* outer_;
};

// One branch of a join/fork_join: the strand it runs as, where and when it was forked.
struct ws_branch_state {
    ws_strand strand;
    const void* forked_on = nullptr;
    std::int64_t forked_at = 0;  // wall clock
};

// Wraps a branch callable (F as passed to join: invoked once, as what it was passed as).
template <class F>
struct ws_branch {
    std::remove_reference_t<F>& fn;
    ws_branch_state& state;

    decltype(auto) run() {
        if (ws_thread_id() != state.forked_on) ws_note_steal(ws_wall_now() - state.forked_at);
        ws_strand_scope scope(state.strand);
        return std::invoke(std::forward<F>(fn));
    }
    decltype(auto) operator()() & { return run(); }
    decltype(auto) operator()() && { return run(); }
};

// A fork point with N branches: pauses the forking strand for its lifetime, then folds the
// branches in: work adds up, span and burdened span take the longest branch (every branch but the
// first, which the forking thread runs inline, is a potential steal: burdened + the steal cost).
template <std::size_t N>
class ws_fork {
public:
    ws_fork() noexcept : parent_(ws_current) {
        const std::int64_t now = ws_now();
        ws_strand_scope::close(*parent_, now);
        set_ws_current(nullptr);
        const std::int64_t wall = ws_wall_now();
        for (auto& b : branches_) {
            b.forked_on = ws_thread_id();
            b.forked_at = wall;
        }
        ws_note_fork(N);
    }
    ~ws_fork() {
        std::int64_t span = 0, burdened = 0;
        for (std::size_t i = 0; i < N; ++i) {
            const ws_strand& s = branches_[i].strand;
            parent_->work += s.work;
            span = std::max(span, s.span);
            burdened = std::max(burdened, s.burdened + (i == 0 ? 0 : ws_burden()));
        }
        const std::int64_t fork_cost = ws_join_cost();
        parent_->work += fork_cost;
        parent_->span += span + fork_cost;
        parent_->burdened += burdened + fork_cost;
        set_ws_current(parent_);
        parent_->open = ws_now();
    }
    ws_fork(const ws_fork&) = delete;
    ws_fork& operator=(const ws_fork&) = delete;

    ws_branch_state& branch(std::size_t i) noexcept { return branches_[i]; }

private:
    ws_strand* parent_;
    ws_branch_state branches_[N];
};

// The hook of crew::join and crew::fork_join: `plain` is the fork point itself, called with the
// wrapped branches (rvalues) while the forking strand is paused (so it takes the plain path).
template <class... F, class Plain, std::size_t... I>
decltype(auto) workspan_fork_impl(Plain plain, std::index_sequence<I...>, std::remove_reference_t<F>&... fs) {
    ws_fork<sizeof...(F)> fork;
    return plain(ws_branch<F>{fs, fork.branch(I)}...);
}

template <class... F, class Plain>
decltype(auto) workspan_fork(Plain plain, std::remove_reference_t<F>&... fs) {
    return workspan_fork_impl<F...>(plain, std::index_sequence_for<F...>{}, fs...);
}

// ---- task_group ----

template <class Fn>
struct ws_group_child;

// The hooks call the plain fork point with wrapped callables: those instantiations must not
// contain the hook again (an endless instantiation), so a fork point instantiates its hook only
// for callables that are not wrappers already.
template <class T>
inline constexpr bool ws_is_wrapper = false;
template <class F>
inline constexpr bool ws_is_wrapper<ws_branch<F>> = true;
template <class F>
inline constexpr bool ws_is_wrapper<ws_group_child<F>> = true;
template <class... F>
inline constexpr bool ws_hookable = (!ws_is_wrapper<std::remove_cvref_t<F>> && ...);

// What the children of one task group added since its last wait (src/workspan.cpp keeps one per
// group with measured children). Children fold in under its lock.
struct ws_group_record;
std::shared_ptr<ws_group_record> ws_group_record_of(const task_group* g);
void ws_group_child_done(ws_group_record& r, const ws_strand& s, std::int64_t start_span,
                         std::int64_t start_burdened) noexcept;
// wait(): pauses the waiting strand, waits (plain), folds the children in. The destructor's
// implicit wait: folds what was recorded and forgets the group.
task_group_status workspan_group_wait(task_group& g);
void workspan_group_end(const task_group* g) noexcept;
// Whether any group has a record (the destructor hook's cheap test).
bool workspan_groups_pending() noexcept;

// A measured group child: runs as its own strand, which began at its spawner's span (a spawned
// child starts where its parent was when it ran run(), in the Cilkscale recurrence).
template <class Fn>
struct ws_group_child {
    Fn fn;
    std::shared_ptr<ws_group_record> record;
    std::int64_t start_span;
    std::int64_t start_burdened;
    const void* spawned_on;
    std::int64_t spawned_at;

    void operator()() {
        if (ws_thread_id() != spawned_on) ws_note_steal(ws_wall_now() - spawned_at);
        ws_strand s;
        struct fold {
            ws_group_child& c;
            ws_strand& s;
            ~fold() { ws_group_child_done(*c.record, s, c.start_span, c.start_burdened); }
        } folder{*this, s};
        ws_strand_scope scope(s);
        std::invoke(std::move(fn));
    }
};

// The hook of task_group::run: Group is task_group (a template, so that run() is looked up where
// the group is complete).
template <class Group, class F>
void workspan_group_run(Group& g, F&& f) {
    ws_strand* parent = ws_current;
    const std::int64_t now = ws_now();
    ws_strand_scope::close(*parent, now);
    set_ws_current(nullptr);
    struct resume {
        ws_strand* p;
        ~resume() {
            const std::int64_t cost = ws_spawn_cost();
            p->work += cost;
            p->span += cost;
            p->burdened += cost;
            set_ws_current(p);
            p->open = ws_now();
        }
    } resumer{parent};
    ws_note_fork(1);
    g.run(ws_group_child<std::decay_t<F>>{std::forward<F>(f), ws_group_record_of(&g), parent->span,
                                          parent->burdened, ws_thread_id(), ws_wall_now()});
}

}  // namespace detail
}  // namespace crew
