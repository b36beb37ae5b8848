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

// G is g's type as passed to join (H& for an lvalue, H for an rvalue, invoked as one).
template <class G, class R>
struct join_job final : task {
    std::remove_reference_t<G>& fn;
    result_cell<R> result;
    completion done;

    // The task_group context of the forking task: a thief runs g inside it, so is_canceling() and
    // groups nested in g see the group there too (the forking task waits for g: it outlives the job).
    cancel_context* const context;

    explicit join_job(std::remove_reference_t<G>& g) noexcept : task{&run_stolen}, fn(g), context(current_context) {}

    // Run by a thief.
    static void run_stolen(task* t) noexcept {
        auto* self = static_cast<join_job*>(t);
        context_scope scope(self->context);
        self->result.run(std::forward<G>(self->fn));
        self->done.set();  // the last touch: the owner may return and pop this frame right after
    }
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

// F and G are the callables' types as passed to join: each is invoked once, as what it was
// passed as (so rvalue-only callables work). Reference results stay references.
template <class F, class G>
using join_result_t = std::conditional_t<
    std::is_void_v<std::invoke_result_t<F>> && std::is_void_v<std::invoke_result_t<G>>, void,
    std::pair<stored_t<std::invoke_result_t<F>>, stored_t<std::invoke_result_t<G>>>>;

// always_inline: join is then one call holding the fork, both halves and the take-back (compilers
// otherwise keep join_on out of line in a recursion, one more call and frame per fork); its rare
// paths (join_take_promoted, the array's growth, answering a request) are calls.
template <class F, class G>
[[gnu::always_inline]] inline join_result_t<F, G> join_on(worker& w, std::remove_reference_t<F>& f, std::remove_reference_t<G>& g) {
    using RA = std::invoke_result_t<F>;
    using RB = std::invoke_result_t<G>;
    join_job<G, RB> job(g);
    w.fork(&job);
    result_cell<RA> a;
    a.run(std::forward<F>(f));
    if (w.unfork() || join_take_promoted(w, &job, job.done)) job.result.run(std::forward<G>(g));  // counted
    // Both sides are finished here; f's exception wins when both threw.
    if constexpr (std::is_void_v<join_result_t<F, G>>) {
        a.take();
        job.result.take();
    } else {
        stored_t<RA> first = a.take_stored();  // taken first: f's exception wins
        return {std::forward<stored_t<RA>>(first), job.result.take_stored()};
    }
}

}  // namespace detail

// Runs f and g, potentially in parallel, and returns when both have finished. Returns void when
// both return void, else std::pair of their results (void mapped to std::monostate). If either
// throws, the exception is rethrown after both finished (f's, when both threw). Called outside
// every pool, it runs on the default pool.
template <class F, class G>
detail::join_result_t<F, G> join(F&& f, G&& g) {
    if constexpr (detail::ws_hookable<F, G>)  // crew::workspan measuring (detail/workspan_hooks.hpp)
        if (detail::workspan_active()) [[unlikely]]
            return detail::cold_call([&]() -> detail::join_result_t<F, G> {
                return detail::workspan_fork<F, G>([](auto&&... b) { return join(std::move(b)...); }, f, g);
            });
    if (detail::worker* w = detail::current_worker) [[likely]]
        return detail::join_on<F, G>(*w, f, g);
    return detail::cold_call([&]() -> detail::join_result_t<F, G> {
        return default_pool().run([&] { return detail::join_on<F, G>(*detail::current_worker, f, g); });
    });
}

}  // namespace crew
