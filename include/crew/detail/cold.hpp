// crew/detail/cold.hpp -- cold_call: run a rare branch of an inline fast path out of line.
#pragma once

#include <utility>

namespace crew::detail {

// Calls c() out of line. The rare branches of a fork (workspan measuring, a call from outside every
// pool) then stay out of the caller's frame: the fork's fast path stays small enough to inline into
// a recursive caller, and that caller no longer saves every callee-saved register and reserves the
// rare branch's stack on each call (fib through crew::join: 11.6 -> 8.1 ns per join, g++).
template <class C>
[[gnu::noinline, gnu::cold]] decltype(auto) cold_call(C&& c) {
    return std::forward<C>(c)();
}

}  // namespace crew::detail
