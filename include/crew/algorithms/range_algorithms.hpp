// crew/algorithms/range_algorithms.hpp -- oneTBB's range/body algorithms: parallel_for(range, body),
// parallel_reduce(range, identity, body, join), parallel_reduce(range, body) (the imperative form)
// and parallel_deterministic_reduce, over any crew::range (blocked_range, blocked_range2d, ...,
// or a user-defined type).
//
// A range is split (by its splitting constructor) while it is_divisible() and the partitioner
// allows, and the pieces go to crew::join, as the index algorithms' pieces do (partition.hpp):
//
//  - auto_partitioner (the default; also affinity_partitioner): lazy splitting with a budget of
//    about 2 x (pool size) splits that a stolen piece gets back, and demand splitting: a piece
//    whose budget is spent is still split, at most 3 more times, while its worker sees demand
//    (worker::offer_wanted()). Never below !is_divisible().
//  - simple_partitioner (and crew::deterministic): split until !is_divisible(). The split tree
//    then depends only on the range.
//  - static_partitioner: about one piece per worker (pieces are halves, so a pool size that is not
//    a power of two gets pieces of unequal size), then no more splitting.
//  - crew::simple_partition{grain} is refused at compile time: a range's grain is its grainsize.
//
// Partitioners may come last (as in oneTBB) or first (as in crew's other algorithms).
//
// Exceptions from the body, join, a Body's splitting constructor, and the range's is_divisible()
// or splitting constructor cancel the call: pieces not yet started do nothing, and the exception
// reaches the caller after every running piece has finished (the leftmost one wins).
#pragma once

#include <concepts>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "crew/algorithms/blocked_range.hpp"
#include "crew/algorithms/for_each.hpp"
#include "crew/algorithms/partition.hpp"
#include "crew/algorithms/range.hpp"
#include "crew/join.hpp"

namespace crew {

// The imperative reduction body of parallel_reduce(range, body): a splitting constructor
// Body(Body&, crew::split), operator()(const Range&) that accumulates a piece, and join(Body&)
// that appends a body holding the pieces to the right of this one's.
template <class Body, class R>
concept reduction_body = std::constructible_from<Body, Body&, split> && requires(Body& b, const R& r) {
    b(r);
    b.join(b);
};

namespace detail {

// ---- range splitters: whether a divisible range is split (its midpoint is the range's business) ----

// auto_partitioner's: a split budget that stolen pieces get back, and `demand` more splits for a
// piece whose budget is spent, taken while worker::offer_wanted() (a thief asked, or one would find
// nothing here). reset_to is 2 x the pool size, so a pool of one worker never demand-splits.
struct range_adaptive_splitter {
    std::size_t splits = 0;
    std::size_t reset_to = 0;
    unsigned demand = 3;

    bool split(bool migrated, range_adaptive_splitter& right) noexcept {
        if (migrated) {
            splits = splits / 2 > reset_to ? splits / 2 : reset_to;
        } else if (splits == 0) {
            // offer_wanted: a thief asked, or one would find nothing here (partition.hpp's test; an
            // empty deque alone is no demand since forks are private: it split every piece 3 more times).
            if (demand == 0 || reset_to <= 2 || !current_worker->offer_wanted()) return false;
            --demand;
        } else {
            splits /= 2;
        }
        right = *this;
        return true;
    }
};

// static_partitioner's: `chunks` pieces, halved at every split.
struct range_static_splitter {
    std::size_t chunks = 1;

    bool split(bool, range_static_splitter& right) noexcept {
        if (chunks <= 1) return false;
        right.chunks = chunks - chunks / 2;
        chunks /= 2;
        return true;
    }
};

// simple_partitioner's and crew::deterministic's: always (the caller checks is_divisible()).
struct range_simple_splitter {
    bool split(bool, range_simple_splitter&) noexcept { return true; }
};

inline range_adaptive_splitter make_range_splitter(auto_partition_t) noexcept {
    const std::size_t budget = 2 * current_pool_size();
    return range_adaptive_splitter{budget, budget, 3};
}
inline range_static_splitter make_range_splitter(static_partition_t) noexcept {
    return range_static_splitter{current_pool_size()};
}
inline range_simple_splitter make_range_splitter(simple_partitioner) noexcept { return {}; }
inline range_simple_splitter make_range_splitter(deterministic_partition p) {
    // Cold path: a grain would be silently ignored, since the range's grainsize decides.
    if (p.grain() != deterministic_partition::default_grain)
        throw std::invalid_argument(
            "crew: with a range, the range's grainsize sets the leaves; pass crew::deterministic without a grain");
    return {};
}

template <class P>
inline constexpr bool range_partitioner = partitioner<P> && !std::same_as<std::remove_cvref_t<P>, simple_partition>;

#define CREW_DETAIL_RANGE_PARTITIONER(P, who)                                                            \
    static_assert(::crew::detail::range_partitioner<P>,                                                  \
                  who ": with a range, the grain is the range's grainsize; use crew::simple_partitioner()")

// A piece's body call, out of line: the body's loops are then compiled in a small function with
// the registers to themselves. Inlined into the recursive divide function (join's fork and take-back
// around it), g++ 12 kept the stencil of bench/problems/range_for.cpp's pointers on the stack and
// reloaded and re-stored them in every iteration of its inner loop (1.7x oneTBB's time at 2 workers);
// one call per piece costs nothing next to a piece.
template <class Body, class R>
[[gnu::noinline]] decltype(auto) range_leaf_call(Body& body, const R& r) {
    return body(r);
}

template <class R>
bool range_divisible(const R& r, cancel_flag& cancel) {
    return cancel.guard([&] { return static_cast<bool>(r.is_divisible()); });
}

// The upper part of r, split off by r's splitting constructor (no move of R needed).
template <class R>
R range_split_off(R& r, cancel_flag& cancel) {
    return cancel.guard([&]() -> R { return R(r, split{}); });
}

// Calls body(piece) on disjoint pieces covering r, in parallel.
template <class S, class R, class Body>
void range_for_divide(S s, R& r, bool migrated, Body& body, cancel_flag& cancel) {
    if (cancel.cancelled()) return;
    S rs;
    if (range_divisible(r, cancel) && s.split(migrated, rs)) {
        R right = range_split_off(r, cancel);
        worker* creator = current_worker;
        crew::join([&] { range_for_divide(s, r, false, body, cancel); },
                   [&] { range_for_divide(rs, right, current_worker != creator, body, cancel); });
        return;
    }
    cancel.guard([&] { range_leaf_call(body, std::as_const(r)); });
}

// The functional reduction of r: leaf(piece) per piece, join(left, right) of adjacent results,
// always left then right. Empty when cancelled.
template <class T, class S, class R, class Leaf, class Join>
std::optional<T> range_reduce_divide(S s, R& r, bool migrated, Leaf& leaf, Join& join, cancel_flag& cancel) {
    if (cancel.cancelled()) return std::nullopt;
    S rs;
    if (range_divisible(r, cancel) && s.split(migrated, rs)) {
        R right = range_split_off(r, cancel);
        worker* creator = current_worker;
        auto halves =
            crew::join([&] { return range_reduce_divide<T>(s, r, false, leaf, join, cancel); },
                       [&] { return range_reduce_divide<T>(rs, right, current_worker != creator, leaf, join, cancel); });
        if (!halves.first || !halves.second) return std::nullopt;
        return cancel.guard(
            [&] { return std::optional<T>(std::in_place, join(std::move(*halves.first), std::move(*halves.second))); });
    }
    return cancel.guard([&] { return std::optional<T>(std::in_place, range_leaf_call(leaf, std::as_const(r))); });
}

// The imperative reduction of r into body. The right half of a split reuses `body` when it runs
// on the same worker right after the left half (so body sees consecutive pieces in order);
// otherwise (it was stolen, or split_always) it gets Body(body, split), joined into body after
// both halves finished. The splitting constructor may thus run while body's operator() runs on
// another worker, as in oneTBB.
template <class S, class R, class Body>
void range_body_divide(S s, R& r, bool migrated, Body& body, bool split_always, cancel_flag& cancel) {
    if (cancel.cancelled()) return;
    S rs;
    if (range_divisible(r, cancel) && s.split(migrated, rs)) {
        R right = range_split_off(r, cancel);
        worker* creator = current_worker;
        bool left_done = false;  // written and read on the creator's thread only
        std::optional<Body> split_body;
        crew::join(
            [&] {
                range_body_divide(s, r, false, body, split_always, cancel);
                left_done = true;
            },
            [&] {
                const bool stolen = current_worker != creator;
                if (!split_always && !stolen && left_done) {
                    range_body_divide(rs, right, false, body, false, cancel);
                    return;
                }
                cancel.guard([&] { split_body.emplace(body, split{}); });
                range_body_divide(rs, right, stolen, *split_body, split_always, cancel);
            });
        if (split_body && !cancel.cancelled()) cancel.guard([&] { body.join(*split_body); });
        return;
    }
    cancel.guard([&] { range_leaf_call(body, std::as_const(r)); });
}

template <class P, class R, class Body>
void range_for_entry(P part, const R& range, Body& body) {
    if (range.empty()) return;
    on_worker([&] {
        R r = range;
        cancel_flag cancel(true);
        range_for_divide(make_range_splitter(part), r, false, body, cancel);
    });
}

template <class P, class R, class T, class Body, class Join>
T range_reduce_entry(P part, const R& range, T identity, Body& body, Join& join) {
    if (range.empty()) return identity;
    return on_worker([&]() -> T {
        R r = range;
        cancel_flag cancel;
        auto leaf = [&](const R& piece) -> T { return body(piece, std::as_const(identity)); };
        std::optional<T> result = range_reduce_divide<T>(make_range_splitter(part), r, false, leaf, join, cancel);
        // Only a cancelled run yields nothing, and a cancelled run always rethrows before this point.
        return std::move(*result);
    });
}

template <class P, class R, class Body>
void range_body_entry(P part, const R& range, Body& body, bool split_always) {
    if (range.empty()) return;
    on_worker([&] {
        R r = range;
        cancel_flag cancel;
        range_body_divide(make_range_splitter(part), r, false, body, split_always, cancel);
    });
}

template <class P>
inline constexpr bool deterministic_range_partitioner =
    std::same_as<std::remove_cvref_t<P>, simple_partitioner> ||
    std::same_as<std::remove_cvref_t<P>, static_partition_t> ||
    std::same_as<std::remove_cvref_t<P>, deterministic_partition>;

#define CREW_DETAIL_DETERMINISTIC_RANGE_PARTITIONER(P)                                                         \
    static_assert(::crew::detail::deterministic_range_partitioner<P>,                                         \
                  "crew::parallel_deterministic_reduce takes crew::simple_partitioner() (the default), "      \
                  "crew::static_partitioner() or crew::deterministic")

}  // namespace detail

// ---- parallel_for(range, body) ----

// Calls body(piece) (piece: a const R&) on disjoint pieces that together cover `range`, in
// parallel; nothing when the range is empty. Each piece is visited exactly once; body is called
// concurrently from several workers.
template <range R, class Body, partitioner P>
void parallel_for(const R& range, Body&& body, P part) {
    CREW_DETAIL_NOT_DETERMINISTIC(P, "crew::parallel_for");
    CREW_DETAIL_RANGE_PARTITIONER(P, "crew::parallel_for");
    static_assert(std::invocable<Body&, const R&>, "crew::parallel_for(range, body): body(const Range&) must be callable");
    if constexpr (detail::loop_partitioner<P> && detail::range_partitioner<P> && std::invocable<Body&, const R&>)
        detail::range_for_entry(part, range, body);
}

template <range R, class Body>
void parallel_for(const R& range, Body&& body) {
    parallel_for(range, body, auto_partition);
}

template <partitioner P, range R, class Body>
void parallel_for(P part, const R& range, Body&& body) {
    parallel_for(range, body, part);
}

// ---- parallel_reduce(range, identity, body, join) ----

// The functional form: every piece is reduced as body(piece, identity) (a const Range& and a const
// T&), and adjacent results are combined as join(left, right), left then right; the empty range
// gives identity. The result is the join of all pieces' results in range order, so join need only
// be associative (and body(piece, identity) must be the piece's reduction). With
// simple_partitioner() or crew::deterministic the split tree, and so the result, depends only on
// the range: bitwise identical on any pool size. T may be move-only and need not be
// default-constructible.
template <range R, class T, class Body, class Join, partitioner P>
    requires(!partitioner<T>)
T parallel_reduce(const R& range, T identity, Body body, Join join, P part) {
    CREW_DETAIL_RANGE_PARTITIONER(P, "crew::parallel_reduce");
    static_assert(std::invocable<Body&, const R&, const T&>,
                  "crew::parallel_reduce(range, identity, body, join): body(const Range&, const T&) must be callable");
    if constexpr (detail::range_partitioner<P>)
        return detail::range_reduce_entry(part, range, std::move(identity), body, join);
    else
        return identity;
}

template <range R, class T, class Body, class Join>
    requires(!partitioner<T> && !partitioner<Join>)
T parallel_reduce(const R& range, T identity, Body body, Join join) {
    return parallel_reduce(range, std::move(identity), std::move(body), std::move(join), auto_partition);
}

template <partitioner P, range R, class T, class Body, class Join>
T parallel_reduce(P part, const R& range, T identity, Body body, Join join) {
    return parallel_reduce(range, std::move(identity), std::move(body), std::move(join), part);
}

// The same, with a split tree that depends only on the range (simple_partitioner() by default):
// the result is bitwise identical on any pool size and from run to run (oneTBB's
// parallel_deterministic_reduce). With static_partitioner() it depends on the pool size.
template <range R, class T, class Body, class Join, partitioner P>
    requires(!partitioner<T>)
T parallel_deterministic_reduce(const R& range, T identity, Body body, Join join, P part) {
    CREW_DETAIL_DETERMINISTIC_RANGE_PARTITIONER(P);
    return parallel_reduce(range, std::move(identity), std::move(body), std::move(join), part);
}

template <range R, class T, class Body, class Join>
    requires(!partitioner<T> && !partitioner<Join>)
T parallel_deterministic_reduce(const R& range, T identity, Body body, Join join) {
    return parallel_reduce(range, std::move(identity), std::move(body), std::move(join), simple_partitioner());
}

template <partitioner P, range R, class T, class Body, class Join>
T parallel_deterministic_reduce(P part, const R& range, T identity, Body body, Join join) {
    return parallel_deterministic_reduce(range, std::move(identity), std::move(body), std::move(join), part);
}

// ---- parallel_reduce(range, body): the imperative form ----

// Reduces `range` into `body`. As in oneTBB: body(piece) accumulates a piece; one Body object may
// be called for several consecutive pieces, always in left-to-right order; when a piece runs on
// another worker, it gets Body(origin, crew::split) (which may run while origin's operator() runs
// on another worker, so it must not read what operator() writes), and that body is joined back
// with origin.join(split_body) after both have finished, so join always appends the pieces to its
// right. Every piece is accumulated exactly once and the result ends in `body`. join need only be
// associative. With crew::deterministic (or parallel_deterministic_reduce) every split makes a new
// body, so the result depends only on the range.
template <range R, class Body, partitioner P>
    requires reduction_body<Body, R>
void parallel_reduce(const R& range, Body& body, P part) {
    CREW_DETAIL_RANGE_PARTITIONER(P, "crew::parallel_reduce");
    if constexpr (detail::range_partitioner<P>)
        detail::range_body_entry(part, range, body, std::same_as<P, deterministic_partition>);
}

template <range R, class Body>
    requires reduction_body<Body, R>
void parallel_reduce(const R& range, Body& body) {
    parallel_reduce(range, body, auto_partition);
}

template <partitioner P, range R, class Body>
    requires reduction_body<Body, R>
void parallel_reduce(P part, const R& range, Body& body) {
    parallel_reduce(range, body, part);
}

// Every split makes a new body (oneTBB's parallel_deterministic_reduce(range, body)).
template <range R, class Body, partitioner P>
    requires reduction_body<Body, R>
void parallel_deterministic_reduce(const R& range, Body& body, P part) {
    CREW_DETAIL_DETERMINISTIC_RANGE_PARTITIONER(P);
    if constexpr (detail::deterministic_range_partitioner<P>) detail::range_body_entry(part, range, body, true);
}

template <range R, class Body>
    requires reduction_body<Body, R>
void parallel_deterministic_reduce(const R& range, Body& body) {
    parallel_deterministic_reduce(range, body, simple_partitioner());
}

template <partitioner P, range R, class Body>
    requires reduction_body<Body, R>
void parallel_deterministic_reduce(P part, const R& range, Body& body) {
    parallel_deterministic_reduce(range, body, part);
}

}  // namespace crew
