// crew/algorithms/reduce.hpp -- parallel_reduce and parallel_transform_reduce.
//
// `op` need only be associative: pieces are folded left to right and adjacent results are always
// combined left then right, so the result equals the serial left-to-right fold
// init op x0 op x1 op ... (e.g. for string concatenation or matrix products).
//
// The partitioner may come first or, as in oneTBB, last (see for_each.hpp). The range forms
// parallel_reduce(range, identity, body, join) and parallel_reduce(range, body) live in
// range_algorithms.hpp; the overloads here refuse a crew::range as `first`, and a sized
// random-access std range too, so parallel_reduce(v, init, op) is ranges.hpp's form, not v as
// `first` and init as `last`.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <iterator>
#include <type_traits>
#include <utility>

#include "crew/algorithms/partition.hpp"
#include "crew/algorithms/range.hpp"
#include "crew/algorithms/std_support.hpp"

namespace crew {

namespace detail {

// The type a leaf reads: tr applied to an element (or to an index).
template <class I, class Tr>
using transformed_t = std::invoke_result_t<Tr&, decltype(element_at(std::declval<I>()))>;

// How a leaf's accumulator starts. std::reduce never makes a T out of a lone element: it needs only
// op(x, x), op(T, x), op(x, T) and op(T, T) convertible to T. So a leaf starts from its first element
// when that converts implicitly to T (an int into a long, a const char* into a std::string), and
// otherwise from op(x0, x1), which needs leaves of at least two elements. Direct-initialising T from
// an element would pick explicit constructors that mean something else (std::vector<int>(3)).
template <class T, class X>
inline constexpr std::size_t min_leaf = std::is_convertible_v<X, T> ? 1 : 2;

// Folds positions [b, e) (at least min_leaf of them) of `first` left to right: tr(x_b) op tr(x_b+1) op ...
template <class T, class I, class Op, class Tr>
T fold_serial(I first, std::size_t b, std::size_t e, Op& op, Tr& tr) {
    I it = advance_by(first, b);
    std::size_t i = b + 1;
    T acc = [&]() -> T {
        if constexpr (min_leaf<T, transformed_t<I, Tr>> == 1) {
            return tr(element_at(it));
        } else {
            I second = it;
            ++second;
            ++i;
            auto&& x0 = tr(element_at(it));  // tr is called in element order
            return op(std::forward<decltype(x0)>(x0), tr(element_at(second)));
        }
    }();
    for (it = advance_by(first, i); i < e; ++i, ++it) acc = op(std::move(acc), tr(element_at(it)));
    return acc;
}

// Folds the 4 * K elements at `first + b` as four runs of K, side by side, combined left to right.
template <std::size_t K, class T, class I, class Op, class Tr>
T fold_chunk(I first, std::size_t b, Op& op, Tr& tr) {
    auto x = [&](std::size_t i) -> decltype(auto) { return tr(element_at(advance_by(first, b + i))); };
    T a0 = x(0), a1 = x(K), a2 = x(2 * K), a3 = x(3 * K);
    for (std::size_t j = 1; j != K; ++j) {
        a0 = op(a0, x(j));
        a1 = op(a1, x(K + j));
        a2 = op(a2, x(2 * K + j));
        a3 = op(a3, x(3 * K + j));
    }
    T r = op(a0, a1);
    r = op(r, a2);
    r = op(r, a3);
    return r;
}

// For floating point a serial fold waits for one add per element. Folding chunks of 64 elements
// as four runs of 16 side by side keeps four adds in flight, reads memory in order, and needs only
// associativity; it is a fixed function of [b, e), so deterministic results stay so.
template <class T, class I, class Op, class Tr>
T fold_leaf(I first, std::size_t b, std::size_t e, Op& op, Tr& tr) {
    if constexpr (std::is_floating_point_v<T> && min_leaf<T, transformed_t<I, Tr>> == 1) {
        constexpr std::size_t K = 16, chunk = 4 * K;
        if (e - b >= 2 * chunk) {
            T acc = fold_chunk<K, T>(first, b, op, tr);
            std::size_t i = b + chunk;
            for (; e - i >= chunk; i += chunk) acc = op(acc, fold_chunk<K, T>(first, i, op, tr));
            for (; i != e; ++i) acc = op(acc, tr(element_at(advance_by(first, i))));
            return acc;
        }
    }
    return fold_serial<T>(first, b, e, op, tr);
}

// init op (the fold of the n elements), where init is combined once, at the end.
template <class T, class P, class I, class Op, class Tr>
T transform_reduce_on_worker(P part, I first, std::size_t n, T init, Op& op, Tr& tr) {
    if (n == 0) return init;
    constexpr std::size_t min_len = min_leaf<T, transformed_t<I, Tr>>;
    auto leaf = [&](std::size_t b, std::size_t e) -> T { return fold_leaf<T>(first, b, e, op, tr); };
    auto combine = [&](T&& x, T&& y) -> T { return op(std::move(x), std::move(y)); };
    return on_worker([&]() -> T {
        if (n < min_len) return op(std::move(init), tr(element_at(first)));  // one element
        T total = parallel_fold<T>(part, n, leaf, combine, min_len);
        return op(std::move(init), std::move(total));
    });
}

// [first, last) as a start position and a count: integers (of possibly different types) or
// random-access iterators of one type.
template <class I, class J>
auto reduce_range(I first, J last, const char* who) {
    if constexpr (std::integral<I> && std::integral<J>) {
        using C = index_type<I, J>;
        if (!index_fits<C>(first) || !index_fits<C>(last))
            throw std::invalid_argument(std::string(who) + ": the bounds do not fit a common index type");
        return std::pair<C, std::size_t>(static_cast<C>(first), checked_count<C>(static_cast<C>(first), static_cast<C>(last), who));
    } else {
        return std::pair<I, std::size_t>(first, checked_count<I>(first, last, who));
    }
}

template <class I, class J>
inline constexpr bool valid_reduce_range =
    (index_integer<I> && index_integer<J>) || (std::same_as<I, J> && random_access_input<I>);

#define CREW_DETAIL_REDUCE_RANGE(I, J, who)                                                                   \
    static_assert(!std::same_as<I, bool> && !std::same_as<J, bool>,                                             \
                  who ": bool is not an index type; use an integer type such as int");                          \
    static_assert(::crew::detail::valid_reduce_range<I, J> || std::same_as<I, bool> || std::same_as<J, bool>, \
                  who " needs two integers or two random-access iterators of one type (a vector's, an array's, " \
                  "a pointer)")

}  // namespace detail

// std::transform_reduce in parallel: init op tr(x0) op tr(x1) op ... For integer first/last,
// tr receives each index.
template <partitioner P, class I, class J, class T, class Op, class Tr>
    requires(!detail::sized_random_access_range<I>)
T parallel_transform_reduce(P part, I first, J last, T init, Op op, Tr transform) {
    using namespace detail;
    CREW_DETAIL_REDUCE_RANGE(I, J, "crew::parallel_transform_reduce");
    if constexpr (valid_reduce_range<I, J>) {
        auto [start, n] = reduce_range(first, last, "crew::parallel_transform_reduce");
        return transform_reduce_on_worker<T>(part, start, n, std::move(init), op, transform);
    } else {
        return init;
    }
}

template <class I, class J, class T, class Op, class Tr>
    requires(!partitioner<I> && !range<I> && !detail::sized_random_access_range<I> && !partitioner<Tr>)
T parallel_transform_reduce(I first, J last, T init, Op op, Tr transform) {
    return parallel_transform_reduce(auto_partition, first, last, std::move(init), std::move(op),
                                     std::move(transform));
}

template <class I, class J, class T, class Op, class Tr, partitioner P>
    requires(!partitioner<I> && !range<I> && !detail::sized_random_access_range<I>)
T parallel_transform_reduce(I first, J last, T init, Op op, Tr transform, P part) {
    return parallel_transform_reduce(part, first, last, std::move(init), std::move(op), std::move(transform));
}

// std::reduce in parallel: init op x0 op x1 op ... For integer first/last, the elements are the
// indices themselves.
template <partitioner P, class I, class J, class T, class Op>
    requires(!range<I> && !detail::sized_random_access_range<I>)
T parallel_reduce(P part, I first, J last, T init, Op op) {
    using namespace detail;
    CREW_DETAIL_REDUCE_RANGE(I, J, "crew::parallel_reduce");
    if constexpr (valid_reduce_range<I, J>) {
        auto [start, n] = reduce_range(first, last, "crew::parallel_reduce");
        pass_element identity;
        return transform_reduce_on_worker<T>(part, start, n, std::move(init), op, identity);
    } else {
        return init;
    }
}

template <class I, class J, class T, class Op>
    requires(!partitioner<I> && !range<I> && !detail::sized_random_access_range<I> && !partitioner<Op>)
T parallel_reduce(I first, J last, T init, Op op) {
    return parallel_reduce(auto_partition, first, last, std::move(init), std::move(op));
}

template <class I, class J, class T, class Op, partitioner P>
    requires(!partitioner<I> && !range<I> && !detail::sized_random_access_range<I>)
T parallel_reduce(I first, J last, T init, Op op, P part) {
    return parallel_reduce(part, first, last, std::move(init), std::move(op));
}

// With std::plus<> as op.
template <partitioner P, class I, class J, class T>
    requires(!range<I> && !detail::sized_random_access_range<I>)
T parallel_reduce(P part, I first, J last, T init) {
    return parallel_reduce(part, first, last, std::move(init), std::plus<>());
}

template <class I, class J, class T>
    requires(!partitioner<I> && !range<I> && !detail::sized_random_access_range<I> && !partitioner<T>)
T parallel_reduce(I first, J last, T init) {
    return parallel_reduce(auto_partition, first, last, std::move(init), std::plus<>());
}

template <class I, class J, class T, partitioner P>
    requires(!partitioner<I> && !range<I> && !detail::sized_random_access_range<I> && !partitioner<T>)
T parallel_reduce(I first, J last, T init, P part) {
    return parallel_reduce(part, first, last, std::move(init), std::plus<>());
}

}  // namespace crew
