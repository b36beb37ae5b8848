// crew/detail/cold.hpp -- cold_call: run a rare branch of an inline fast path out of line.
#pragma once

#include <type_traits>
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

// How a fork's rare branch (a cold_call) holds the callable the fork runs inline: a copy when it
// is a small trivially copyable rvalue (a lambda temporary: only its copy could tell, by its
// address), else a reference. With the copy, the callable's address never leaves the fast path, so
// the compiler keeps its captures in registers instead of building it on the stack before the
// branch (gcc 12, a flow-insensitive escape: tree_sum's two closures cost 14 instructions per join).
template <class F, bool Copy = !std::is_reference_v<F> && std::is_trivially_copyable_v<F> &&
                               sizeof(F) <= 4 * sizeof(void*)>
struct cold_arg {
    std::remove_reference_t<F>& ref;
    std::remove_reference_t<F>& get() noexcept { return ref; }
};
template <class F>
struct cold_arg<F, true> {
    F value;
    F& get() noexcept { return value; }
};

}  // namespace crew::detail
