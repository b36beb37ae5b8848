// crew/algorithms/partition.hpp -- partitioners and the divide-and-conquer drivers every parallel
// algorithm is built on.
//
// A range of n elements is split in two and the halves are handed to crew::join, recursively, until a
// partitioner says stop; a leaf then runs serially. The partitioners decide where to stop:
//
//  - auto_partition (the default): lazy binary splitting, as Rayon's adaptive splitter and oneTBB's
//    auto_partitioner do. A range starts with a budget of about 2 x (pool size) splits; every split
//    halves the budget, and a leaf runs once it is used up. When the right half of a join turns out
//    to run on another worker than the one that created it (it was stolen, so some worker was idle),
//    the budget is reset, so only ranges that thieves actually take are split finely. A leaf runs
//    in blocks and splits its rest once more whenever its worker's deque has run empty (demand
//    splitting, below), so uneven work keeps spreading after the budget is spent.
//  - static_partition: one contiguous chunk per worker, no further splitting.
//  - simple_partition{grain}: split at midpoints down to chunks of at most `grain` elements.
//  - deterministic (reductions and scans only): like simple_partition with a fixed grain, so the
//    split tree depends only on n and combining it in a fixed order gives bitwise identical
//    floating-point results on any pool size.
//
// oneTBB's spellings are accepted too, so ported code compiles: crew::auto_partitioner and
// crew::static_partitioner are the types of auto_partition and static_partition,
// crew::affinity_partitioner is auto_partitioner (crew does not replay a previous run's task
// placement), and crew::simple_partitioner (no grain) splits ranges (range_algorithms.hpp) until
// !is_divisible(), and index and iterator ranges down to single elements, as oneTBB's
// simple_partitioner does with its index forms' grainsize of 1 (it is simple_partition{1}).
//
// Cancellation: every algorithm call owns one cancel flag. A leaf whose user code throws sets it
// before rethrowing; leaves and splits that have not started check it and do nothing. join()
// rethrows once both of its sides finished, so the exception reaches the caller after every running
// chunk has stopped.
#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "crew/join.hpp"
#include "crew/pool.hpp"
#include "crew/detail/worker.hpp"

namespace crew {

// ---- partitioners ----

struct auto_partition_t {
    explicit auto_partition_t() = default;
};
// The default: split lazily, further only where thieves take work.
inline constexpr auto_partition_t auto_partition{};

struct static_partition_t {
    explicit static_partition_t() = default;
};
// One contiguous chunk per worker of the pool.
inline constexpr static_partition_t static_partition{};

namespace detail {
// A grain of 0 (or below) is a clear error.
template <std::integral I>
constexpr std::size_t checked_grain(I grain, const char* who) {
    if (grain <= 0) throw std::invalid_argument(std::string(who) + ": the grain must be at least 1");
    return static_cast<std::size_t>(grain);
}
}  // namespace detail

// Split down to chunks of at most `grain` elements. A grain of 0 (or below) throws
// std::invalid_argument.
class simple_partition {
public:
    template <std::integral I>
    constexpr explicit simple_partition(I grain) : grain_(detail::checked_grain(grain, "crew::simple_partition")) {}
    constexpr std::size_t grain() const noexcept { return grain_; }

private:
    std::size_t grain_;
};

// A split tree that depends only on the number of elements (leaves of at most `grain` elements,
// split at midpoints), combined in a fixed order: reductions and scans give bitwise identical
// results on any pool size and from run to run, also for floating point.
class deterministic_partition {
public:
    static constexpr std::size_t default_grain = 8192;
    constexpr deterministic_partition() noexcept = default;
    template <std::integral I>
    constexpr explicit deterministic_partition(I grain)
        : grain_(detail::checked_grain(grain, "crew::deterministic_partition")) {}
    constexpr std::size_t grain() const noexcept { return grain_; }

private:
    std::size_t grain_ = default_grain;
};
inline constexpr deterministic_partition deterministic{};

// ---- oneTBB's spellings ----

// Written `crew::auto_partitioner()` as in oneTBB: the default, auto_partition.
using auto_partitioner = auto_partition_t;
// Written `crew::static_partitioner()`: static_partition.
using static_partitioner = static_partition_t;
// oneTBB's affinity_partitioner replays the previous run's placement of chunks on threads. crew's
// workers have no per-chunk affinity to replay, so it is auto_partitioner: ported code that keeps
// one (`static crew::affinity_partitioner ap;`) and passes it compiles and splits as the default.
using affinity_partitioner = auto_partition_t;

// Written `crew::simple_partitioner()`: split until a range is no longer divisible. For ranges
// (blocked_range, ...) that is down to the range's grainsize; index and iterator forms have no
// grainsize, so there it splits down to single elements: simple_partition{1} (oneTBB's index
// forms likewise build a blocked_range of grainsize 1).
struct simple_partitioner {
    constexpr simple_partitioner() noexcept = default;
};

// Anything that may come first (or, as in oneTBB, last) in an algorithm's argument list to choose
// its partitioning.
template <class P>
concept partitioner = std::same_as<std::remove_cvref_t<P>, auto_partition_t> ||
                      std::same_as<std::remove_cvref_t<P>, static_partition_t> ||
                      std::same_as<std::remove_cvref_t<P>, simple_partition> ||
                      std::same_as<std::remove_cvref_t<P>, simple_partitioner> ||
                      std::same_as<std::remove_cvref_t<P>, deterministic_partition>;

// The iterators crew's algorithms accept: random-access ones (a std::list's are not).
template <class It>
concept random_access_input = std::random_access_iterator<It>;

namespace detail {

// ---- splitters: where a range of `len` elements is cut, if at all ----
//
// split(len, migrated, right) returns the length of the left part (0: do not split, run a leaf),
// leaves *this as the left part's splitter and stores the right part's in `right`. No part is
// ever shorter than min_len (reductions whose accumulator cannot be made from one element need
// leaves of at least two elements, see reduce.hpp).

struct adaptive_splitter {
    std::size_t splits = 0;
    std::size_t reset_to = 0;
    std::size_t min_len = 1;

    std::size_t split(std::size_t len, bool migrated, adaptive_splitter& right) noexcept {
        if (len / 2 < min_len) return 0;
        if (migrated) {
            // Stolen: some worker was idle, so give this piece a fresh budget.
            splits = splits / 2 > reset_to ? splits / 2 : reset_to;
        } else if (splits == 0) {
            return 0;
        } else {
            splits /= 2;
        }
        right = *this;
        return len / 2;
    }
};

struct static_splitter {
    std::size_t chunks = 1;
    std::size_t min_len = 1;

    std::size_t split(std::size_t len, bool, static_splitter& right) noexcept {
        if (chunks <= 1 || len / 2 < min_len) return 0;
        std::size_t left_chunks = chunks / 2;
        // len * left_chunks / chunks without overflow for any len (chunks is small).
        std::size_t left = len / chunks * left_chunks + len % chunks * left_chunks / chunks;
        if (left < min_len) left = min_len;
        if (len - left < min_len) left = len - min_len;
        right = *this;
        right.chunks = chunks - left_chunks;
        chunks = left_chunks;
        return left;
    }
};

struct grain_splitter {
    std::size_t grain = 1;
    std::size_t min_len = 1;

    std::size_t split(std::size_t len, bool, grain_splitter& right) noexcept {
        if (len <= grain || len / 2 < min_len) return 0;
        right = *this;
        return len / 2;
    }
};

inline std::size_t current_pool_size() noexcept {
    worker* w = current_worker;
    return w != nullptr ? w->owner().size() : 1;
}

// The splitter a partitioner stands for, on the current worker's pool.
inline adaptive_splitter make_splitter(auto_partition_t, std::size_t min_len = 1) noexcept {
    std::size_t budget = 2 * current_pool_size();
    return adaptive_splitter{budget, budget, min_len > 0 ? min_len : 1};
}
inline static_splitter make_splitter(static_partition_t, std::size_t min_len = 1) noexcept {
    return static_splitter{current_pool_size(), min_len > 0 ? min_len : 1};
}
inline grain_splitter make_splitter(simple_partition p, std::size_t min_len = 1) noexcept {
    return grain_splitter{p.grain(), min_len > 0 ? min_len : 1};
}
inline grain_splitter make_splitter(deterministic_partition p, std::size_t min_len = 1) noexcept {
    return grain_splitter{p.grain(), min_len > 0 ? min_len : 1};
}
inline grain_splitter make_splitter(simple_partitioner, std::size_t min_len = 1) noexcept {
    return grain_splitter{1, min_len > 0 ? min_len : 1};
}

// auto_partition's smallest piece, for a loop or reduction over n elements: 1/1024 of a worker's
// share (n / (1024 x pool size)), or min_len if larger. Without a floor, the end of a call over cheap
// elements split down to single elements: each worker, its deque empty, split its rest at every
// block, and each stolen piece got a fresh budget, so the two workers of count_if over 20M ints
// passed ~1,300 leaves and ~4 parks per call back and forth in its last ~150 us (session 12,
// bench/count_probe.cpp). The floor keeps the end's pieces at a few microseconds of such work; a
// loop whose cost sits in fewer elements than that (under 1/1024 of the range per worker) wants
// simple_partition{grain} instead.
inline constexpr std::size_t auto_floor_per_worker = 1024;

template <class P>
auto loop_splitter(P p, std::size_t n, std::size_t min_len) noexcept {
    auto s = make_splitter(p, min_len);
    if constexpr (std::same_as<decltype(s), adaptive_splitter>) {
        const std::size_t floor = n / (auto_floor_per_worker * current_pool_size());
        if (floor > s.min_len) s.min_len = floor;
    }
    return s;
}

// One per algorithm call: set when user code threw; unstarted chunks then do nothing. A loop's flag
// (follow_group) also reads as set once the task_group the caller runs in is canceled, so a loop in
// a canceled group starts no new chunks; reductions, scans and multi-pass algorithms run every
// chunk, since their result (or the next pass) needs all of them.
class cancel_flag {
public:
    cancel_flag() = default;
    explicit cancel_flag(bool follow_group) noexcept : follow_group_(follow_group) {}

    // relaxed: only a hint to skip work; the exception itself travels through join's result cells.
    bool cancelled() const noexcept {
        return flag_.load(std::memory_order_relaxed) || (follow_group_ && detail::cancellation_requested());
    }
    void cancel() noexcept { flag_.store(true, std::memory_order_relaxed); }

    // Runs fn(); if it throws, cancels the rest of the call and rethrows.
    template <class F>
    decltype(auto) guard(F&& fn) {
        try {
            return std::forward<F>(fn)();
        } catch (...) {
            cancel();
            throw;
        }
    }

private:
    std::atomic<bool> flag_{false};
    bool follow_group_ = false;
};

// ---- the drivers ----

// Demand splitting, for auto_partition's leaves: a leaf runs in blocks of about an eighth of its
// length, and after each block, if a thief would find nothing here or has asked
// (worker::offer_wanted), the rest is split once and its right half is forked. Uneven work thus keeps
// spreading even after the split budget is spent, as oneTBB's auto partitioner keeps splitting
// while it sees demand; when no one steals, it costs a few joins per leaf.
inline bool offer_work_wanted(std::size_t rest, const adaptive_splitter& s) noexcept {
    // reset_to is 2 x the pool size: a pool of one worker has no thieves to offer work to.
    return s.reset_to > 2 && rest >= 2 * s.min_len && current_worker->offer_wanted();
}

inline std::size_t demand_block(std::size_t len, const adaptive_splitter& s) noexcept {
    return len / 8 > s.min_len ? len / 8 : s.min_len;
}

// Where the block starting at b ends: a rest shorter than min_len joins the block.
inline std::size_t demand_block_end(std::size_t b, std::size_t e, std::size_t block,
                                    const adaptive_splitter& s) noexcept {
    return e - b >= block + s.min_len ? b + block : e;
}

template <class Splitter, class Leaf>
void for_divide(Splitter s, std::size_t b, std::size_t e, bool migrated, Leaf& leaf, cancel_flag& cancel);

template <class Leaf>
void for_leaf(adaptive_splitter s, std::size_t b, std::size_t e, Leaf& leaf, cancel_flag& cancel) {
    const std::size_t block = demand_block(e - b, s);
    for (;;) {
        const std::size_t stop = demand_block_end(b, e, block, s);
        cancel.guard([&] { leaf(b, stop); });
        b = stop;
        if (b == e || cancel.cancelled()) return;
        if (offer_work_wanted(e - b, s)) {
            s.splits = 1;  // exactly one split of the rest
            for_divide(s, b, e, false, leaf, cancel);
            return;
        }
    }
}

// Calls leaf(b, e) on disjoint pieces covering [b, e), in parallel.
template <class Splitter, class Leaf>
void for_divide(Splitter s, std::size_t b, std::size_t e, bool migrated, Leaf& leaf, cancel_flag& cancel) {
    if (cancel.cancelled()) return;
    Splitter rs;
    if (std::size_t l = s.split(e - b, migrated, rs); l != 0) {
        worker* creator = current_worker;
        std::size_t m = b + l;
        crew::join([&] { for_divide(s, b, m, false, leaf, cancel); },
                   [&] { for_divide(rs, m, e, current_worker != creator, leaf, cancel); });
        return;
    }
    if constexpr (std::same_as<Splitter, adaptive_splitter>)
        for_leaf(s, b, e, leaf, cancel);
    else
        cancel.guard([&] { leaf(b, e); });
}

template <class T, class Splitter, class Leaf, class Combine>
std::optional<T> reduce_divide(Splitter s, std::size_t b, std::size_t e, bool migrated, Leaf& leaf,
                               Combine& combine, cancel_flag& cancel);

// As for_leaf, for reductions: the blocks' results are combined left to right, and a split-off
// rest is combined after them.
template <class T, class Leaf, class Combine>
std::optional<T> reduce_leaf(adaptive_splitter s, std::size_t b, std::size_t e, Leaf& leaf, Combine& combine,
                             cancel_flag& cancel) {
    const std::size_t block = demand_block(e - b, s);
    std::size_t stop = demand_block_end(b, e, block, s);
    std::optional<T> acc = cancel.guard([&] { return std::optional<T>(std::in_place, leaf(b, stop)); });
    for (b = stop; b != e; b = stop) {
        if (cancel.cancelled()) return std::nullopt;
        if (offer_work_wanted(e - b, s)) {
            s.splits = 1;  // exactly one split of the rest
            std::optional<T> rest = reduce_divide<T>(s, b, e, false, leaf, combine, cancel);
            if (!rest) return std::nullopt;
            return cancel.guard([&] { return std::optional<T>(std::in_place, combine(std::move(*acc), std::move(*rest))); });
        }
        stop = demand_block_end(b, e, block, s);
        cancel.guard([&] { *acc = combine(std::move(*acc), leaf(b, stop)); });
    }
    return acc;
}

// Reduces [b, e) (non-empty): leaf(b, e) folds a piece, combine(left, right) joins two adjacent
// results, always left then right. Empty when cancelled.
template <class T, class Splitter, class Leaf, class Combine>
std::optional<T> reduce_divide(Splitter s, std::size_t b, std::size_t e, bool migrated, Leaf& leaf,
                               Combine& combine, cancel_flag& cancel) {
    if (cancel.cancelled()) return std::nullopt;
    Splitter rs;
    if (std::size_t l = s.split(e - b, migrated, rs); l != 0) {
        worker* creator = current_worker;
        std::size_t m = b + l;
        auto halves = crew::join(
            [&] { return reduce_divide<T>(s, b, m, false, leaf, combine, cancel); },
            [&] { return reduce_divide<T>(rs, m, e, current_worker != creator, leaf, combine, cancel); });
        std::optional<T>& x = halves.first;
        std::optional<T>& y = halves.second;
        if (!x || !y) return std::nullopt;
        return cancel.guard([&] { return std::optional<T>(std::in_place, combine(std::move(*x), std::move(*y))); });
    }
    if constexpr (std::same_as<Splitter, adaptive_splitter>)
        return reduce_leaf<T>(s, b, e, leaf, combine, cancel);
    else
        return cancel.guard([&] { return std::optional<T>(std::in_place, leaf(b, e)); });
}

// Runs leaf over [0, n) in parallel with partitioner p: a loop, which starts no new chunk once the
// caller's task_group is canceled. Must be called on a worker.
template <class P, class Leaf>
void parallel_leaves(P p, std::size_t n, Leaf&& leaf, std::size_t min_len = 1) {
    if (n == 0) return;
    cancel_flag cancel(true);
    for_divide(loop_splitter(p, n, min_len), 0, n, false, leaf, cancel);
}

// As parallel_leaves, but every leaf runs (unless user code throws): for a pass of a multi-pass
// algorithm (scans, copy_if, partition), whose next pass reads what every leaf wrote.
template <class P, class Leaf>
void parallel_leaves_complete(P p, std::size_t n, Leaf&& leaf, std::size_t min_len = 1) {
    if (n == 0) return;
    cancel_flag cancel;
    for_divide(loop_splitter(p, n, min_len), 0, n, false, leaf, cancel);
}

// Reduces [0, n) (n >= min_len) with partitioner p, in leaves of at least min_len elements. Must be
// called on a worker.
template <class T, class P, class Leaf, class Combine>
T parallel_fold(P p, std::size_t n, Leaf&& leaf, Combine&& combine, std::size_t min_len = 1) {
    cancel_flag cancel;
    std::optional<T> r = reduce_divide<T>(loop_splitter(p, n, min_len), 0, n, false, leaf, combine, cancel);
    // Only a cancelled run yields nothing, and a cancelled run always rethrows before this point.
    return std::move(*r);
}

// ---- index arithmetic ----
//
// Index types may be any integer type but bool: char, wchar_t, char8_t/16/32_t, short, ... Their
// arithmetic is done in index_unsigned_t, the unsigned type of the index's width *after* integer
// promotion: short - short is an int (so the difference of two uint16_t may be negative), and
// int arithmetic across the whole range of int overflows. Unsigned arithmetic wraps, and the
// conversions back to the index type are modular (C++20), so no step overflows.

template <class I>
inline constexpr bool index_integer = std::integral<I> && !std::same_as<std::remove_cv_t<I>, bool>;

template <class I>
using index_unsigned_t = std::make_unsigned_t<decltype(+std::declval<I>())>;

// The standard integer type with I's range: std::in_range refuses the character types.
template <class I>
using standard_integer_t = std::conditional_t<std::is_signed_v<I>, std::make_signed_t<I>, std::make_unsigned_t<I>>;

// Whether the integer x is a value of the index type C.
template <class C, class X>
constexpr bool index_fits(X x) noexcept {
    return std::in_range<standard_integer_t<C>>(static_cast<standard_integer_t<X>>(x));
}

// The number of elements in [first, last): for integers, checks first <= last.
template <class I>
std::size_t checked_count(I first, I last, const char* who) {
    if constexpr (std::integral<I>) {
        if (first > last) throw std::invalid_argument(std::string(who) + ": first > last");
        using U = index_unsigned_t<I>;
        return static_cast<std::size_t>(static_cast<U>(static_cast<U>(last) - static_cast<U>(first)));
    } else {
        auto d = last - first;
        if (d < 0) throw std::invalid_argument(std::string(who) + ": last is before first");
        return static_cast<std::size_t>(d);
    }
}

// The index type of an index range [I, J): their common type, made signed when exactly one of them
// is signed (so parallel_for(-1, v.size(), f) visits -1).
template <class I, class J>
using index_type = std::conditional_t<std::is_signed_v<I> != std::is_signed_v<J>,
                                      std::make_signed_t<std::common_type_t<I, J>>, std::common_type_t<I, J>>;

// The i-th element position: first + i, for integers and iterators alike. For integers, i is at
// most the count of a valid range, so first + i is a value of I; only the way there wraps.
template <class I>
constexpr I advance_by(I first, std::size_t i) noexcept {
    if constexpr (std::integral<I>)
        return static_cast<I>(static_cast<index_unsigned_t<I>>(static_cast<index_unsigned_t<I>>(first) +
                                                                static_cast<index_unsigned_t<I>>(i)));
    else
        return first + static_cast<std::iter_difference_t<I>>(i);
}

// The value at a position: the index itself, or *it.
template <class I>
constexpr decltype(auto) element_at(I pos) {
    if constexpr (std::integral<I>)
        return pos;
    else
        return *pos;
}

// The transform of parallel_reduce and of scans' block sums: lvalue elements by reference,
// prvalues (indices) by value, so that a reference to the result never outlives a temporary.
struct pass_element {
    template <class X>
    constexpr X operator()(X&& x) const noexcept(std::is_nothrow_constructible_v<X, X&&>) {
        return std::forward<X>(x);
    }
};

// Copy-initialises a T from x: the implicit conversion, never an explicit constructor (which may
// mean something else: std::vector<int>(3) is three zeros, not {3}).
template <class T, class U>
T implicit_as(U&& x) {
    return std::forward<U>(x);
}

// Run `f` on a worker: in place on one, else on the default pool (as Rayon's install does).
template <class F>
decltype(auto) on_worker(F&& f) {
    if (current_worker != nullptr) [[likely]]
        return f();
    return default_pool().run(f);
}

}  // namespace detail

}  // namespace crew
