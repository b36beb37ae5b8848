// crew/algorithms/ranges.hpp -- range overloads of every crew algorithm: parallel_sort(v),
// parallel_find_if(v, pred, proj), parallel_reduce(std::views::iota(0, n), 0L), ...
//
// They accept a std::ranges::random_access_range that is also a sized_range (its end is begin +
// size), lvalues and rvalue views alike, and forward to the iterator forms. Not oneTBB-style
// splitting ranges (crew::range, e.g. crew::blocked_range): those have their own algorithms.
// Projections are taken where std::ranges:: takes them (sort, find_if, count_if, min_element,
// copy_if, equal, merge, partition, ...), as the last argument before an optional partitioner.
// Output ranges (transform, copy_if, merge, the scans) are output iterators, as in std::ranges.
//
// Results: searches (find*, min/max_element, partition points) return an iterator into the range,
// or std::ranges::dangling for an rvalue range that does not borrow its elements (as std::ranges);
// minmax_element returns std::ranges::minmax_element_result; the others return what the iterator
// forms return (the output's end for transform, copy_if, merge and the scans).
//
// The partitioner may come first (crew's order) or last (oneTBB's): parallel_find_if(crew::
// static_partition, v, pred) and parallel_find_if(v, pred, crew::static_partition).
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <iterator>
#include <ranges>
#include <type_traits>
#include <utility>

#include "crew/algorithms/copy.hpp"
#include "crew/algorithms/for_each.hpp"
#include "crew/algorithms/numeric.hpp"
#include "crew/algorithms/partition.hpp"
#include "crew/algorithms/reduce.hpp"
#include "crew/algorithms/scan.hpp"
#include "crew/algorithms/search.hpp"
#include "crew/algorithms/sort.hpp"
#include "crew/algorithms/std_support.hpp"

// The forms without a partitioner: name(r, args...) is name(crew::auto_partition, r, args...).
#define CREW_DETAIL_RANGE_DEFAULT_PARTITION(name)                                                   \
    template <class R, class... A>                                                                  \
        requires ::crew::detail::sized_random_access_range<R> &&                                    \
                 (!::crew::detail::partitioner_last<R, A...>)                                       \
    decltype(auto) name(R&& r, A&&... args) {                                                       \
        return name(::crew::auto_partition, std::forward<R>(r), std::forward<A>(args)...);          \
    }

// The range's [first, last) as two local iterators.
#define CREW_DETAIL_RANGE_BOUNDS(r)                  \
    auto first = ::crew::detail::range_first(r);     \
    auto last = ::crew::detail::range_last(r)

namespace crew {

template <class R>
concept sized_random_access_range = detail::sized_random_access_range<R>;

// ---- the existing algorithms ----

template <partitioner P, sized_random_access_range R, class F>
void parallel_for_each(P part, R&& r, F&& f) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    parallel_for_each(part, first, last, std::forward<F>(f));
}

template <partitioner P, sized_random_access_range R, class Out, class F>
    requires(!sized_random_access_range<Out>)
Out parallel_transform(P part, R&& r, Out out, F&& f) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return parallel_transform(part, first, last, out, std::forward<F>(f));
}

// The binary form: out[i] = f(r1[i], r2[i]) over the shorter of the two ranges (as std::ranges).
template <partitioner P, sized_random_access_range R1, sized_random_access_range R2, class Out, class F>
Out parallel_transform(P part, R1&& r1, R2&& r2, Out out, F&& f) {
    auto first1 = detail::range_first(r1);
    const auto n = std::min<std::size_t>(std::ranges::size(r1), std::ranges::size(r2));
    return parallel_transform(part, first1, detail::advance_by(first1, n), detail::range_first(r2), out,
                              std::forward<F>(f));
}

template <partitioner P, sized_random_access_range R>
std::ranges::range_value_t<R> parallel_reduce(P part, R&& r) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return parallel_reduce(part, first, last);
}

template <partitioner P, sized_random_access_range R, class T>
T parallel_reduce(P part, R&& r, T init) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return parallel_reduce(part, first, last, std::move(init));
}

template <partitioner P, sized_random_access_range R, class T, class Op>
T parallel_reduce(P part, R&& r, T init, Op op) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return parallel_reduce(part, first, last, std::move(init), std::move(op));
}

template <partitioner P, sized_random_access_range R, class T, class Op, class Tr>
    requires(!sized_random_access_range<T>)
T parallel_transform_reduce(P part, R&& r, T init, Op op, Tr tr) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return parallel_transform_reduce(part, first, last, std::move(init), std::move(op), std::move(tr));
}

// The binary form (an inner product); r2 must be at least as long as r1.
template <partitioner P, sized_random_access_range R1, sized_random_access_range R2, class T>
T parallel_transform_reduce(P part, R1&& r1, R2&& r2, T init) {
    CREW_DETAIL_RANGE_BOUNDS(r1);
    return parallel_transform_reduce(part, first, last, detail::range_first(r2), std::move(init));
}

template <partitioner P, sized_random_access_range R1, sized_random_access_range R2, class T, class Op1, class Op2>
T parallel_transform_reduce(P part, R1&& r1, R2&& r2, T init, Op1 op1, Op2 op2) {
    CREW_DETAIL_RANGE_BOUNDS(r1);
    return parallel_transform_reduce(part, first, last, detail::range_first(r2), std::move(init), std::move(op1),
                                     std::move(op2));
}

template <partitioner P, sized_random_access_range R, class Out, class... Rest>
    requires(sizeof...(Rest) <= 2)
Out parallel_inclusive_scan(P part, R&& r, Out out, Rest... rest) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return parallel_inclusive_scan(part, first, last, out, std::move(rest)...);
}

template <partitioner P, sized_random_access_range R, class Out, class T, class... Op>
    requires(sizeof...(Op) <= 1)
Out parallel_exclusive_scan(P part, R&& r, Out out, T init, Op... op) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return parallel_exclusive_scan(part, first, last, out, std::move(init), std::move(op)...);
}

template <partitioner P, sized_random_access_range R, class Out, class Op, class Tr, class... T>
    requires(sizeof...(T) <= 1)
Out parallel_transform_inclusive_scan(P part, R&& r, Out out, Op op, Tr tr, T... init) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return parallel_transform_inclusive_scan(part, first, last, out, std::move(op), std::move(tr), std::move(init)...);
}

template <partitioner P, sized_random_access_range R, class Out, class T, class Op, class Tr>
Out parallel_transform_exclusive_scan(P part, R&& r, Out out, T init, Op op, Tr tr) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return parallel_transform_exclusive_scan(part, first, last, out, std::move(init), std::move(op), std::move(tr));
}

// Sorts by comp(proj(a), proj(b)), as std::ranges::sort.
template <partitioner P, sized_random_access_range R, class Comp = std::ranges::less, class Proj = std::identity>
void parallel_sort(P part, R&& r, Comp comp = {}, Proj proj = {}) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    parallel_sort(part, first, last, detail::projected_comp(comp, proj));
}

template <partitioner P, sized_random_access_range R, class Comp = std::ranges::less, class Proj = std::identity>
void parallel_stable_sort(P part, R&& r, Comp comp = {}, Proj proj = {}) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    parallel_stable_sort(part, first, last, detail::projected_comp(comp, proj));
}

// ---- the std-named algorithms ----

template <partitioner P, sized_random_access_range R, class T, class Proj = std::identity>
std::ranges::range_difference_t<R> parallel_count(P part, R&& r, const T& value, Proj proj = {}) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return parallel_count_if(part, first, last,
                             [&](auto&& x) -> bool { return std::invoke(proj, std::forward<decltype(x)>(x)) == value; });
}

template <partitioner P, sized_random_access_range R, class Pred, class Proj = std::identity>
std::ranges::range_difference_t<R> parallel_count_if(P part, R&& r, Pred pred, Proj proj = {}) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return parallel_count_if(part, first, last, detail::projected(pred, proj));
}

template <partitioner P, sized_random_access_range R, class T, class Proj = std::identity>
std::ranges::borrowed_iterator_t<R> parallel_find(P part, R&& r, const T& value, Proj proj = {}) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return detail::borrowed<R>(parallel_find_if(
        part, first, last, [&](auto&& x) -> bool { return std::invoke(proj, std::forward<decltype(x)>(x)) == value; }));
}

#define CREW_DETAIL_RANGE_SEARCH(name, Result, wrap)                                          \
    template <partitioner P, sized_random_access_range R, class Pred, class Proj = std::identity> \
    Result name(P part, R&& r, Pred pred, Proj proj = {}) {                                      \
        CREW_DETAIL_RANGE_BOUNDS(r);                                                             \
        return wrap(name(part, first, last, detail::projected(pred, proj)));                    \
    }

#define CREW_DETAIL_AS_IS(x) (x)
CREW_DETAIL_RANGE_SEARCH(parallel_find_if, std::ranges::borrowed_iterator_t<R>, detail::borrowed<R>)
CREW_DETAIL_RANGE_SEARCH(parallel_find_if_not, std::ranges::borrowed_iterator_t<R>, detail::borrowed<R>)
CREW_DETAIL_RANGE_SEARCH(parallel_any_of, bool, CREW_DETAIL_AS_IS)
CREW_DETAIL_RANGE_SEARCH(parallel_all_of, bool, CREW_DETAIL_AS_IS)
CREW_DETAIL_RANGE_SEARCH(parallel_none_of, bool, CREW_DETAIL_AS_IS)
CREW_DETAIL_RANGE_SEARCH(parallel_partition, std::ranges::borrowed_iterator_t<R>, detail::borrowed<R>)
CREW_DETAIL_RANGE_SEARCH(parallel_stable_partition, std::ranges::borrowed_iterator_t<R>, detail::borrowed<R>)
#undef CREW_DETAIL_RANGE_SEARCH
#undef CREW_DETAIL_AS_IS

template <partitioner P, sized_random_access_range R, class Comp = std::ranges::less, class Proj = std::identity>
std::ranges::borrowed_iterator_t<R> parallel_min_element(P part, R&& r, Comp comp = {}, Proj proj = {}) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return detail::borrowed<R>(parallel_min_element(part, first, last, detail::projected_comp(comp, proj)));
}

template <partitioner P, sized_random_access_range R, class Comp = std::ranges::less, class Proj = std::identity>
std::ranges::borrowed_iterator_t<R> parallel_max_element(P part, R&& r, Comp comp = {}, Proj proj = {}) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return detail::borrowed<R>(parallel_max_element(part, first, last, detail::projected_comp(comp, proj)));
}

// {the first smallest, the last largest}, as std::ranges::minmax_element.
template <partitioner P, sized_random_access_range R, class Comp = std::ranges::less, class Proj = std::identity>
std::ranges::minmax_element_result<std::ranges::borrowed_iterator_t<R>> parallel_minmax_element(P part, R&& r,
                                                                                                 Comp comp = {},
                                                                                                 Proj proj = {}) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    auto [lo, hi] = parallel_minmax_element(part, first, last, detail::projected_comp(comp, proj));
    return {detail::borrowed<R>(lo), detail::borrowed<R>(hi)};
}

template <partitioner P, sized_random_access_range R, class Out, class Pred, class Proj = std::identity>
Out parallel_copy_if(P part, R&& r, Out out, Pred pred, Proj proj = {}) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    return parallel_copy_if(part, first, last, out, detail::projected(pred, proj));
}

template <partitioner P, sized_random_access_range R, class T>
void parallel_fill(P part, R&& r, const T& value) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    parallel_fill(part, first, last, value);
}

template <partitioner P, sized_random_access_range R, class Gen>
void parallel_generate(P part, R&& r, Gen gen) {
    CREW_DETAIL_RANGE_BOUNDS(r);
    parallel_generate(part, first, last, std::move(gen));
}

// Whether both ranges have the same length and pred(proj1(a), proj2(b)) for every pair.
template <partitioner P, sized_random_access_range R1, sized_random_access_range R2, class Pred = std::ranges::equal_to,
          class Proj1 = std::identity, class Proj2 = std::identity>
bool parallel_equal(P part, R1&& r1, R2&& r2, Pred pred = {}, Proj1 proj1 = {}, Proj2 proj2 = {}) {
    if (std::ranges::size(r1) != std::ranges::size(r2)) return false;
    CREW_DETAIL_RANGE_BOUNDS(r1);
    return parallel_equal(part, first, last, detail::range_first(r2), [&](auto&& a, auto&& b) -> bool {
        return std::invoke(pred, std::invoke(proj1, std::forward<decltype(a)>(a)),
                           std::invoke(proj2, std::forward<decltype(b)>(b)));
    });
}

// The stable merge of two sorted ranges by comp(proj1(a), proj2(b)) into out; returns the output's end.
template <partitioner P, sized_random_access_range R1, sized_random_access_range R2, class Out,
          class Comp = std::ranges::less, class Proj1 = std::identity, class Proj2 = std::identity>
Out parallel_merge(P part, R1&& r1, R2&& r2, Out out, Comp comp = {}, Proj1 proj1 = {}, Proj2 proj2 = {}) {
    CREW_DETAIL_RANGE_BOUNDS(r1);
    // merge only compares an element of r2 with one of r1: comp(proj2(y), proj1(x)).
    return parallel_merge(part, first, last, detail::range_first(r2), detail::range_last(r2), out,
                          [&](auto&& y, auto&& x) -> bool {
                              return std::invoke(comp, std::invoke(proj2, std::forward<decltype(y)>(y)),
                                                 std::invoke(proj1, std::forward<decltype(x)>(x)));
                          });
}

// The forms without a partitioner, and with the partitioner last.
#define CREW_DETAIL_RANGE_FORMS(name)      \
    CREW_DETAIL_RANGE_DEFAULT_PARTITION(name) \
    CREW_DETAIL_PARTITIONER_LAST(name)

CREW_DETAIL_RANGE_FORMS(parallel_for_each)
CREW_DETAIL_RANGE_FORMS(parallel_transform)
CREW_DETAIL_RANGE_FORMS(parallel_reduce)
CREW_DETAIL_RANGE_FORMS(parallel_transform_reduce)
CREW_DETAIL_RANGE_FORMS(parallel_inclusive_scan)
CREW_DETAIL_RANGE_FORMS(parallel_exclusive_scan)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_transform_inclusive_scan)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_transform_exclusive_scan)
CREW_DETAIL_RANGE_FORMS(parallel_sort)
CREW_DETAIL_RANGE_FORMS(parallel_stable_sort)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_count)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_count_if)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_find)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_find_if)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_find_if_not)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_any_of)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_all_of)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_none_of)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_min_element)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_max_element)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_minmax_element)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_copy_if)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_fill)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_generate)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_equal)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_merge)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_partition)
CREW_DETAIL_RANGE_DEFAULT_PARTITION(parallel_stable_partition)
#undef CREW_DETAIL_RANGE_FORMS

}  // namespace crew

#undef CREW_DETAIL_RANGE_DEFAULT_PARTITION
#undef CREW_DETAIL_RANGE_BOUNDS
