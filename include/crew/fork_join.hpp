// crew/fork_join.hpp -- crew::fork_join(f1, ..., fk): run k callables, potentially in parallel.
//
// The k-way form of crew::join, with join's costs: on a worker nothing is allocated and nothing is
// fenced. The jobs of f2..fk live in this stack frame and are recorded as private forks (fk first,
// so f2 is newest; promotion to the deque, on a thief's request, takes fk, the oldest, first); f1
// runs inline, then the jobs are taken back in argument order and run inline unless a thief took
// them. Promotion and stealing both go oldest first, so once one job is found stolen, every later
// one was stolen too: the owner then only waits for them (running other work meanwhile).
#pragma once

#include <concepts>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "crew/join.hpp"
#include "crew/detail/cold.hpp"
#include "crew/pool.hpp"
#include "crew/detail/task.hpp"
#include "crew/detail/worker.hpp"

namespace crew {

namespace detail {

// F... are the callables' types as passed to fork_join: each is invoked once, as what it was
// passed as (rvalue-only callables work). Reference results stay references.
template <class... F>
using fork_join_result_t = std::conditional_t<(std::is_void_v<std::invoke_result_t<F>> && ...), void,
                                              std::tuple<stored_t<std::invoke_result_t<F>>...>>;

// An earlier callable threw: finish the jobs J.. (in argument order), dropping their outcomes.
// `stolen` by value: the fast path's flag then stays in a register.
template <std::size_t J, class Jobs>
[[gnu::noinline, gnu::cold]] void fork_join_unwind(worker& w, Jobs& jobs, bool stolen) noexcept {
    constexpr std::size_t n = std::tuple_size_v<Jobs>;
    if constexpr (J < n) {
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            (join_finish_dropped(w, std::get<J + K>(jobs), stolen), ...);
        }(std::make_index_sequence<n - J>{});
    }
}

// fork_join's private take-backs are counted (metrics' inline runs) with one add per call instead
// of one per job. Jobs are taken back in argument order, newest first, and promotion goes oldest
// first, so the private take-backs are a prefix: once a job was not private, no later one is. So
// while every take-back so far was private (`all_private`) none is counted yet, and the last job's
// private take-back counts all n; at the first job that was not private, the prefix before it is
// counted (`counted`). `stolen` (a job found stolen, so every later one was) implies counted.
enum class reclaim_state : unsigned char { all_private, counted, stolen };

// Takes the job of one forked callable back and returns its result: run inline when it is still
// ours, else the thief's outcome. If it throws (inline or through the thief), the later jobs are
// finished first (fork_join_unwind), so the exception leaves fork_join after every callable finished.
template <std::size_t I, class Jobs>
[[gnu::always_inline]] inline stored_t<typename std::tuple_element_t<I, Jobs>::result> fork_join_reclaim(
    worker& w, Jobs& jobs, reclaim_state& state) {
    constexpr std::size_t n = std::tuple_size_v<Jobs>;
    auto& job = std::get<I>(jobs);
    using job_t = std::remove_reference_t<decltype(job)>;
    try {
        if (state != reclaim_state::stolen) {
            // The last job's take-back, when private (so was every one, see above), counts all n.
            const bool mine = I + 1 == n ? w.unfork_counting(n) : w.unfork_uncounted();
            if (mine) [[likely]] {
                return invoke_stored<typename job_t::result>(std::forward<typename job_t::callable>(job.fn));
            }
            if (state == reclaim_state::all_private) {  // job I was promoted, and so was every later one
                w.count_inline_runs(I);
                state = reclaim_state::counted;
            }
            if (join_take_promoted(w, &job, job.done))  // counts its inline run itself
                return invoke_stored<typename job_t::result>(std::forward<typename job_t::callable>(job.fn));
            state = reclaim_state::stolen;  // join_reclaim_cold waited for it
        } else {
            static_cast<void>(w.unfork_uncounted());  // promoted, as every fork older than a stolen one: only takes it off
            wait_for(job.done);  // acquire (completion): the thief's result
        }
        return job.take_stolen();
    } catch (...) {
        // Jobs 0..I ran privately (I threw; the last job's take-back counted them all already);
        // fork_join_unwind counts the later ones it runs itself.
        if constexpr (I + 1 < n)
            if (state == reclaim_state::all_private) w.count_inline_runs(I + 1);
        fork_join_unwind<I + 1>(w, jobs, state == reclaim_state::stolen);
        throw;
    }
}

template <class F0, class... Fs, std::size_t... I>
fork_join_result_t<F0, Fs...> fork_join_on(worker& w, std::index_sequence<I...>, std::remove_reference_t<F0>& f0,
                                           std::remove_reference_t<Fs>&... fs) {
    constexpr std::size_t n = sizeof...(Fs);
    using R0 = std::invoke_result_t<F0>;
    std::tuple<join_job<Fs, std::invoke_result_t<Fs>>...> jobs(fs...);
    task* const forked[n] = {&std::get<n - 1 - I>(jobs)...};  // the last callable first: f2 ends on top
    w.fork_many(forked);
    reclaim_state state = reclaim_state::all_private;
    // f1 inline into a local (join_on's fast path); its exception finishes every job first.
    stored_t<R0> first = [&]() __attribute__((always_inline)) -> stored_t<R0> {
        try {
            return invoke_stored<R0>(std::forward<F0>(f0));
        } catch (...) {
            fork_join_unwind<0>(w, jobs, false);
            throw;
        }
    }();
    // The jobs in argument order: the first exception wins (fork_join_reclaim finishes the rest).
    if constexpr (std::is_void_v<fork_join_result_t<F0, Fs...>>) {
        static_cast<void>(first);
        (static_cast<void>(fork_join_reclaim<I>(w, jobs, state)), ...);
    } else {
        // Braced initialisation evaluates left to right: argument order.
        return fork_join_result_t<F0, Fs...>{std::forward<stored_t<R0>>(first), fork_join_reclaim<I>(w, jobs, state)...};
    }
}

// One callable: nothing to fork.
template <class F0>
fork_join_result_t<F0> fork_join_here(worker&, std::remove_reference_t<F0>& f0) {
    result_cell<std::invoke_result_t<F0>> only;
    only.run(std::forward<F0>(f0));
    if constexpr (std::is_void_v<fork_join_result_t<F0>>)
        only.take();
    else
        return fork_join_result_t<F0>{only.take_stored()};
}

template <class F0, class F1, class... Fs>
fork_join_result_t<F0, F1, Fs...> fork_join_here(worker& w, std::remove_reference_t<F0>& f0,
                                                 std::remove_reference_t<F1>& f1, std::remove_reference_t<Fs>&... fs) {
    return fork_join_on<F0, F1, Fs...>(w, std::make_index_sequence<sizeof...(Fs) + 1>{}, f0, f1, fs...);
}

}  // namespace detail

// Runs f1, ..., fk (k >= 1), potentially in parallel, and returns when all have finished. Returns
// void when every callable returns void, else a std::tuple of their results in argument order
// (void mapped to std::monostate, references kept as references), as crew::join does for two. If
// any throws, the first exception in argument order is rethrown after all have finished. On a
// worker it allocates nothing; called outside every pool, it runs on the default pool. A callable
// taken by a thief runs in the caller's task_group context (it sees crew::is_canceling()).
template <class... F>
    requires(sizeof...(F) > 0 && (std::invocable<F> && ...))
detail::fork_join_result_t<F...> fork_join(F&&... fs) {
    // One thread-local word first, as crew::join (detail/thread_state.hpp); then measuring, or
    // outside every pool (a worker's word is nullptr only while it measures, see crew::join).
    if (detail::worker* w = detail::fork_worker) [[likely]]
        return detail::fork_join_here<F...>(*w, fs...);
#if defined(__clang__)
    // clang 14: the rare branches stay inline; out of line (cold_call), clang stops inlining the
    // callables into the fork (skynet's 10-way fork_join: 47.9 -> 55.0 instructions per child).
    if constexpr (detail::ws_hookable<F...>)  // crew::workspan measuring (detail/workspan_hooks.hpp)
        if (detail::workspan_active()) [[unlikely]]
            return detail::workspan_fork<F...>([](auto&&... b) { return fork_join(std::move(b)...); }, fs...);
    return default_pool().run([&] { return detail::fork_join_here<F...>(*detail::current_worker, fs...); });
#else
    // g++ 12: out of line, as crew::join; inline, the caller saves one more register and reserves
    // a bigger frame on every call, leaves included (skynet's 10-way fork_join: 60.3 -> 47.0
    // instructions per child; session 16, docs/BENCHMARKS.md).
    return detail::cold_call([&]() -> detail::fork_join_result_t<F...> {
        if constexpr (detail::ws_hookable<F...>)  // crew::workspan measuring (detail/workspan_hooks.hpp)
            if (detail::workspan_active())
                return detail::workspan_fork<F...>([](auto&&... b) { return fork_join(std::move(b)...); }, fs...);
        return default_pool().run([&] { return detail::fork_join_here<F...>(*detail::current_worker, fs...); });
    });
#endif
}

}  // namespace crew
