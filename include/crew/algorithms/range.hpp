// crew/algorithms/range.hpp -- the splitting-range model oneTBB users write their loops in.
//
// A *range* is a value that names a piece of work and can cut itself in two: oneTBB's Range
// requirements, which crew::blocked_range, crew::blocked_range2d and any user-defined type with the
// same members satisfy. The range algorithms (parallel_for(range, body), parallel_reduce(range, ...))
// split a range while it is_divisible() and the partitioner allows, and hand the pieces to a body.
#pragma once

#include <concepts>
#include <type_traits>

namespace crew {

// The tag of a splitting constructor: `R(R& r, crew::split)` moves the second part of r into the
// new range and leaves the first part in r (oneTBB's tbb::split).
struct split {
    explicit split() = default;
};

// A range in oneTBB's sense: copyable, can say whether it is empty and whether it can be cut, and
// has a splitting constructor. std containers are not ranges in this sense (they cannot split).
template <class R>
concept range = std::copy_constructible<R> && std::destructible<R> &&
                std::constructible_from<R, R&, split> && requires(const R& r) {
                    { r.empty() } -> std::convertible_to<bool>;
                    { r.is_divisible() } -> std::convertible_to<bool>;
                };

}  // namespace crew
