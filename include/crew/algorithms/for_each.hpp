// crew/algorithms/for_each.hpp -- parallel_for, parallel_for_each, parallel_transform,
// parallel_invoke.
//
// Partitioner position: every algorithm takes its partitioner either first (crew's original
// spelling, parallel_for(part, first, last, f), which existing crew code uses and which the
// variadic parallel_invoke(part, f...) needs, since nothing can follow a pack) or last, as oneTBB
// writes it (parallel_for(first, last, f, part)). Both mean the same. The range forms
// (parallel_for(range, body)) live in range_algorithms.hpp; the overloads here refuse a crew::range
// as `first`, so a blocked_range over iterators is never taken for an iterator pair; parallel_transform
// also refuses a sized random-access std range there (ranges.hpp's parallel_transform(r1, r2, out, f)).
#pragma once

#include <cstddef>
#include <concepts>
#include <functional>
#include <iterator>
#include <tuple>
#include <type_traits>
#include <utility>

#include "crew/algorithms/partition.hpp"
#include "crew/algorithms/range.hpp"
#include "crew/algorithms/std_support.hpp"

namespace crew {

namespace detail {

template <class P>
inline constexpr bool loop_partitioner = partitioner<P> && !std::same_as<std::remove_cvref_t<P>, deterministic_partition>;

#define CREW_DETAIL_NOT_DETERMINISTIC(P, who)                                                              \
    static_assert(::crew::detail::loop_partitioner<P>, who ": crew::deterministic only applies to reductions and scans; " \
                                           "use crew::simple_partition{grain} for a fixed split")

}  // namespace detail

// Calls f(i) for every integer i in [first, last), in parallel. Throws std::invalid_argument when
// first > last. Any integer type but bool works, over its whole range.
template <partitioner P, std::integral I, std::integral J, class F>
void parallel_for(P part, I first, J last, F&& f) {
    CREW_DETAIL_NOT_DETERMINISTIC(P, "crew::parallel_for");
    static_assert(detail::index_integer<I> && detail::index_integer<J>,
                  "crew::parallel_for: bool is not an index type; use an integer type such as int");
    if constexpr (detail::index_integer<I> && detail::index_integer<J>) {
        using C = detail::index_type<I, J>;
        if (!detail::index_fits<C>(first) || !detail::index_fits<C>(last))
            throw std::invalid_argument("crew::parallel_for: the bounds do not fit a common index type");
        const C lo = static_cast<C>(first);
        const std::size_t n = detail::checked_count<C>(lo, static_cast<C>(last), "crew::parallel_for");
        if (n == 0) return;
        detail::on_worker([&] {
            detail::parallel_leaves(part, n, [&](std::size_t b, std::size_t e) {
                for (std::size_t i = b; i != e; ++i) f(detail::advance_by(lo, i));
            });
        });
    }
}

template <class I, class J, class F>
    requires(!partitioner<I> && !range<I>)
void parallel_for(I first, J last, F&& f) {
    static_assert(std::integral<I> && std::integral<J>,
                  "crew::parallel_for walks two integers [first, last); use crew::parallel_for_each for iterators");
    if constexpr (std::integral<I> && std::integral<J>) parallel_for(auto_partition, first, last, std::forward<F>(f));
}

template <std::integral I, std::integral J, class F, partitioner P>
void parallel_for(I first, J last, F&& f, P part) {
    parallel_for(part, first, last, std::forward<F>(f));
}

// Calls f(i) for i = first, first + step, first + 2 * step, ... while i < last (oneTBB's step
// form), in parallel. step <= 0 and first > last throw std::invalid_argument (oneTBB does nothing
// for first > last; crew's loops all report it). No index is computed beyond last, so the loop is
// exact up to the index type's extremes.
template <partitioner P, std::integral I, std::integral J, std::integral S, class F>
void parallel_for(P part, I first, J last, S step, F&& f) {
    CREW_DETAIL_NOT_DETERMINISTIC(P, "crew::parallel_for");
    static_assert(detail::index_integer<I> && detail::index_integer<J> && detail::index_integer<S>,
                  "crew::parallel_for: bool is not an index type; use an integer type such as int");
    if constexpr (detail::index_integer<I> && detail::index_integer<J> && detail::index_integer<S>) {
        if (!(step > 0)) throw std::invalid_argument("crew::parallel_for: the step must be at least 1");
        using C = detail::index_type<I, J>;
        if (!detail::index_fits<C>(first) || !detail::index_fits<C>(last))
            throw std::invalid_argument("crew::parallel_for: the bounds do not fit a common index type");
        const C lo = static_cast<C>(first);
        const std::size_t n = detail::checked_count<C>(lo, static_cast<C>(last), "crew::parallel_for");
        if (n == 0) return;
        // A step of n or more visits first alone.
        const std::size_t st = std::in_range<std::size_t>(static_cast<detail::standard_integer_t<S>>(step)) &&
                                           static_cast<std::size_t>(step) < n
                                   ? static_cast<std::size_t>(step) : n;
        const std::size_t count = (n - 1) / st + 1;
        detail::on_worker([&] {
            detail::parallel_leaves(part, count, [&](std::size_t b, std::size_t e) {
                for (std::size_t k = b; k != e; ++k) f(detail::advance_by(lo, k * st));  // k * st < n
            });
        });
    }
}

template <std::integral I, std::integral J, std::integral S, class F>
    requires(!partitioner<F>)
void parallel_for(I first, J last, S step, F&& f) {
    parallel_for(auto_partition, first, last, step, std::forward<F>(f));
}

template <std::integral I, std::integral J, std::integral S, class F, partitioner P>
void parallel_for(I first, J last, S step, F&& f, P part) {
    parallel_for(part, first, last, step, std::forward<F>(f));
}

// Calls f(*it) for every iterator in [first, last), in parallel.
template <partitioner P, class It, class F>
void parallel_for_each(P part, It first, It last, F&& f) {
    CREW_DETAIL_NOT_DETERMINISTIC(P, "crew::parallel_for_each");
    static_assert(random_access_input<It>,
                  "crew::parallel_for_each needs random-access iterators (a vector's, an array's, a pointer)");
    if constexpr (random_access_input<It>) {
        const std::size_t n = detail::checked_count(first, last, "crew::parallel_for_each");
        if (n == 0) return;
        detail::on_worker([&] {
            detail::parallel_leaves(part, n, [&](std::size_t b, std::size_t e) {
                It it = detail::advance_by(first, b);
                for (std::size_t i = b; i != e; ++i, ++it) f(*it);
            });
        });
    }
}

template <class It, class F>
    requires(!partitioner<It> && !range<It>)
void parallel_for_each(It first, It last, F&& f) {
    parallel_for_each(auto_partition, first, last, std::forward<F>(f));
}

template <class It, class F, partitioner P>
    requires(!partitioner<It> && !range<It>)
void parallel_for_each(It first, It last, F&& f, P part) {
    parallel_for_each(part, first, last, std::forward<F>(f));
}

// out[i] = f(first[i]) for every i, in parallel, as std::transform. Returns the end of the output.
// The input and output may be the same range.
template <partitioner P, class It, class Out, class F>
    requires(!detail::sized_random_access_range<It>)
Out parallel_transform(P part, It first, It last, Out out, F&& f) {
    CREW_DETAIL_NOT_DETERMINISTIC(P, "crew::parallel_transform");
    static_assert(random_access_input<It> && random_access_input<Out>,
                  "crew::parallel_transform needs random-access iterators for its input and its output");
    if constexpr (random_access_input<It> && random_access_input<Out>) {
        const std::size_t n = detail::checked_count(first, last, "crew::parallel_transform");
        if (n == 0) return out;
        detail::on_worker([&] {
            detail::parallel_leaves(part, n, [&](std::size_t b, std::size_t e) {
                It it = detail::advance_by(first, b);
                Out o = detail::advance_by(out, b);
                for (std::size_t i = b; i != e; ++i, ++it, ++o) *o = f(*it);
            });
        });
        return detail::advance_by(out, n);
    } else {
        return out;
    }
}

template <class It, class Out, class F>
    requires(!partitioner<It> && !range<It> && !detail::sized_random_access_range<It>)
Out parallel_transform(It first, It last, Out out, F&& f) {
    return parallel_transform(auto_partition, first, last, out, std::forward<F>(f));
}

template <class It, class Out, class F, partitioner P>
    requires(!partitioner<It> && !range<It> && !detail::sized_random_access_range<It>)
Out parallel_transform(It first, It last, Out out, F&& f, P part) {
    return parallel_transform(part, first, last, out, std::forward<F>(f));
}

// out[i] = f(first1[i], first2[i]), as std::transform's binary form.
template <partitioner P, class It1, class It2, class Out, class F>
    requires(!detail::sized_random_access_range<It1>)
Out parallel_transform(P part, It1 first1, It1 last1, It2 first2, Out out, F&& f) {
    CREW_DETAIL_NOT_DETERMINISTIC(P, "crew::parallel_transform");
    static_assert(random_access_input<It1> && random_access_input<It2> && random_access_input<Out>,
                  "crew::parallel_transform needs random-access iterators for its inputs and its output");
    if constexpr (random_access_input<It1> && random_access_input<It2> && random_access_input<Out>) {
        const std::size_t n = detail::checked_count(first1, last1, "crew::parallel_transform");
        if (n == 0) return out;
        detail::on_worker([&] {
            detail::parallel_leaves(part, n, [&](std::size_t b, std::size_t e) {
                It1 a = detail::advance_by(first1, b);
                It2 c = detail::advance_by(first2, b);
                Out o = detail::advance_by(out, b);
                for (std::size_t i = b; i != e; ++i, ++a, ++c, ++o) *o = f(*a, *c);
            });
        });
        return detail::advance_by(out, n);
    } else {
        return out;
    }
}

template <class It1, class It2, class Out, class F>
    requires(!partitioner<It1> && !range<It1> && !detail::sized_random_access_range<It1> && !partitioner<F>)
Out parallel_transform(It1 first1, It1 last1, It2 first2, Out out, F&& f) {
    return parallel_transform(auto_partition, first1, last1, first2, out, std::forward<F>(f));
}

template <class It1, class It2, class Out, class F, partitioner P>
    requires(!partitioner<It1> && !range<It1> && !detail::sized_random_access_range<It1>)
Out parallel_transform(It1 first1, It1 last1, It2 first2, Out out, F&& f, P part) {
    return parallel_transform(part, first1, last1, first2, out, std::forward<F>(f));
}

namespace detail {

// fs is a tuple of references as forward_as_tuple makes them: std::get on the moved tuple gives
// each callable back with its value category, and each is invoked once.
template <std::size_t Lo, std::size_t Hi, class Tuple>
void invoke_range(Tuple& fs, cancel_flag& cancel) {
    if constexpr (Hi - Lo == 1) {
        if (!cancel.cancelled()) cancel.guard([&] { std::invoke(std::get<Lo>(std::move(fs))); });
    } else {
        constexpr std::size_t mid = Lo + (Hi - Lo) / 2;
        crew::join([&] { invoke_range<Lo, mid>(fs, cancel); }, [&] { invoke_range<mid, Hi>(fs, cancel); });
    }
}

}  // namespace detail

// Calls every f, potentially in parallel, and returns when all have finished. An exception is
// rethrown after the running ones finished; callables that had not started are skipped. Each f is
// invoked once, as the value category it was passed with (rvalue-only callables work). Like every
// algorithm, it runs on the caller's pool, or on the default pool when called from outside every
// pool: a single callable too (on one of the default pool's workers, not on the caller's thread).
template <class... F>
    requires(sizeof...(F) > 0 && (std::invocable<F> && ...))
void parallel_invoke(F&&... fs) {
    detail::on_worker([&] {
        if constexpr (sizeof...(F) == 1) {
            (std::invoke(std::forward<F>(fs)), ...);
        } else {
            auto refs = std::forward_as_tuple(std::forward<F>(fs)...);
            detail::cancel_flag cancel;
            detail::invoke_range<0, sizeof...(F)>(refs, cancel);
        }
    });
}

// A partitioner changes nothing for parallel_invoke: each callable is one task. It can only come
// first (a trailing argument after the pack could not be told from a callable).
template <partitioner P, class... F>
    requires(sizeof...(F) > 0 && (std::invocable<F> && ...))
void parallel_invoke(P, F&&... fs) {
    parallel_invoke(std::forward<F>(fs)...);
}

}  // namespace crew
