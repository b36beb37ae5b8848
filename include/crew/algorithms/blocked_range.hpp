// crew/algorithms/blocked_range.hpp -- crew::blocked_range, blocked_range2d and blocked_range3d:
// oneTBB's splittable ranges of integers or random-access iterators (see range.hpp).
//
// A blocked_range [first, last) with grainsize g is divisible while it holds more than g elements,
// and splits at its midpoint: the splitting constructor takes the upper half and leaves the lower
// half in the original. The 2d and 3d ranges are products of blocked_ranges and split the side
// that is longest relative to its grain, as oneTBB's do.
//
// Differences from oneTBB, all about bad input (oneTBB asserts in debug builds and is undefined
// otherwise): a grainsize below 1 and first > last throw std::invalid_argument, as crew's other
// algorithms do. Integer ranges are exact over the type's whole range (size() and the midpoint are
// computed in the unsigned type of the index, so blocked_range<int>(INT_MIN, INT_MAX) works).
// There is no proportional-split constructor (crew's partitioners split at midpoints).
#pragma once

#include <concepts>
#include <cstddef>
#include <iterator>
#include <stdexcept>
#include <type_traits>

#include "crew/algorithms/partition.hpp"
#include "crew/algorithms/range.hpp"

namespace crew {

namespace detail {

// The values a blocked_range walks: integers (not bool) and random-access iterators.
template <class V>
inline constexpr bool blocked_value = index_integer<V> || std::random_access_iterator<V>;

}  // namespace detail

template <class Value>
class blocked_range {
    static_assert(detail::blocked_value<Value>,
                  "crew::blocked_range walks integers (not bool) or random-access iterators");

public:
    using value_type = Value;
    using const_iterator = Value;
    using size_type = std::size_t;

    // [first, last) with grainsize 1. Throws std::invalid_argument when first > last.
    blocked_range(Value first, Value last) : blocked_range(first, last, size_type{1}) {}

    // [first, last) with the given grainsize. Throws std::invalid_argument when first > last or
    // grainsize < 1.
    template <std::integral G>
    blocked_range(Value first, Value last, G grainsize)
        : end_(last), begin_(first), grain_(detail::checked_grain(grainsize, "crew::blocked_range")) {
        (void)detail::checked_count(first, last, "crew::blocked_range");
    }

    // Splits r at its midpoint: *this takes the upper half, r keeps the lower half. r should be
    // divisible (as in oneTBB); splitting a one-element range leaves *this empty.
    blocked_range(blocked_range& r, split) : end_(r.end_), begin_(r.midpoint()), grain_(r.grain_) { r.end_ = begin_; }

    const_iterator begin() const noexcept { return begin_; }
    const_iterator end() const noexcept { return end_; }
    size_type size() const noexcept { return count(begin_, end_); }
    bool empty() const noexcept { return !(begin_ < end_); }
    size_type grainsize() const noexcept { return grain_; }
    // More than grainsize() elements.
    bool is_divisible() const noexcept { return grain_ < size(); }

private:
    static size_type count(Value b, Value e) noexcept {
        if constexpr (std::integral<Value>) {
            using U = detail::index_unsigned_t<Value>;
            return static_cast<size_type>(static_cast<U>(static_cast<U>(e) - static_cast<U>(b)));
        } else {
            return static_cast<size_type>(e - b);
        }
    }
    Value midpoint() const noexcept { return detail::advance_by(begin_, size() / 2); }

    Value end_;
    Value begin_;
    size_type grain_;
};

namespace detail {

// Whether a split should cut `a` rather than `b`: a is at least as long as b relative to their
// grains (oneTBB's rule, in doubles so that the products cannot overflow).
template <class A, class B>
bool split_first_side(const A& a, const B& b) noexcept {
    return !(static_cast<double>(a.size()) * static_cast<double>(b.grainsize()) <
             static_cast<double>(b.size()) * static_cast<double>(a.grainsize()));
}

}  // namespace detail

// rows x cols. Divisible while either side is; a split cuts the side that is longer relative to
// its grain (the rows on a tie), at its midpoint.
template <class RowValue, class ColValue = RowValue>
class blocked_range2d {
public:
    using row_range_type = blocked_range<RowValue>;
    using col_range_type = blocked_range<ColValue>;

    template <std::integral RG, std::integral CG>
    blocked_range2d(RowValue row_begin, RowValue row_end, RG row_grainsize, ColValue col_begin, ColValue col_end,
                    CG col_grainsize)
        : rows_(row_begin, row_end, row_grainsize), cols_(col_begin, col_end, col_grainsize) {}

    blocked_range2d(RowValue row_begin, RowValue row_end, ColValue col_begin, ColValue col_end)
        : rows_(row_begin, row_end), cols_(col_begin, col_end) {}

    blocked_range2d(blocked_range2d& r, split) : rows_(r.rows_), cols_(r.cols_) {
        if (detail::split_first_side(rows_, cols_))
            rows_ = row_range_type(r.rows_, split{});
        else
            cols_ = col_range_type(r.cols_, split{});
    }

    bool empty() const noexcept { return rows_.empty() || cols_.empty(); }
    bool is_divisible() const noexcept { return rows_.is_divisible() || cols_.is_divisible(); }
    const row_range_type& rows() const noexcept { return rows_; }
    const col_range_type& cols() const noexcept { return cols_; }

private:
    row_range_type rows_;
    col_range_type cols_;
};

// pages x rows x cols, split as oneTBB's blocked_range3d: the side longest relative to its grain.
template <class PageValue, class RowValue = PageValue, class ColValue = RowValue>
class blocked_range3d {
public:
    using page_range_type = blocked_range<PageValue>;
    using row_range_type = blocked_range<RowValue>;
    using col_range_type = blocked_range<ColValue>;

    template <std::integral PG, std::integral RG, std::integral CG>
    blocked_range3d(PageValue page_begin, PageValue page_end, PG page_grainsize, RowValue row_begin, RowValue row_end,
                    RG row_grainsize, ColValue col_begin, ColValue col_end, CG col_grainsize)
        : pages_(page_begin, page_end, page_grainsize),
          rows_(row_begin, row_end, row_grainsize),
          cols_(col_begin, col_end, col_grainsize) {}

    blocked_range3d(PageValue page_begin, PageValue page_end, RowValue row_begin, RowValue row_end,
                    ColValue col_begin, ColValue col_end)
        : pages_(page_begin, page_end), rows_(row_begin, row_end), cols_(col_begin, col_end) {}

    blocked_range3d(blocked_range3d& r, split) : pages_(r.pages_), rows_(r.rows_), cols_(r.cols_) {
        const bool pages_over_rows = detail::split_first_side(pages_, rows_);
        if (!pages_over_rows && detail::split_first_side(rows_, cols_))
            rows_ = row_range_type(r.rows_, split{});
        else if (pages_over_rows && detail::split_first_side(pages_, cols_))
            pages_ = page_range_type(r.pages_, split{});
        else
            cols_ = col_range_type(r.cols_, split{});
    }

    bool empty() const noexcept { return pages_.empty() || rows_.empty() || cols_.empty(); }
    bool is_divisible() const noexcept {
        return pages_.is_divisible() || rows_.is_divisible() || cols_.is_divisible();
    }
    const page_range_type& pages() const noexcept { return pages_; }
    const row_range_type& rows() const noexcept { return rows_; }
    const col_range_type& cols() const noexcept { return cols_; }

private:
    page_range_type pages_;
    row_range_type rows_;
    col_range_type cols_;
};

}  // namespace crew
