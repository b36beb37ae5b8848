// crew/detail/group_fork.hpp -- private task_group children: recorded in the worker's fork array
// (fork_stack.hpp) under a holder token on the group's count (group_count.hpp), instead of a
// fetch_add and a deque push per child.
//
// Private children (the protocol of docs/BENCHMARKS.md, "Fork-join, session 7", points 1-3; its
// Relacy model is tests/reliability/model_group_fork.hpp). Status: the model and these primitives
// only; task_group::run() does not use them yet (docs/DESIGN.md, "Task groups").
//
//   run() on a worker   -- the first private child of a group on this worker takes the group's
//                          holder token (count.hold_token(): one add); each child is recorded in
//                          the fork array (fork_stack::fork) like a join's job. Thieves see it only
//                          once promoted (oldest first, on request): count.count_promoted() runs
//                          before the push, since the thief finishes it.
//   take-back           -- the array no longer nests (a child may outlive the frame that recorded
//                          it), so a join's and a drain's take-back name their entry
//                          (fork_stack::take_back(item, ...)): inline only when it is the newest
//                          private entry; otherwise everything private is published (counting the
//                          children) and the entry comes back through the deque. A child taken back
//                          privately and run inline is never counted.
//   the token's drop    -- count.drop_token(n): once no private child of the group is left on this
//                          worker (the holder's drain took them all back, or the task boundary
//                          published them), folding in n promoted children the holder ran itself.
//   the task boundary   -- end_private_children below: nothing private survives its task.
//
// Why the waiter is safe: a child recorded privately is covered by the token (the word stays above
// zero while it is private or running inline: the token is dropped after the inline runs, and its
// release publishes them); a promoted child is covered by its own add(), made before the push.
#pragma once

#include <cstdint>

#include "crew/detail/atomics.hpp"

namespace crew::detail {

// The task boundary of a task that recorded children of `count`'s group and did not take them all
// back: publish every private entry first (each child counted before its push by `before_push`),
// then drop the token. The other order would let a waiter see zero with a child still private.
// `base`: the fork depth when the task started (fork_stack::leave_task).
template <class Policy, class Forks, class Deque, class BeforePush, class Count>
void end_private_children(Forks& forks, std::int64_t base, Deque& deque, BeforePush before_push, Count& count,
                          std::uint64_t finished_here) {
    if constexpr (Policy::injected_bug != bug::group_boundary_no_publish) forks.leave_task(base, deque, before_push);
    count.drop_token(finished_here);
}

}  // namespace crew::detail
