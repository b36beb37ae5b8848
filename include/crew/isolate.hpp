// crew/isolate.hpp -- crew::isolate(f): waits inside f run only work spawned inside f.
//
// A worker that waits (a join whose half was stolen, task_group::wait, future::get, pool::run on
// another pool) normally runs other tasks of its pool meanwhile, related or not. That keeps cores
// busy, but an unrelated task then runs on top of the waiting frame: if it needs a lock the waiting
// frame holds, or waits for something the waiting frame has yet to do, it deadlocks. Inside
// isolate(f), a waiting worker runs only tasks pushed onto its own deque after isolate began (what
// f and its descendants spawned there); with none left it sleeps until the awaited work is done.
// It is oneTBB's this_task_arena::isolate, restricted to the worker's own deque: work of f that
// another worker stole is finished by that worker, not helped along from here.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>

#include "crew/detail/worker.hpp"

namespace crew {

// A waiting worker nests at most this many unrelated tasks on its stack (tasks that are not
// descendants of the task that waits). Beyond it, it runs only the waiting task's own descendants
// and otherwise sleeps until the awaited work is done. This bounds the stack a chain of waits can
// take and how long an early-finished wait can be held up by the waits nested above it.
inline constexpr std::size_t help_depth_limit = detail::max_help_depth;

// Runs f() and returns its result. While f runs, a wait inside it (on this thread) runs only work
// spawned inside f. Outside every pool it simply calls f (outside threads never run tasks).
template <class F>
decltype(auto) isolate(F&& f) {
    detail::worker* w = detail::current_worker;
    if (w == nullptr) return std::invoke(std::forward<F>(f));
    detail::worker::isolation scope(*w);
    return std::invoke(std::forward<F>(f));
}

}  // namespace crew
