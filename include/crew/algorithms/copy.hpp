// crew/algorithms/copy.hpp -- parallel_fill, parallel_generate, parallel_copy_if, parallel_merge,
// parallel_partition and parallel_stable_partition.
//
// copy_if and the partitions make two parallel passes over blocks (scan.hpp's scan_block, rounded
// up to a multiple of 64 elements, and for_each_block). The first pass evaluates pred once per
// element, keeps its answer in a bit per element (leaf_kernels.hpp's mark_kernel, in a scratch
// reused across calls) and counts each block's matches; a serial prefix over the (at most a few hundred) block
// counts gives every block its output position; the second pass copies (copy_if) or moves (the
// partitions: an element must not move before every answer is known) each block's elements. The results equal the std::
// algorithms' exactly, in order. merge splits the longer run at its middle and binary-searches the
// split point in the other run, as parallel_sort's merges do.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "crew/algorithms/leaf_kernels.hpp"
#include "crew/algorithms/partition.hpp"
#include "crew/algorithms/scan.hpp"
#include "crew/algorithms/std_support.hpp"
#include "crew/errors.hpp"

namespace crew {

// std::fill: assigns value to every element.
template <partitioner P, class It, class T>
void parallel_fill(P part, It first, It last, const T& value) {
    CREW_DETAIL_RANDOM_ACCESS(It, "crew::parallel_fill");
    CREW_DETAIL_LOOP_PARTITIONER(P, "crew::parallel_fill");
    if constexpr (random_access_input<It>) {
        const std::size_t n = detail::checked_count(first, last, "crew::parallel_fill");
        if (n == 0) return;
        detail::on_worker([&] {
            detail::parallel_leaves(part, n, [&](std::size_t b, std::size_t e) {
                std::fill(detail::advance_by(first, b), detail::advance_by(first, e), value);
            });
        });
    }
}

template <class It, class T>
    requires(!partitioner<It>)
void parallel_fill(It first, It last, const T& value) {
    parallel_fill(auto_partition, first, last, value);
}

// std::generate: assigns gen() to every element. gen is called CONCURRENTLY from several workers
// (one shared object, by reference), in no particular order: it must be safe to call so (e.g. a
// counter needs an atomic, a random engine one per thread).
template <partitioner P, class It, class Gen>
void parallel_generate(P part, It first, It last, Gen gen) {
    CREW_DETAIL_RANDOM_ACCESS(It, "crew::parallel_generate");
    CREW_DETAIL_LOOP_PARTITIONER(P, "crew::parallel_generate");
    if constexpr (random_access_input<It>) {
        const std::size_t n = detail::checked_count(first, last, "crew::parallel_generate");
        if (n == 0) return;
        detail::on_worker([&] {
            detail::parallel_leaves(part, n, [&](std::size_t b, std::size_t e) {
                It it = detail::advance_by(first, b);
                for (std::size_t i = b; i != e; ++i, ++it) *it = gen();
            });
        });
    }
}

template <class It, class Gen>
    requires(!partitioner<It>)
void parallel_generate(It first, It last, Gen gen) {
    parallel_generate(auto_partition, first, last, std::move(gen));
}

namespace detail {


// The first pass of copy_if and the partitions: bit i of keep = pred(x_i), and per block the number
// of kept elements, as offsets: offsets[k] = kept elements in blocks before k (offsets[blocks] =
// all). Blocks are whole words of answers (multiples of 64 elements), so no two blocks write one word.
struct kept_blocks {
    std::size_t block = 1, blocks = 0;
    mark_scratch keep;
    std::vector<std::size_t> offsets;

    kept_blocks(std::size_t block_len, std::size_t n)
        : block((block_len + mark_word - 1) / mark_word * mark_word),
          blocks((n + block - 1) / block),
          keep((n + mark_word - 1) / mark_word),
          offsets(blocks + 1, 0) {}
    std::size_t begin(std::size_t k) const noexcept { return k * block; }
    std::size_t end(std::size_t k, std::size_t n) const noexcept { return k + 1 == blocks ? n : (k + 1) * block; }
    bool kept(std::size_t i) const noexcept { return marked(keep.get(), i); }
};

template <class P, class It, class Pred>
void mark_kept(kept_blocks& kb, P part, It first, std::size_t n, Pred& pred) {
    for_each_block(part, kb.blocks, [&](std::size_t k) {
        const std::size_t b = kb.begin(k);
        kb.offsets[k + 1] = mark_kernel(advance_by(first, b), kb.end(k, n) - b, kb.keep.get() + b / mark_word, pred);
    });
    for (std::size_t k = 0; k != kb.blocks; ++k) kb.offsets[k + 1] += kb.offsets[k];
}

// Two passes over blocks: mark_kept (pred once per element, a bit per answer, each block's output
// position), then each block copies its kept elements to its position.
template <class P, class It, class Out, class Pred>
Out copy_if_on_worker(P part, It first, std::size_t n, Out out, Pred& pred) {
    if (n <= scan_block(part, n)) return std::copy_if(first, advance_by(first, n), out, std::ref(pred));  // one block
    kept_blocks kb(scan_block(part, n), n);
    mark_kept(kb, part, first, n, pred);
    for_each_block(part, kb.blocks, [&](std::size_t k) {
        It it = advance_by(first, kb.begin(k));
        Out o = advance_by(out, kb.offsets[k]);
        if constexpr (branchless_copyable<It, Out>) {
            compact_kernel(std::to_address(it), kb.keep.get() + kb.begin(k) / mark_word, std::to_address(o),
                           kb.offsets[k + 1] - kb.offsets[k]);
        } else {
            for (std::size_t i = kb.begin(k), e = kb.end(k, n); i != e; ++i, ++it)
                if (kb.kept(i)) {
                    *o = *it;
                    ++o;
                }
        }
    });
    return advance_by(out, kb.offsets[kb.blocks]);
}

}  // namespace detail

// std::copy_if: copies the elements x with pred(x) to out, in order; returns the end of the output.
// pred is called exactly once per element (as std::copy_if with a policy), its answers kept in a
// bit per element until the copy pass. The output must not overlap the input.
template <partitioner P, class It, class Out, class Pred>
Out parallel_copy_if(P part, It first, It last, Out out, Pred pred) {
    static_assert(random_access_input<It> && random_access_input<Out>,
                  "crew::parallel_copy_if needs random-access iterators for its input and its output");
    CREW_DETAIL_LOOP_PARTITIONER(P, "crew::parallel_copy_if");
    if constexpr (random_access_input<It> && random_access_input<Out>) {
        const std::size_t n = detail::checked_count(first, last, "crew::parallel_copy_if");
        if (n == 0) return out;
        return detail::on_worker([&]() -> Out { return detail::copy_if_on_worker(part, first, n, out, pred); });
    } else {
        return out;
    }
}

template <class It, class Out, class Pred>
    requires(!partitioner<It>)
Out parallel_copy_if(It first, It last, Out out, Pred pred) {
    return parallel_copy_if(auto_partition, first, last, out, std::move(pred));
}

// ---- merge ----

namespace detail {

// Copies the merge of sorted [x0, x1) and [y0, y1) to out, as std::merge: on ties the x element
// comes first. Like std::merge, it only calls comp(y, x).
template <class I1, class I2, class Out, class Comp>
void merge_divide(I1 x0, I1 x1, I2 y0, I2 y1, Out out, Comp& comp, std::size_t grain, cancel_flag& cancel) {
    if (cancel.cancelled()) return;
    const auto nx = static_cast<std::size_t>(x1 - x0), ny = static_cast<std::size_t>(y1 - y0);
    // Two elements are merged serially: splitting one-and-one would make no progress.
    if (nx + ny <= grain || nx + ny <= 2 || nx == 0 || ny == 0) {
        cancel.guard([&] { std::merge(x0, x1, y0, y1, out, std::ref(comp)); });
        return;
    }
    I1 xm;
    I2 ym;
    cancel.guard([&] {
        if (nx >= ny) {
            // x's middle, and the y elements strictly less than it (equal ones come after it).
            xm = advance_by(x0, nx / 2);
            ym = std::lower_bound(y0, y1, *xm, [&](const auto& y, const auto& x) -> bool { return comp(y, x); });
        } else {
            // y's middle, and the x elements not greater than it (equal ones come before it).
            ym = advance_by(y0, ny / 2);
            xm = std::upper_bound(x0, x1, *ym, [&](const auto& y, const auto& x) -> bool { return comp(y, x); });
        }
    });
    Out out_m = advance_by(out, static_cast<std::size_t>((xm - x0) + (ym - y0)));
    crew::join([&] { merge_divide(x0, xm, y0, ym, out, comp, grain, cancel); },
               [&] { merge_divide(xm, x1, ym, y1, out_m, comp, grain, cancel); });
}

template <class P>
std::size_t merge_grain(P part, std::size_t n) {
    if constexpr (std::same_as<P, simple_partition>) {
        return part.grain();
    } else {
        const std::size_t g = n / (4 * current_pool_size());
        return g > 4096 ? g : 4096;
    }
}

}  // namespace detail

// std::merge: the stable merge of two sorted ranges into out (ties take the first range's element
// first); returns the end of the output. The output must not overlap the inputs.
template <partitioner P, class I1, class I2, class Out, class Comp>
Out parallel_merge(P part, I1 first1, I1 last1, I2 first2, I2 last2, Out out, Comp comp) {
    static_assert(random_access_input<I1> && random_access_input<I2> && random_access_input<Out>,
                  "crew::parallel_merge needs random-access iterators for its inputs and its output");
    CREW_DETAIL_LOOP_PARTITIONER(P, "crew::parallel_merge");
    if constexpr (random_access_input<I1> && random_access_input<I2> && random_access_input<Out>) {
        const std::size_t n = detail::checked_count(first1, last1, "crew::parallel_merge") +
                              detail::checked_count(first2, last2, "crew::parallel_merge");
        if (n == 0) return out;
        detail::on_worker([&] {
            detail::cancel_flag cancel;
            detail::merge_divide(first1, last1, first2, last2, out, comp, detail::merge_grain(part, n), cancel);
        });
        return detail::advance_by(out, n);
    } else {
        return out;
    }
}

template <partitioner P, class I1, class I2, class Out>
Out parallel_merge(P part, I1 first1, I1 last1, I2 first2, I2 last2, Out out) {
    return parallel_merge(part, first1, last1, first2, last2, out, std::less<>());
}

template <class I1, class I2, class Out, class Comp>
    requires(!partitioner<I1> && !partitioner<Comp>)
Out parallel_merge(I1 first1, I1 last1, I2 first2, I2 last2, Out out, Comp comp) {
    return parallel_merge(auto_partition, first1, last1, first2, last2, out, std::move(comp));
}

template <class I1, class I2, class Out>
    requires(!partitioner<I1>)
Out parallel_merge(I1 first1, I1 last1, I2 first2, I2 last2, Out out) {
    return parallel_merge(auto_partition, first1, last1, first2, last2, out, std::less<>());
}

// ---- partitions ----

namespace detail {

// Raw storage for n elements of T, or none when the allocation fails.
template <class T>
struct raw_buffer {
    T* data;
    explicit raw_buffer(std::size_t n)
        : data(static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{alignof(T)}, std::nothrow))) {}
    raw_buffer(const raw_buffer&) = delete;
    raw_buffer& operator=(const raw_buffer&) = delete;
    ~raw_buffer() { ::operator delete(data, std::align_val_t{alignof(T)}); }
};

// Elements whose moves cannot throw are partitioned in parallel through a buffer; others (and a
// failed allocation) fall back to std::stable_partition.
template <class T>
inline constexpr bool parallel_partitionable = std::is_nothrow_move_constructible_v<T> &&
                                               std::is_nothrow_move_assignable_v<T> &&
                                               std::is_nothrow_destructible_v<T>;

// After mark_kept: moves the kept elements (in order) and then the others (in order) into buf, and
// back into the range. Nothing here throws.
template <class P, class It>
void move_partitioned(P part, It first, std::size_t n, const kept_blocks& kb, std::iter_value_t<It>* buf) {
    using T = std::iter_value_t<It>;
    const std::size_t kept = kb.offsets[kb.blocks];
    for_each_block(part, kb.blocks, [&](std::size_t k) {
        std::size_t t = kb.offsets[k], f = kept + kb.begin(k) - kb.offsets[k];
        It it = advance_by(first, kb.begin(k));
        for (std::size_t i = kb.begin(k), e = kb.end(k, n); i != e; ++i, ++it)
            ::new (static_cast<void*>(buf + (kb.kept(i) ? t++ : f++))) T(std::move(*it));
    });
    for_each_block(part, kb.blocks, [&](std::size_t k) {
        It it = advance_by(first, kb.begin(k));
        for (std::size_t i = kb.begin(k), e = kb.end(k, n); i != e; ++i, ++it) {
            *it = std::move(buf[i]);
            buf[i].~T();
        }
    });
}

template <class P, class It, class Pred>
It stable_partition_on_worker(P part, It first, It last, std::size_t n, Pred& pred) {
    using T = std::iter_value_t<It>;
    if constexpr (parallel_partitionable<T>) {
        if (n > scan_block(part, n)) {
            raw_buffer<T> buf(n);
            if (buf.data != nullptr) {
                kept_blocks kb(scan_block(part, n), n);
                mark_kept(kb, part, first, n, pred);  // may throw: the range is untouched
                move_partitioned(part, first, n, kb, buf.data);
                return advance_by(first, kb.offsets[kb.blocks]);
            }
        }
    }
    return std::stable_partition(first, last, std::ref(pred));
}

}  // namespace detail

// std::stable_partition: moves the elements x with pred(x) before the others, keeping the input
// order within both groups; returns the partition point (the first element without pred). pred is
// called once per element, before any element moves, so a throwing pred leaves the range as it
// was. Uses a buffer of last - first elements; elements whose moves may throw (and a failed
// allocation) are partitioned serially by std::stable_partition.
template <partitioner P, class It, class Pred>
It parallel_stable_partition(P part, It first, It last, Pred pred) {
    CREW_DETAIL_RANDOM_ACCESS(It, "crew::parallel_stable_partition");
    CREW_DETAIL_LOOP_PARTITIONER(P, "crew::parallel_stable_partition");
    if constexpr (random_access_input<It>) {
        const std::size_t n = detail::checked_count(first, last, "crew::parallel_stable_partition");
        if (n == 0) return first;
        return detail::on_worker([&]() -> It { return detail::stable_partition_on_worker(part, first, last, n, pred); });
    } else {
        return first;
    }
}

template <class It, class Pred>
    requires(!partitioner<It>)
It parallel_stable_partition(It first, It last, Pred pred) {
    return parallel_stable_partition(auto_partition, first, last, std::move(pred));
}

// std::partition: the same result as parallel_stable_partition (a stable partition is a valid
// partition; std::partition makes no promise about the order within the groups).
template <partitioner P, class It, class Pred>
It parallel_partition(P part, It first, It last, Pred pred) {
    return parallel_stable_partition(part, first, last, std::move(pred));
}

template <class It, class Pred>
    requires(!partitioner<It>)
It parallel_partition(It first, It last, Pred pred) {
    return parallel_stable_partition(auto_partition, first, last, std::move(pred));
}

// The partitioner as the last argument, as oneTBB places it.
CREW_DETAIL_PARTITIONER_LAST(parallel_fill)
CREW_DETAIL_PARTITIONER_LAST(parallel_generate)
CREW_DETAIL_PARTITIONER_LAST(parallel_copy_if)
CREW_DETAIL_PARTITIONER_LAST(parallel_merge)
CREW_DETAIL_PARTITIONER_LAST(parallel_partition)
CREW_DETAIL_PARTITIONER_LAST(parallel_stable_partition)

}  // namespace crew
