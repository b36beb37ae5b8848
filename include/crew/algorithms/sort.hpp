// crew/algorithms/sort.hpp -- parallel_sort and parallel_stable_sort.
//
// A parallel merge sort with one buffer of n elements: the range is split in halves (by the
// partitioner) down to leaves sorted serially with std::sort (std::stable_sort for the stable
// sort), and sorted halves are merged by a parallel merge (split the longer run at its middle,
// binary-search the split point in the other, merge both pairs in parallel). Each level merges from
// the range into the buffer or back, so no level copies. Merges take from the left run on ties,
// which keeps equal elements in their input order for the stable sort.
//
// Small ranges (and a pool of one worker) are sorted serially without a buffer. If the buffer
// cannot be allocated, the sort falls back to the serial std:: algorithm.
//
// The partitioner may come first or last (see for_each.hpp); crew::simple_partitioner() is
// simple_partition{1} here, which merges down from single elements (slow: for completeness only).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "crew/algorithms/for_each.hpp"
#include "crew/algorithms/partition.hpp"

namespace crew {

namespace detail {

inline constexpr std::size_t sort_serial_cutoff = 4096;

// The comparator handed to the std:: sorts. std::sort accepts comparators taking non-const
// references, but libstdc++'s std::stable_sort compares some elements as const T&, where they do not
// bind. Such a comparator gets those elements with the const cast away: they are the range's or
// the sort's buffer's own non-const objects, and a comparator must not modify them anyway.
template <class T, class Comp>
auto std_comparator(Comp& comp) {
    if constexpr (std::is_invocable_v<Comp&, const T&, const T&>)
        return std::ref(comp);
    else
        return [&comp](const T& a, const T& b) -> bool { return comp(const_cast<T&>(a), const_cast<T&>(b)); };
}

// std::sort or std::stable_sort of [first, last).
template <class It, class Comp>
void serial_sort(It first, It last, Comp& comp, bool stable) {
    auto c = std_comparator<std::iter_value_t<It>>(comp);
    if (stable)
        std::stable_sort(first, last, c);
    else
        std::sort(first, last, c);
}

// A buffer of n elements of T. Trivial types are left uninitialized; others are move-constructed
// from the range and moved back (the merges then only move-assign into live objects).
template <class T>
class sort_buffer {
public:
    template <class It>
    sort_buffer(It first, std::size_t n) : n_(n) {
        if constexpr (trivial) {
            data_ = new T[n];  // default-initialized: no pass over the memory
        } else {
            data_ = static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{alignof(T)}));
            try {
                // Valid objects for the merges to move-assign into: move the elements here and back.
                It last = first + static_cast<std::iter_difference_t<It>>(n);
                std::uninitialized_move(first, last, data_);
                std::move(data_, data_ + n, first);
            } catch (...) {
                ::operator delete(data_, std::align_val_t{alignof(T)});
                throw;
            }
        }
    }
    sort_buffer(const sort_buffer&) = delete;
    sort_buffer& operator=(const sort_buffer&) = delete;
    ~sort_buffer() {
        if constexpr (trivial) {
            delete[] data_;
        } else {
            std::destroy_n(data_, n_);
            ::operator delete(data_, std::align_val_t{alignof(T)});
        }
    }
    T* data() const noexcept { return data_; }

private:
    static constexpr bool trivial = std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>;
    T* data_;
    std::size_t n_;
};

template <class It, class Comp>
class merge_sorter {
public:
    using T = std::iter_value_t<It>;

    merge_sorter(It a, T* buf, Comp& comp, bool stable, std::size_t merge_grain, cancel_flag& cancel)
        : a_(a), buf_(buf), comp_(comp), stable_(stable), merge_grain_(merge_grain), cancel_(cancel) {}

    // Sorts positions [b, e); the result ends in the buffer when IntoBuffer, else in the range.
    template <bool IntoBuffer, class Splitter>
    void sort(Splitter s, std::size_t b, std::size_t e, bool migrated) {
        if (cancel_.cancelled()) return;
        Splitter rs;
        if (std::size_t l = s.split(e - b, migrated, rs); l != 0) {
            worker* creator = current_worker;
            const std::size_t m = b + l;
            crew::join([&] { sort<!IntoBuffer>(s, b, m, false); },
                       [&] { sort<!IntoBuffer>(rs, m, e, current_worker != creator); });
            if constexpr (IntoBuffer)
                merge(at(a_, b), at(a_, m), at(a_, m), at(a_, e), buf_ + b);
            else
                merge(buf_ + b, buf_ + m, buf_ + m, buf_ + e, at(a_, b));
            return;
        }
        cancel_.guard([&] { sort_leaf<IntoBuffer>(b, e); });
    }

private:
    template <class I>
    static I at(I base, std::size_t i) noexcept {
        return base + static_cast<std::iter_difference_t<I>>(i);
    }

    template <bool IntoBuffer>
    void sort_leaf(std::size_t b, std::size_t e) {
        serial_sort(at(a_, b), at(a_, e), comp_, stable_);
        if constexpr (IntoBuffer) std::move(at(a_, b), at(a_, e), buf_ + b);
    }

    // Small trivially copyable elements (integers, floating point, small PODs) merge without a
    // branch on the comparison: random keys would mispredict about every other one.
    static constexpr bool branchless = std::is_trivially_copyable_v<T> && sizeof(T) <= 2 * sizeof(void*);

    template <class Src, class Dst>
    void merge_serial(Src x0, Src x1, Src y0, Src y1, Dst out) {
        if constexpr (branchless) {
            while (x0 != x1 && y0 != y1) {
                const bool take_y = comp_(*y0, *x0);  // ties take x: stable
                *out = take_y ? *y0 : *x0;
                ++out;
                y0 += take_y;
                x0 += !take_y;
            }
            out = std::copy(x0, x1, out);
            std::copy(y0, y1, out);
        } else {
            // Not std::merge over move iterators: that would hand the comparator rvalues, and
            // comparators taking non-const references (which std::sort accepts) cannot bind them.
            for (; x0 != x1 && y0 != y1; ++out) {
                if (comp_(*y0, *x0)) {  // ties take x: stable
                    *out = std::move(*y0);
                    ++y0;
                } else {
                    *out = std::move(*x0);
                    ++x0;
                }
            }
            out = std::move(x0, x1, out);
            std::move(y0, y1, out);
        }
    }

    // std::lower_bound(lo, hi, *key) and std::upper_bound(lo, hi, *key), comparing elements as the
    // lvalues they are (std::lower_bound would pass the key as a const T&).
    template <class Src>
    Src lower_bound_of(Src lo, Src hi, Src key) {
        for (auto len = hi - lo; len > 0;) {
            const auto half = len / 2;
            if (Src mid = lo + half; comp_(*mid, *key)) {
                lo = mid + 1;
                len -= half + 1;
            } else {
                len = half;
            }
        }
        return lo;
    }
    template <class Src>
    Src upper_bound_of(Src lo, Src hi, Src key) {
        for (auto len = hi - lo; len > 0;) {
            const auto half = len / 2;
            if (Src mid = lo + half; !comp_(*key, *mid)) {
                lo = mid + 1;
                len -= half + 1;
            } else {
                len = half;
            }
        }
        return lo;
    }

    // Moves the merge of sorted runs [x0, x1) and [y0, y1) to out; ties take from the x run.
    template <class Src, class Dst>
    void merge(Src x0, Src x1, Src y0, Src y1, Dst out) {
        if (cancel_.cancelled()) return;
        const std::size_t nx = static_cast<std::size_t>(x1 - x0), ny = static_cast<std::size_t>(y1 - y0);
        if (nx + ny <= merge_grain_ || nx == 0 || ny == 0) {
            cancel_.guard([&] { merge_serial(x0, x1, y0, y1, out); });
            return;
        }
        Src xm, ym;
        cancel_.guard([&] {
            if (nx >= ny) {
                // x's middle element, and the y elements strictly less than it (equal ones follow it).
                xm = at(x0, nx / 2);
                ym = lower_bound_of(y0, y1, xm);
            } else {
                // y's middle element, and the x elements not greater than it (equal ones precede it).
                ym = at(y0, ny / 2);
                xm = upper_bound_of(x0, x1, ym);
            }
        });
        Dst out_m = at(out, static_cast<std::size_t>((xm - x0) + (ym - y0)));
        crew::join([&] { merge(x0, xm, y0, ym, out); }, [&] { merge(xm, x1, ym, y1, out_m); });
    }

    It a_;
    T* buf_;
    Comp& comp_;
    bool stable_;
    std::size_t merge_grain_;
    cancel_flag& cancel_;
};

template <class Splitter, class It, class Comp>
void merge_sort_on_worker(Splitter s, It first, std::size_t n, Comp& comp, bool stable) {
    using T = std::iter_value_t<It>;
    T* buf = nullptr;
    std::unique_ptr<sort_buffer<T>> buffer;
    try {
        buffer = std::make_unique<sort_buffer<T>>(first, n);
        buf = buffer->data();
    } catch (const std::bad_alloc&) {
        // Cold path: no memory for the buffer; sort serially in place.
        serial_sort(first, first + static_cast<std::iter_difference_t<It>>(n), comp, stable);
        return;
    }
    const std::size_t grain = n / (8 * current_pool_size());
    cancel_flag cancel;
    merge_sorter<It, Comp> sorter(first, buf, comp, stable, grain > sort_serial_cutoff ? grain : sort_serial_cutoff,
                                  cancel);
    sorter.template sort<false>(s, 0, n, false);
}

template <class P, class It, class Comp>
void sort_entry(P part, It first, It last, Comp& comp, bool stable, const char* who) {
    const std::size_t n = checked_count(first, last, who);
    if (n < 2) return;
    on_worker([&] {
        const std::size_t workers = current_pool_size();
        if (n <= sort_serial_cutoff || (workers == 1 && std::same_as<P, auto_partition_t>)) {
            serial_sort(first, last, comp, stable);
            return;
        }
        if constexpr (std::same_as<P, auto_partition_t>) {
            // A budget of one split per worker: about two leaves per worker unless thieves ask
            // for more (each level of splitting costs a merge pass over the data).
            merge_sort_on_worker(adaptive_splitter{workers, workers, sort_serial_cutoff / 2}, first, n, comp, stable);
        } else {
            merge_sort_on_worker(make_splitter(part), first, n, comp, stable);
        }
    });
}

}  // namespace detail

// Sorts [first, last) with comp (default std::less<>), as std::sort, in parallel. Not stable.
// Uses a temporary buffer of last - first elements.
template <partitioner P, class It, class Comp>
void parallel_sort(P part, It first, It last, Comp comp) {
    CREW_DETAIL_NOT_DETERMINISTIC(P, "crew::parallel_sort");
    static_assert(random_access_input<It>, "crew::parallel_sort needs random-access iterators (a vector's, "
                                           "an array's, a pointer); sort a std::list with its sort()");
    if constexpr (random_access_input<It>) detail::sort_entry(part, first, last, comp, false, "crew::parallel_sort");
}

template <partitioner P, class It>
void parallel_sort(P part, It first, It last) {
    parallel_sort(part, first, last, std::less<>());
}

template <class It, class Comp>
    requires(!partitioner<It> && !partitioner<Comp>)
void parallel_sort(It first, It last, Comp comp) {
    parallel_sort(auto_partition, first, last, std::move(comp));
}

// Partitioner last, as oneTBB writes it.
template <class It, class Comp, partitioner P>
    requires(!partitioner<It>)
void parallel_sort(It first, It last, Comp comp, P part) {
    parallel_sort(part, first, last, std::move(comp));
}

template <class It, partitioner P>
    requires(!partitioner<It>)
void parallel_sort(It first, It last, P part) {
    parallel_sort(part, first, last, std::less<>());
}

template <class It>
void parallel_sort(It first, It last) {
    parallel_sort(auto_partition, first, last, std::less<>());
}

// As parallel_sort, and equal elements keep their input order (as std::stable_sort).
template <partitioner P, class It, class Comp>
void parallel_stable_sort(P part, It first, It last, Comp comp) {
    CREW_DETAIL_NOT_DETERMINISTIC(P, "crew::parallel_stable_sort");
    static_assert(random_access_input<It>, "crew::parallel_stable_sort needs random-access iterators (a "
                                           "vector's, an array's, a pointer); sort a std::list with its sort()");
    if constexpr (random_access_input<It>)
        detail::sort_entry(part, first, last, comp, true, "crew::parallel_stable_sort");
}

template <partitioner P, class It>
void parallel_stable_sort(P part, It first, It last) {
    parallel_stable_sort(part, first, last, std::less<>());
}

template <class It, class Comp>
    requires(!partitioner<It> && !partitioner<Comp>)
void parallel_stable_sort(It first, It last, Comp comp) {
    parallel_stable_sort(auto_partition, first, last, std::move(comp));
}

// Partitioner last, as oneTBB writes it.
template <class It, class Comp, partitioner P>
    requires(!partitioner<It>)
void parallel_stable_sort(It first, It last, Comp comp, P part) {
    parallel_stable_sort(part, first, last, std::move(comp));
}

template <class It, partitioner P>
    requires(!partitioner<It>)
void parallel_stable_sort(It first, It last, P part) {
    parallel_stable_sort(part, first, last, std::less<>());
}

template <class It>
void parallel_stable_sort(It first, It last) {
    parallel_stable_sort(auto_partition, first, last, std::less<>());
}

}  // namespace crew
