// crew/algorithms/numeric.hpp -- the <numeric> forms reduce.hpp and scan.hpp do not have:
// parallel_reduce(first, last), the binary parallel_transform_reduce (an inner product), and
// parallel_transform_inclusive_scan / parallel_transform_exclusive_scan. All are built on
// reduce.hpp's and scan.hpp's drivers, so `op` need only be associative and results equal the
// serial left-to-right fold (non-commutative operations work).
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <iterator>
#include <type_traits>
#include <utility>

#include "crew/algorithms/partition.hpp"
#include "crew/algorithms/reduce.hpp"
#include "crew/algorithms/scan.hpp"
#include "crew/algorithms/std_support.hpp"

namespace crew {

// std::reduce(first, last): the sum of the elements from a value-initialized value_type.
template <partitioner P, class It>
std::iter_value_t<It> parallel_reduce(P part, It first, It last) {
    CREW_DETAIL_RANDOM_ACCESS(It, "crew::parallel_reduce(first, last)");
    if constexpr (random_access_input<It>)
        return parallel_reduce(part, first, last, std::iter_value_t<It>{}, std::plus<>());
    else
        return {};
}

template <class It>
    requires(!partitioner<It>)
std::iter_value_t<It> parallel_reduce(It first, It last) {
    return parallel_reduce(auto_partition, first, last);
}

// std::transform_reduce(first1, last1, first2, init, op1, op2): init op1 op2(a0, b0) op1 op2(a1, b1)
// op1 ...; op1 need only be associative. The second range must hold at least last1 - first1 elements.
template <partitioner P, class It1, class It2, class T, class Op1, class Op2>
T parallel_transform_reduce(P part, It1 first1, It1 last1, It2 first2, T init, Op1 op1, Op2 op2) {
    static_assert(random_access_input<It1> && random_access_input<It2>,
                  "crew::parallel_transform_reduce(first1, last1, first2, ...) needs random-access iterators");
    if constexpr (random_access_input<It1> && random_access_input<It2>) {
        const std::size_t n = detail::checked_count(first1, last1, "crew::parallel_transform_reduce");
        auto pair_at = [&](std::size_t i) -> decltype(auto) {
            return op2(*detail::advance_by(first1, i), *detail::advance_by(first2, i));
        };
        return parallel_transform_reduce(part, std::size_t{0}, n, std::move(init), std::move(op1), pair_at);
    } else {
        return init;
    }
}

template <partitioner P, class It1, class It2, class T>
    requires(random_access_input<It2>)
T parallel_transform_reduce(P part, It1 first1, It1 last1, It2 first2, T init) {
    return parallel_transform_reduce(part, first1, last1, first2, std::move(init), std::plus<>(), std::multiplies<>());
}

template <class It1, class It2, class T, class Op1, class Op2>
    requires(!partitioner<It1> && !partitioner<Op2> && random_access_input<It2>)
T parallel_transform_reduce(It1 first1, It1 last1, It2 first2, T init, Op1 op1, Op2 op2) {
    return parallel_transform_reduce(auto_partition, first1, last1, first2, std::move(init), std::move(op1),
                                     std::move(op2));
}

template <class It1, class It2, class T>
    requires(!partitioner<It1> && !partitioner<T> && random_access_input<It2>)
T parallel_transform_reduce(It1 first1, It1 last1, It2 first2, T init) {
    return parallel_transform_reduce(auto_partition, first1, last1, first2, std::move(init), std::plus<>(),
                                     std::multiplies<>());
}

namespace detail {

// A random-access iterator over [first, last) seen through tr: *it is tr(*base), computed on each
// access (a scan reads every element in both of its passes, so tr may run twice per element).
// Written out rather than std::views::transform, which clang before 15 cannot compile with
// libstdc++'s <ranges>.
template <class It, class Tr>
class transform_iterator {
public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::random_access_iterator_tag;
    using reference = std::invoke_result_t<Tr&, std::iter_reference_t<It>>;
    using value_type = std::remove_cvref_t<reference>;
    using difference_type = std::iter_difference_t<It>;

    transform_iterator() = default;
    transform_iterator(It it, Tr& tr) : it_(it), tr_(&tr) {}

    reference operator*() const { return std::invoke(*tr_, *it_); }
    reference operator[](difference_type n) const { return std::invoke(*tr_, it_[n]); }
    transform_iterator& operator++() { ++it_; return *this; }
    transform_iterator operator++(int) { auto t = *this; ++it_; return t; }
    transform_iterator& operator--() { --it_; return *this; }
    transform_iterator operator--(int) { auto t = *this; --it_; return t; }
    transform_iterator& operator+=(difference_type n) { it_ += n; return *this; }
    transform_iterator& operator-=(difference_type n) { it_ -= n; return *this; }
    friend transform_iterator operator+(transform_iterator a, difference_type n) { return a += n; }
    friend transform_iterator operator+(difference_type n, transform_iterator a) { return a += n; }
    friend transform_iterator operator-(transform_iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const transform_iterator& a, const transform_iterator& b) { return a.it_ - b.it_; }
    friend bool operator==(const transform_iterator& a, const transform_iterator& b) { return a.it_ == b.it_; }
    friend auto operator<=>(const transform_iterator& a, const transform_iterator& b) { return a.it_ <=> b.it_; }

private:
    It it_{};
    Tr* tr_ = nullptr;
};

// The transform scans' entry: scan(b, e) over [first, last) seen through tr.
template <class It, class Out, class Tr, class Scan>
Out transform_scan(It first, It last, Out out, Tr& tr, Scan&& scan) {
    if constexpr (random_access_input<It> && random_access_input<Out>)
        return scan(transform_iterator<It, Tr>(first, tr), transform_iterator<It, Tr>(last, tr));
    else
        return out;
}

#define CREW_DETAIL_SCAN_INPUT(It, Out, who) \
    static_assert(::crew::random_access_input<It> && ::crew::random_access_input<Out>, \
                  who " needs random-access iterators for its input and its output")

}  // namespace detail

// std::transform_inclusive_scan: out[i] = tr(x0) op ... op tr(xi). tr may be called more than once
// per element (the scan reads every element in both of its passes).
template <partitioner P, class It, class Out, class Op, class Tr>
Out parallel_transform_inclusive_scan(P part, It first, It last, Out out, Op op, Tr tr) {
    CREW_DETAIL_SCAN_INPUT(It, Out, "crew::parallel_transform_inclusive_scan");
    return detail::transform_scan(first, last, out, tr, [&](auto b, auto e) {
        return parallel_inclusive_scan(part, b, e, out, std::move(op));
    });
}

// With a starting value: out[i] = init op tr(x0) op ... op tr(xi).
template <partitioner P, class It, class Out, class Op, class Tr, class T>
Out parallel_transform_inclusive_scan(P part, It first, It last, Out out, Op op, Tr tr, T init) {
    CREW_DETAIL_SCAN_INPUT(It, Out, "crew::parallel_transform_inclusive_scan");
    return detail::transform_scan(first, last, out, tr, [&](auto b, auto e) {
        return parallel_inclusive_scan(part, b, e, out, std::move(op), std::move(init));
    });
}

template <class It, class Out, class Op, class Tr>
    requires(!partitioner<It> && !partitioner<Tr>)
Out parallel_transform_inclusive_scan(It first, It last, Out out, Op op, Tr tr) {
    return parallel_transform_inclusive_scan(auto_partition, first, last, out, std::move(op), std::move(tr));
}

template <class It, class Out, class Op, class Tr, class T>
    requires(!partitioner<It> && !partitioner<T>)
Out parallel_transform_inclusive_scan(It first, It last, Out out, Op op, Tr tr, T init) {
    return parallel_transform_inclusive_scan(auto_partition, first, last, out, std::move(op), std::move(tr),
                                             std::move(init));
}

// std::transform_exclusive_scan: out[0] = init, out[i] = init op tr(x0) op ... op tr(x(i-1)).
template <partitioner P, class It, class Out, class T, class Op, class Tr>
Out parallel_transform_exclusive_scan(P part, It first, It last, Out out, T init, Op op, Tr tr) {
    CREW_DETAIL_SCAN_INPUT(It, Out, "crew::parallel_transform_exclusive_scan");
    return detail::transform_scan(first, last, out, tr, [&](auto b, auto e) {
        return parallel_exclusive_scan(part, b, e, out, std::move(init), std::move(op));
    });
}

template <class It, class Out, class T, class Op, class Tr>
    requires(!partitioner<It> && !partitioner<Tr>)
Out parallel_transform_exclusive_scan(It first, It last, Out out, T init, Op op, Tr tr) {
    return parallel_transform_exclusive_scan(auto_partition, first, last, out, std::move(init), std::move(op),
                                             std::move(tr));
}

// The partitioner as the last argument, as oneTBB places it. parallel_reduce and
// parallel_transform_reduce spell theirs out: reduce.hpp's (first, last, init[, op[, tr]]) forms
// would take a partitioner there for init, op or tr, and these are more specialized.
template <class It, partitioner P>
    requires(!partitioner<It>)
std::iter_value_t<It> parallel_reduce(It first, It last, P part) {
    return parallel_reduce(part, first, last);
}

template <class It1, class It2, class T, partitioner P>
    requires(!partitioner<It1> && random_access_input<It2>)
T parallel_transform_reduce(It1 first1, It1 last1, It2 first2, T init, P part) {
    return parallel_transform_reduce(part, first1, last1, first2, std::move(init));
}

template <class It1, class It2, class T, class Op1, class Op2, partitioner P>
    requires(!partitioner<It1> && random_access_input<It2>)
T parallel_transform_reduce(It1 first1, It1 last1, It2 first2, T init, Op1 op1, Op2 op2, P part) {
    return parallel_transform_reduce(part, first1, last1, first2, std::move(init), std::move(op1), std::move(op2));
}

CREW_DETAIL_PARTITIONER_LAST(parallel_transform_inclusive_scan)
CREW_DETAIL_PARTITIONER_LAST(parallel_transform_exclusive_scan)

}  // namespace crew
