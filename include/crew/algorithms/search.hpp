// crew/algorithms/search.hpp -- counting, searching and comparing: parallel_count(_if),
// parallel_find(_if, _if_not), parallel_any_of / all_of / none_of, parallel_equal, and
// parallel_min_element / max_element / minmax_element.
//
// Every leaf runs a serial loop over its block: leaf_kernels.hpp's vectorizable count, find and
// (integers under std::less) min/max kernels, else the std algorithm itself (std::mismatch,
// std::min_element with a user's comparator, ...). The
// searches stop early (std_support.hpp's search driver): once a match at index k is known, pieces
// entirely after k are not started and running pieces stop within about a thousand elements;
// find still returns the FIRST match, as std::find does. Counting and min/max are reductions over
// every element (partition.hpp's parallel_fold), with std's rules for equal elements.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <utility>

#include "crew/algorithms/leaf_kernels.hpp"
#include "crew/algorithms/partition.hpp"
#include "crew/algorithms/reduce.hpp"
#include "crew/algorithms/std_support.hpp"

namespace crew {

// ---- counting ----

namespace detail {

// The number of x in [first, first + n) with pred(x): count_kernel over each leaf (a 32-bit count
// per run, which vectorizes where std::count_if's 64-bit one does not).
template <class P, class It, class Pred>
std::iter_difference_t<It> count_index(P part, It first, std::size_t n, Pred& pred) {
    using D = std::iter_difference_t<It>;
    if (n == 0) return D{0};
    auto leaf = [&](std::size_t b, std::size_t e) -> D {
        return count_kernel<D>(advance_by(first, b), e - b, pred);
    };
    return on_worker([&] { return parallel_fold<D>(part, n, leaf, std::plus<D>()); });
}

}  // namespace detail

// std::count_if: the number of elements x with pred(x).
template <partitioner P, class It, class Pred>
std::iter_difference_t<It> parallel_count_if(P part, It first, It last, Pred pred) {
    CREW_DETAIL_RANDOM_ACCESS(It, "crew::parallel_count_if");
    if constexpr (random_access_input<It>) {
        const std::size_t n = detail::checked_count(first, last, "crew::parallel_count_if");
        return detail::count_index(part, first, n, pred);
    } else {
        return std::iter_difference_t<It>{0};
    }
}

template <class It, class Pred>
    requires(!partitioner<It>)
std::iter_difference_t<It> parallel_count_if(It first, It last, Pred pred) {
    return parallel_count_if(auto_partition, first, last, std::move(pred));
}

// std::count: the number of elements equal to value.
template <partitioner P, class It, class T>
std::iter_difference_t<It> parallel_count(P part, It first, It last, const T& value) {
    return parallel_count_if(part, first, last, [&value](auto&& x) -> bool { return x == value; });
}

template <class It, class T>
    requires(!partitioner<It>)
std::iter_difference_t<It> parallel_count(It first, It last, const T& value) {
    return parallel_count(auto_partition, first, last, value);
}

// ---- searching (early stop) ----

namespace detail {

// The index of the first x in [first, first + n) with pred(x) (any_match: of some such x), or n.
template <class P, class It, class Pred>
std::size_t find_index(P part, It first, std::size_t n, Pred& pred, bool any_match) {
    auto first_in = [&](std::size_t b, std::size_t e) -> std::size_t { return find_kernel(first, b, e, pred); };
    return search_index(part, n, first_in, any_match);
}

// find_if's and any_of's entry: {the first (any_match: some) matching index or n, n}.
template <class P, class It, class Pred>
std::pair<std::size_t, std::size_t> search_entry(P part, It first, It last, Pred& pred, bool any_match, const char* who) {
    const std::size_t n = checked_count(first, last, who);
    return {find_index(part, first, n, pred, any_match), n};
}

}  // namespace detail

// std::find_if: the first element x with pred(x), or last.
template <partitioner P, class It, class Pred>
It parallel_find_if(P part, It first, It last, Pred pred) {
    CREW_DETAIL_RANDOM_ACCESS(It, "crew::parallel_find_if");
    CREW_DETAIL_LOOP_PARTITIONER(P, "crew::parallel_find_if");
    if constexpr (random_access_input<It>)
        return detail::advance_by(first, detail::search_entry(part, first, last, pred, false, "crew::parallel_find_if").first);
    else
        return last;
}

template <class It, class Pred>
    requires(!partitioner<It>)
It parallel_find_if(It first, It last, Pred pred) {
    return parallel_find_if(auto_partition, first, last, std::move(pred));
}

// std::find_if_not: the first element x with !pred(x), or last.
template <partitioner P, class It, class Pred>
It parallel_find_if_not(P part, It first, It last, Pred pred) {
    return parallel_find_if(part, first, last, [&pred](auto&& x) -> bool { return !pred(std::forward<decltype(x)>(x)); });
}

template <class It, class Pred>
    requires(!partitioner<It>)
It parallel_find_if_not(It first, It last, Pred pred) {
    return parallel_find_if_not(auto_partition, first, last, std::move(pred));
}

// std::find: the first element equal to value, or last.
template <partitioner P, class It, class T>
It parallel_find(P part, It first, It last, const T& value) {
    return parallel_find_if(part, first, last, [&value](auto&& x) -> bool { return x == value; });
}

template <class It, class T>
    requires(!partitioner<It>)
It parallel_find(It first, It last, const T& value) {
    return parallel_find(auto_partition, first, last, value);
}

// std::any_of: whether some x has pred(x). Stops at any match.
template <partitioner P, class It, class Pred>
bool parallel_any_of(P part, It first, It last, Pred pred) {
    CREW_DETAIL_RANDOM_ACCESS(It, "crew::parallel_any_of");
    CREW_DETAIL_LOOP_PARTITIONER(P, "crew::parallel_any_of");
    if constexpr (random_access_input<It>) {
        auto [at, n] = detail::search_entry(part, first, last, pred, true, "crew::parallel_any_of");
        return at != n;
    } else {
        return false;
    }
}

template <class It, class Pred>
    requires(!partitioner<It>)
bool parallel_any_of(It first, It last, Pred pred) {
    return parallel_any_of(auto_partition, first, last, std::move(pred));
}

// std::none_of: whether no x has pred(x).
template <partitioner P, class It, class Pred>
bool parallel_none_of(P part, It first, It last, Pred pred) {
    return !parallel_any_of(part, first, last, std::move(pred));
}

template <class It, class Pred>
    requires(!partitioner<It>)
bool parallel_none_of(It first, It last, Pred pred) {
    return !parallel_any_of(auto_partition, first, last, std::move(pred));
}

// std::all_of: whether every x has pred(x) (true for an empty range).
template <partitioner P, class It, class Pred>
bool parallel_all_of(P part, It first, It last, Pred pred) {
    return !parallel_any_of(part, first, last, [&pred](auto&& x) -> bool { return !pred(std::forward<decltype(x)>(x)); });
}

template <class It, class Pred>
    requires(!partitioner<It>)
bool parallel_all_of(It first, It last, Pred pred) {
    return parallel_all_of(auto_partition, first, last, std::move(pred));
}

// std::equal(first1, last1, first2, pred): whether pred(first1[i], first2[i]) for every i. Stops at
// any mismatch.
template <partitioner P, class It1, class It2, class Pred>
    requires(!partitioner<It1>)
bool parallel_equal(P part, It1 first1, It1 last1, It2 first2, Pred pred) {
    static_assert(random_access_input<It1> && random_access_input<It2>,
                  "crew::parallel_equal needs random-access iterators (a vector's, an array's, a pointer)");
    CREW_DETAIL_LOOP_PARTITIONER(P, "crew::parallel_equal");
    if constexpr (random_access_input<It1> && random_access_input<It2>) {
        const std::size_t n = detail::checked_count(first1, last1, "crew::parallel_equal");
        auto first_difference = [&](std::size_t b, std::size_t e) -> std::size_t {
            const It1 from = detail::advance_by(first1, b);
            auto m = std::mismatch(from, detail::advance_by(first1, e), detail::advance_by(first2, b), std::ref(pred));
            return b + static_cast<std::size_t>(m.first - from);
        };
        return detail::search_index(part, n, first_difference, true) == n;
    } else {
        return false;
    }
}

// std::equal(first1, last1, first2, last2, pred): false at once when the lengths differ.
template <partitioner P, class It1, class It2, class Pred>
    requires(random_access_input<It2>)
bool parallel_equal(P part, It1 first1, It1 last1, It2 first2, It2 last2, Pred pred) {
    static_assert(random_access_input<It1>, "crew::parallel_equal needs random-access iterators");
    if constexpr (random_access_input<It1>) {
        if (detail::checked_count(first1, last1, "crew::parallel_equal") !=
            detail::checked_count(first2, last2, "crew::parallel_equal"))
            return false;
        return parallel_equal(part, first1, last1, first2, std::move(pred));
    } else {
        return false;
    }
}

// The forms without a predicate compare with ==; the forms without a partitioner use auto_partition.
template <partitioner P, class It1, class It2>
bool parallel_equal(P part, It1 first1, It1 last1, It2 first2) {
    return parallel_equal(part, first1, last1, first2, std::equal_to<>());
}

template <partitioner P, class It1, class It2>
    requires(random_access_input<It2>)
bool parallel_equal(P part, It1 first1, It1 last1, It2 first2, It2 last2) {
    return parallel_equal(part, first1, last1, first2, last2, std::equal_to<>());
}

template <class It1, class It2>
    requires(!partitioner<It1>)
bool parallel_equal(It1 first1, It1 last1, It2 first2) {
    return parallel_equal(auto_partition, first1, last1, first2, std::equal_to<>());
}

template <class It1, class It2, class Pred>
    requires(!partitioner<It1> && !partitioner<Pred> && !std::same_as<It2, Pred>)
bool parallel_equal(It1 first1, It1 last1, It2 first2, Pred pred) {
    return parallel_equal(auto_partition, first1, last1, first2, std::move(pred));
}

template <class It1, class It2>
    requires(!partitioner<It1> && random_access_input<It2>)
bool parallel_equal(It1 first1, It1 last1, It2 first2, It2 last2) {
    return parallel_equal(auto_partition, first1, last1, first2, last2, std::equal_to<>());
}

template <class It1, class It2, class Pred>
    requires(!partitioner<It1> && !partitioner<Pred> && random_access_input<It2>)
bool parallel_equal(It1 first1, It1 last1, It2 first2, It2 last2, Pred pred) {
    return parallel_equal(auto_partition, first1, last1, first2, last2, std::move(pred));
}

// ---- minimum and maximum ----

namespace detail {

// Which of two candidates (indices, left before right) a reduction keeps.
enum class pick { first_min, first_max, last_max };

template <pick Pick, class It, class Comp>
std::size_t pick_of(It first, std::size_t l, std::size_t r, Comp& comp) {
    auto x = advance_by(first, l);
    auto y = advance_by(first, r);
    if constexpr (Pick == pick::first_min)
        return comp(*y, *x) ? r : l;  // ties keep the left one (the first smallest)
    else if constexpr (Pick == pick::first_max)
        return comp(*x, *y) ? r : l;  // ties keep the left one (the first largest)
    else
        return comp(*y, *x) ? l : r;  // ties take the right one (the last largest)
}

// The index of the first smallest (first_min) or first largest (first_max) element: std's
// min_element / max_element over each leaf, whose results are combined left to right.
template <pick Pick, class P, class It, class Comp>
std::size_t extreme_index(P part, It first, std::size_t n, Comp& comp) {
    auto leaf = [&](std::size_t b, std::size_t e) -> std::size_t {
        const It from = advance_by(first, b), to = advance_by(first, e);
        if constexpr (plain_integer_less<It, Comp>)
            return b + first_extreme_kernel<Pick == pick::first_max>(std::to_address(from), e - b);
        else if constexpr (Pick == pick::first_min)
            return b + static_cast<std::size_t>(std::min_element(from, to, std::ref(comp)) - from);
        else
            return b + static_cast<std::size_t>(std::max_element(from, to, std::ref(comp)) - from);
    };
    auto combine = [&](std::size_t l, std::size_t r) -> std::size_t { return pick_of<Pick>(first, l, r, comp); };
    return on_worker([&] { return parallel_fold<std::size_t>(part, n, leaf, combine); });
}

struct index_pair {
    std::size_t min, max;
};

// {the first smallest, the last largest}: std::minmax_element over each leaf, combined left to right.
template <class P, class It, class Comp>
index_pair minmax_index(P part, It first, std::size_t n, Comp& comp) {
    auto leaf = [&](std::size_t b, std::size_t e) -> index_pair {
        const It from = advance_by(first, b);
        if constexpr (plain_integer_less<It, Comp>) {
            const auto* p = std::to_address(from);
            return {b + first_extreme_kernel<false>(p, e - b), b + last_max_kernel(p, e - b)};
        } else {
            auto r = std::minmax_element(from, advance_by(first, e), std::ref(comp));
            return {b + static_cast<std::size_t>(r.first - from), b + static_cast<std::size_t>(r.second - from)};
        }
    };
    auto combine = [&](index_pair l, index_pair r) -> index_pair {
        return {pick_of<pick::first_min>(first, l.min, r.min, comp), pick_of<pick::last_max>(first, l.max, r.max, comp)};
    };
    return on_worker([&] { return parallel_fold<index_pair>(part, n, leaf, combine); });
}

}  // namespace detail

// std::min_element: the first smallest element under comp (default std::less<>), or last.
template <partitioner P, class It, class Comp>
It parallel_min_element(P part, It first, It last, Comp comp) {
    CREW_DETAIL_RANDOM_ACCESS(It, "crew::parallel_min_element");
    if constexpr (random_access_input<It>) {
        const std::size_t n = detail::checked_count(first, last, "crew::parallel_min_element");
        if (n == 0) return last;
        return detail::advance_by(first, detail::extreme_index<detail::pick::first_min>(part, first, n, comp));
    } else {
        return last;
    }
}

// std::max_element: the first largest element under comp, or last.
template <partitioner P, class It, class Comp>
It parallel_max_element(P part, It first, It last, Comp comp) {
    CREW_DETAIL_RANDOM_ACCESS(It, "crew::parallel_max_element");
    if constexpr (random_access_input<It>) {
        const std::size_t n = detail::checked_count(first, last, "crew::parallel_max_element");
        if (n == 0) return last;
        return detail::advance_by(first, detail::extreme_index<detail::pick::first_max>(part, first, n, comp));
    } else {
        return last;
    }
}

// std::minmax_element: {the first smallest, the LAST largest} (as std), or {last, last}.
template <partitioner P, class It, class Comp>
std::pair<It, It> parallel_minmax_element(P part, It first, It last, Comp comp) {
    CREW_DETAIL_RANDOM_ACCESS(It, "crew::parallel_minmax_element");
    if constexpr (random_access_input<It>) {
        const std::size_t n = detail::checked_count(first, last, "crew::parallel_minmax_element");
        if (n == 0) return {last, last};
        detail::index_pair r = detail::minmax_index(part, first, n, comp);
        return {detail::advance_by(first, r.min), detail::advance_by(first, r.max)};
    } else {
        return {last, last};
    }
}

#define CREW_DETAIL_MINMAX_FORMS(name)                                      \
    template <partitioner P, class It>                                      \
    auto name(P part, It first, It last) {                                  \
        return name(part, first, last, std::less<>());                      \
    }                                                                       \
    template <class It, class Comp>                                         \
        requires(!partitioner<It> && !partitioner<Comp>)                    \
    auto name(It first, It last, Comp comp) {                               \
        return name(auto_partition, first, last, std::move(comp));          \
    }                                                                       \
    template <class It>                                                     \
        requires(!partitioner<It>)                                          \
    auto name(It first, It last) {                                          \
        return name(auto_partition, first, last, std::less<>());            \
    }

// The forms without comp use std::less<>; the forms without a partitioner use auto_partition.
CREW_DETAIL_MINMAX_FORMS(parallel_min_element)
CREW_DETAIL_MINMAX_FORMS(parallel_max_element)
CREW_DETAIL_MINMAX_FORMS(parallel_minmax_element)
#undef CREW_DETAIL_MINMAX_FORMS

// The partitioner as the last argument, as oneTBB places it: parallel_find_if(first, last, pred,
// crew::static_partition).
CREW_DETAIL_PARTITIONER_LAST(parallel_count)
CREW_DETAIL_PARTITIONER_LAST(parallel_count_if)
CREW_DETAIL_PARTITIONER_LAST(parallel_find)
CREW_DETAIL_PARTITIONER_LAST(parallel_find_if)
CREW_DETAIL_PARTITIONER_LAST(parallel_find_if_not)
CREW_DETAIL_PARTITIONER_LAST(parallel_any_of)
CREW_DETAIL_PARTITIONER_LAST(parallel_all_of)
CREW_DETAIL_PARTITIONER_LAST(parallel_none_of)
CREW_DETAIL_PARTITIONER_LAST(parallel_equal)
CREW_DETAIL_PARTITIONER_LAST(parallel_min_element)
CREW_DETAIL_PARTITIONER_LAST(parallel_max_element)
CREW_DETAIL_PARTITIONER_LAST(parallel_minmax_element)

}  // namespace crew
