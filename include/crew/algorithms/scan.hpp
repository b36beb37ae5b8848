// crew/algorithms/scan.hpp -- parallel_inclusive_scan and parallel_exclusive_scan.
//
// Two passes over blocks: (1) fold every block but the last, in parallel; (2) serially turn the
// block sums into each block's starting value; (3) scan every block from its starting value, in
// parallel. `op` need only be associative. With the default partitioner (and with
// crew::deterministic) the blocks depend only on the number of elements, so floating-point scans
// give the same bits on any pool size.
//
// The partitioner may come first or, as in oneTBB, last (see for_each.hpp).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <functional>
#include <iterator>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "crew/algorithms/partition.hpp"
#include "crew/algorithms/reduce.hpp"

namespace crew {

namespace detail {

// ---- blocks of the two-pass algorithms (scans, copy_if, stable_partition) ----

// Elements per block: at most 256 blocks of at least 4,096 elements with auto_partition, one block
// per worker with static_partition, `grain` elements with simple_partition and deterministic, one
// with simple_partitioner. Never 0.
inline std::size_t scan_block(auto_partition_t, std::size_t n) noexcept {
    constexpr std::size_t max_blocks = 256, min_block = 4096;
    std::size_t b = (n + max_blocks - 1) / max_blocks;
    return b < min_block ? min_block : b;
}
inline std::size_t scan_block(static_partition_t, std::size_t n) noexcept {
    std::size_t p = current_pool_size();
    std::size_t b = (n + p - 1) / p;
    return b > 0 ? b : 1;
}
inline std::size_t scan_block(simple_partition p, std::size_t) noexcept { return p.grain(); }
inline std::size_t scan_block(deterministic_partition p, std::size_t) noexcept { return p.grain(); }
inline std::size_t scan_block(simple_partitioner, std::size_t) noexcept { return 1; }

// Calls per_block(k) for every k in [0, blocks), in parallel; every block runs (unless user code
// throws), as the next pass reads what each wrote. static_partition stays static.
template <class P, class F>
void for_each_block(P, std::size_t blocks, F&& per_block) {
    auto leaf = [&](std::size_t kb, std::size_t ke) {
        for (std::size_t k = kb; k != ke; ++k) per_block(k);
    };
    if constexpr (std::same_as<P, static_partition_t>)
        parallel_leaves_complete(static_partition, blocks, leaf);
    else
        parallel_leaves_complete(auto_partition, blocks, leaf);
}

// Scans positions [b, e) of first into out, starting from `start` (none: from the first element).
// Reads each element before writing its output, so out may equal first.
template <class T, class It, class Out, class Op>
void scan_block_serial(It first, Out out, std::size_t b, std::size_t e, const std::optional<T>& start,
                       bool exclusive, Op& op) {
    It it = advance_by(first, b);
    Out o = advance_by(out, b);
    if (exclusive) {
        // The element is used before its output is written (out may be first), and only through
        // op: T need not be constructible from it.
        T acc = *start;
        for (std::size_t i = b; i != e; ++i, ++it, ++o) {
            T prev = acc;
            acc = op(std::move(acc), *it);
            *o = std::move(prev);
        }
        return;
    }
    T acc = [&]() -> T {
        // Only the form without init (where T is the value type) has no start: its first block.
        if constexpr (std::is_convertible_v<std::iter_reference_t<It>, T>)
            if (!start) return *it;
        return op(*start, *it);
    }();
    *o = acc;
    for (std::size_t i = b + 1; i != e; ++i) {
        ++it;
        ++o;
        acc = op(std::move(acc), *it);
        *o = acc;
    }
}

template <class T, class P, class It, class Out, class Op>
Out scan_on_worker(P part, It first, std::size_t n, Out out, std::optional<T> init, bool exclusive, Op& op) {
    // Block sums start from op(x0, x1) when an element does not convert to T (see min_leaf), so no
    // block that is summed may hold a single element.
    constexpr std::size_t min_block = min_leaf<T, std::iter_reference_t<It>>;
    const std::size_t block = std::max(scan_block(part, n), min_block);
    const std::size_t blocks = (n + block - 1) / block;
    auto block_end = [&](std::size_t k) { return k + 1 == blocks ? n : (k + 1) * block; };
    if (blocks <= 1) {
        scan_block_serial<T>(first, out, 0, n, init, exclusive, op);
        return advance_by(out, n);
    }
    auto spread = [&](auto&& per_block) { for_each_block(part, blocks, per_block); };
    // (1) block sums, all but the last block's.
    std::vector<std::optional<T>> start(blocks);
    pass_element identity;
    spread([&](std::size_t k) {
        if (k + 1 != blocks) start[k + 1].emplace(fold_leaf<T>(first, k * block, block_end(k), op, identity));
    });
    // (2) starting values, left to right: start[k] = start[k-1] op sum(k-1). start[k-1] is still
    // needed by pass (3), so it is copied.
    start[0] = std::move(init);
    for (std::size_t k = 1; k != blocks; ++k)
        if (start[k - 1]) start[k].emplace(implicit_as<T>(op(T(*start[k - 1]), std::move(*start[k]))));
    // (3) rescan.
    spread([&](std::size_t k) { scan_block_serial<T>(first, out, k * block, block_end(k), start[k], exclusive, op); });
    return advance_by(out, n);
}

template <class T, class P, class It, class Out, class Op>
Out scan_entry(P part, It first, It last, Out out, std::optional<T> init, bool exclusive, Op& op, const char* who) {
    const std::size_t n = checked_count(first, last, who);
    if (n == 0) return out;
    return on_worker([&]() -> Out { return scan_on_worker<T>(part, first, n, out, std::move(init), exclusive, op); });
}

#define CREW_DETAIL_SCAN_ITERATORS(It, Out, who) \
    static_assert(::crew::random_access_input<It> && ::crew::random_access_input<Out>, \
                  who " needs random-access iterators for its input and its output")

}  // namespace detail

// std::inclusive_scan in parallel: out[i] = x0 op x1 op ... op xi.
template <partitioner P, class It, class Out, class Op>
Out parallel_inclusive_scan(P part, It first, It last, Out out, Op op) {
    CREW_DETAIL_SCAN_ITERATORS(It, Out, "crew::parallel_inclusive_scan");
    if constexpr (random_access_input<It> && random_access_input<Out>) {
        using T = std::iter_value_t<It>;
        return detail::scan_entry<T>(part, first, last, out, std::nullopt, false, op, "crew::parallel_inclusive_scan");
    } else {
        return out;
    }
}

// With a starting value: out[i] = init op x0 op ... op xi (as std::inclusive_scan's last form).
template <partitioner P, class It, class Out, class Op, class T>
Out parallel_inclusive_scan(P part, It first, It last, Out out, Op op, T init) {
    CREW_DETAIL_SCAN_ITERATORS(It, Out, "crew::parallel_inclusive_scan");
    if constexpr (random_access_input<It> && random_access_input<Out>) {
        return detail::scan_entry<T>(part, first, last, out, std::optional<T>(std::move(init)), false, op,
                                     "crew::parallel_inclusive_scan");
    } else {
        return out;
    }
}

template <partitioner P, class It, class Out>
Out parallel_inclusive_scan(P part, It first, It last, Out out) {
    return parallel_inclusive_scan(part, first, last, out, std::plus<>());
}

template <class It, class Out, class Op>
    requires(!partitioner<It> && !partitioner<Op>)
Out parallel_inclusive_scan(It first, It last, Out out, Op op) {
    return parallel_inclusive_scan(auto_partition, first, last, out, std::move(op));
}

template <class It, class Out, class Op, class T>
    requires(!partitioner<It> && !partitioner<T>)
Out parallel_inclusive_scan(It first, It last, Out out, Op op, T init) {
    return parallel_inclusive_scan(auto_partition, first, last, out, std::move(op), std::move(init));
}

// Partitioner last, as oneTBB writes it.
template <class It, class Out, class Op, partitioner P>
    requires(!partitioner<It>)
Out parallel_inclusive_scan(It first, It last, Out out, Op op, P part) {
    return parallel_inclusive_scan(part, first, last, out, std::move(op));
}

template <class It, class Out, class Op, class T, partitioner P>
    requires(!partitioner<It>)
Out parallel_inclusive_scan(It first, It last, Out out, Op op, T init, P part) {
    return parallel_inclusive_scan(part, first, last, out, std::move(op), std::move(init));
}

template <class It, class Out, partitioner P>
    requires(!partitioner<It>)
Out parallel_inclusive_scan(It first, It last, Out out, P part) {
    return parallel_inclusive_scan(part, first, last, out, std::plus<>());
}

template <class It, class Out>
    requires(!partitioner<It>)
Out parallel_inclusive_scan(It first, It last, Out out) {
    return parallel_inclusive_scan(auto_partition, first, last, out, std::plus<>());
}

// std::exclusive_scan in parallel: out[0] = init, out[i] = init op x0 op ... op x(i-1).
template <partitioner P, class It, class Out, class T, class Op>
Out parallel_exclusive_scan(P part, It first, It last, Out out, T init, Op op) {
    CREW_DETAIL_SCAN_ITERATORS(It, Out, "crew::parallel_exclusive_scan");
    if constexpr (random_access_input<It> && random_access_input<Out>) {
        return detail::scan_entry<T>(part, first, last, out, std::optional<T>(std::move(init)), true, op,
                                     "crew::parallel_exclusive_scan");
    } else {
        return out;
    }
}

template <partitioner P, class It, class Out, class T>
Out parallel_exclusive_scan(P part, It first, It last, Out out, T init) {
    return parallel_exclusive_scan(part, first, last, out, std::move(init), std::plus<>());
}

template <class It, class Out, class T, class Op>
    requires(!partitioner<It> && !partitioner<Op>)
Out parallel_exclusive_scan(It first, It last, Out out, T init, Op op) {
    return parallel_exclusive_scan(auto_partition, first, last, out, std::move(init), std::move(op));
}

template <class It, class Out, class T>
    requires(!partitioner<It>)
Out parallel_exclusive_scan(It first, It last, Out out, T init) {
    return parallel_exclusive_scan(auto_partition, first, last, out, std::move(init), std::plus<>());
}

// Partitioner last, as oneTBB writes it.
template <class It, class Out, class T, class Op, partitioner P>
    requires(!partitioner<It>)
Out parallel_exclusive_scan(It first, It last, Out out, T init, Op op, P part) {
    return parallel_exclusive_scan(part, first, last, out, std::move(init), std::move(op));
}

template <class It, class Out, class T, partitioner P>
    requires(!partitioner<It>)
Out parallel_exclusive_scan(It first, It last, Out out, T init, P part) {
    return parallel_exclusive_scan(part, first, last, out, std::move(init), std::plus<>());
}

}  // namespace crew
