// crew/join.hpp -- crew::join(f, g): run two callables, potentially in parallel.
//
// On a worker the fast path allocates nothing and has no fence: g's job lives in this stack frame and
// is recorded in the worker's private fork stack (detail/fork_stack.hpp), f runs inline, and g's job
// is taken back and run inline. A thief that finds this worker's deque empty asks for work; the
// worker then promotes its oldest private job to the deque at its next fork. A promoted job is
// popped back from the deque like a pushed one, or, if a thief took it, the worker runs other tasks
// until the thief finishes it (see worker::wait_until).
#pragma once

#include <exception>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

#include "crew/pool.hpp"
#include "crew/detail/cold.hpp"
#include "crew/detail/completion.hpp"
#include "crew/detail/task.hpp"
#include "crew/detail/worker.hpp"
#include "crew/detail/workspan_hooks.hpp"

namespace crew {

namespace detail {

// Calls fn as given and returns its result as stored in a join's result (void as std::monostate,
// references as references): the inline halves' results live in the forking frame, no
// std::optional or exception slot around them (an exception simply propagates).
template <class R, class F>
[[gnu::always_inline]] inline stored_t<R> invoke_stored(F&& fn) {
    if constexpr (std::is_void_v<R>) {
        std::invoke(std::forward<F>(fn));
        return {};
    } else {
        return std::invoke(std::forward<F>(fn));
    }
}

// G is g's type as passed to join (H& for an lvalue, H for an rvalue, invoked as one).
//
// What a fork writes: the header's execute pointer, fn, the completion and the context (the task
// header's `next` and `queued_at` are never read for a job: it is never injected). The result cell
// is constructed only by a thief (run_stolen): a job run inline by its owner returns its result
// straight into the forking frame, so nothing of it is initialised or checked on the fast path.
template <class G, class R>
struct join_job final : task {
    using callable = G;
    using result = R;
    std::remove_reference_t<G>& fn;
    completion done;

    // The task_group context of the forking task: a thief runs g inside it, so is_canceling() and
    // groups nested in g see the group there too (the forking task waits for g: it outlives the job).
    cancel_context* const context;

    // Constructed by the thief, destroyed by the owner once it took the outcome (take_stolen,
    // discard_stolen): alive exactly when a thief ran the job.
    union stolen_cell {
        stolen_cell() noexcept {}
        ~stolen_cell() {}
        result_cell<R> cell;
    } stolen;

    explicit join_job(std::remove_reference_t<G>& g) noexcept
        : task(&run_stolen, never_injected{}), fn(g), context(current_context) {}
    join_job(const join_job&) = delete;
    join_job& operator=(const join_job&) = delete;

    // Run by a thief.
    static void run_stolen(task* t) noexcept {
        auto* self = static_cast<join_job*>(t);
        context_scope scope(self->context);
        ::new (static_cast<void*>(&self->stolen.cell)) result_cell<R>();
        self->stolen.cell.run(std::forward<G>(self->fn));
        self->done.set();  // the last touch: the owner may return and pop this frame right after
    }

    // The owner, after the thief finished (done is set): the result, or the thief's exception.
    stored_t<R> take_stolen() {
        struct destroy {
            result_cell<R>& c;
            ~destroy() { c.~result_cell<R>(); }
        } d{stolen.cell};
        return stolen.cell.take_stored();
    }
    // The owner, unwinding after an earlier exception won: the thief's outcome is dropped.
    void discard_stolen() noexcept { stolen.cell.~result_cell<R>(); }
};

// The job was not on top of the deque when f returned: run what f left above it (tasks it
// spawned) until the job comes back, or wait for the thief that took it. Returns true when the
// job came back and the caller should run it inline.
bool join_reclaim_cold(worker& w, task* job, completion& done, task* popped);

// The job was promoted to the deque (a thief asked): pop it back as a pushed job, or wait for the
// thief that took it. Returns true when the caller should run it inline (counted here: a private
// take-back counts itself in the fork array's word, a stolen job is counted by its thief).
[[gnu::noinline, gnu::cold]] inline bool join_take_promoted(worker& w, task* job, completion& done) {
    task* popped = w.pop();
    const bool inline_half = popped == job || join_reclaim_cold(w, job, done, popped);
    if (inline_half) w.count_task();
    return inline_half;
}

// Takes `job` back (the newest fork) after an earlier callable threw, and finishes it: runs it
// inline, dropping its result and any exception (the earlier one wins), or waits for its thief
// and drops the thief's outcome. `stolen`: a job forked after this one was found stolen, so this
// one was too (promotion and stealing go oldest first).
template <class G, class R>
[[gnu::noinline, gnu::cold]] void join_finish_dropped(worker& w, join_job<G, R>& job, bool& stolen) noexcept {
    if (!stolen && (w.unfork() || join_take_promoted(w, &job, job.done))) {
        try {
            static_cast<void>(invoke_stored<R>(std::forward<G>(job.fn)));
        } catch (...) {  // the earlier exception wins
        }
        return;
    }
    if (stolen) static_cast<void>(w.unfork());  // promoted: only counts it off (see fork_join_reclaim)
    stolen = true;
    wait_for(job.done);  // acquire (completion): the thief's outcome, dropped
    job.discard_stolen();
}

// f threw: g still has to finish before the exception leaves join (f's exception wins).
template <class G, class R>
[[gnu::noinline, gnu::cold]] void join_unwind(worker& w, join_job<G, R>& job) noexcept {
    bool stolen = false;
    join_finish_dropped(w, job, stolen);
}

// F and G are the callables' types as passed to join: each is invoked once, as what it was
// passed as (so rvalue-only callables work). Reference results stay references.
template <class F, class G>
using join_result_t = std::conditional_t<
    std::is_void_v<std::invoke_result_t<F>> && std::is_void_v<std::invoke_result_t<G>>, void,
    std::pair<stored_t<std::invoke_result_t<F>>, stored_t<std::invoke_result_t<G>>>>;

// always_inline: join is then one call holding the fork, both halves and the take-back (compilers
// otherwise keep join_on out of line in a recursion, one more call and frame per fork); its rare
// paths (join_take_promoted, the array's growth, answering a request, f's exception) are calls.
// The fast path: record the job, run f into a local, take the job back, run g into the result.
// f's exception is caught only to finish g first (join_unwind, a landing pad: no cost when
// nothing throws); g's inline exception just propagates (f has finished, its result is dropped).
template <class F, class G>
[[gnu::always_inline]] inline join_result_t<F, G> join_on(worker& w, std::remove_reference_t<F>& f, std::remove_reference_t<G>& g) {
    using RA = std::invoke_result_t<F>;
    using RB = std::invoke_result_t<G>;
    join_job<G, RB> job(g);
    w.fork(&job);
    stored_t<RA> a = [&]() __attribute__((always_inline)) -> stored_t<RA> {
        try {
            return invoke_stored<RA>(std::forward<F>(f));
        } catch (...) {
            join_unwind(w, job);
            throw;
        }
    }();
    if (w.unfork() || join_take_promoted(w, &job, job.done)) [[likely]] {  // counted
        if constexpr (std::is_void_v<join_result_t<F, G>>) {
            static_cast<void>(a);
            std::invoke(std::forward<G>(g));
            return;
        } else {
            return {std::forward<stored_t<RA>>(a), invoke_stored<RB>(std::forward<G>(g))};
        }
    }
    // A thief ran g (join_take_promoted waited for it).
    if constexpr (std::is_void_v<join_result_t<F, G>>)
        job.take_stolen();
    else
        return {std::forward<stored_t<RA>>(a), job.take_stolen()};
}

}  // namespace detail

// Runs f and g, potentially in parallel, and returns when both have finished. Returns void when
// both return void, else std::pair of their results (void mapped to std::monostate). If either
// throws, the exception is rethrown after both finished (f's, when both threw). Called outside
// every pool, it runs on the default pool.
template <class F, class G>
detail::join_result_t<F, G> join(F&& f, G&& g) {
    // One thread-local word: this thread's worker when no crew::workspan strand is measured here
    // (detail/thread_state.hpp). Measuring, or outside every pool: the cold path.
    if (detail::worker* w = detail::fork_worker) [[likely]]
        return detail::join_on<F, G>(*w, f, g);
    return detail::cold_call([fa = detail::cold_arg<F>{f}, &g]() mutable -> detail::join_result_t<F, G> {
        if constexpr (detail::ws_hookable<F, G>)  // crew::workspan measuring (detail/workspan_hooks.hpp)
            if (detail::workspan_active())
                return detail::workspan_fork<F, G>([](auto&&... b) { return join(std::move(b)...); }, fa.get(), g);
        // Outside every pool. (A worker whose word is nullptr is measuring; its wrapped callables
        // are forked with the strand paused, when the word is the worker again. Were it otherwise,
        // the join would still run: directly on a default-pool worker, or through the default
        // pool.) One inlined copy of join_on here: a second made g++ stop inlining a recursive
        // caller into join (docs/BENCHMARKS.md, session 16).
        return default_pool().run([&] { return detail::join_on<F, G>(*detail::current_worker, fa.get(), g); });
    });
}

}  // namespace crew
