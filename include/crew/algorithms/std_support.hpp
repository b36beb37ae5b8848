// crew/algorithms/std_support.hpp -- shared pieces of the std-named algorithms (numeric.hpp,
// search.hpp, copy.hpp, ranges.hpp): the partitioner-last calling convention, the range-overload
// helpers and the early-stopping search driver. (The two-pass algorithms' block sizes are scan.hpp's
// scan_block and for_each_block.)
#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <functional>
#include <iterator>
#include <ranges>
#include <tuple>
#include <type_traits>
#include <utility>

#include "crew/algorithms/partition.hpp"
#include "crew/algorithms/range.hpp"

namespace crew {

namespace detail {

// ---- the partitioner as the LAST argument (oneTBB's position) ----

template <class... A>
using last_arg_t = std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>;

template <class... A>
concept partitioner_last = sizeof...(A) >= 2 && partitioner<last_arg_t<A...>> &&
                           !partitioner<std::tuple_element_t<0, std::tuple<A...>>>;

// f(last, a0, a1, ..., a(n-2)): the partitioner moved to the front.
template <class F, class Tuple, std::size_t... I>
decltype(auto) call_partitioner_first(F& f, Tuple&& args, std::index_sequence<I...>) {
    return f(std::get<sizeof...(I)>(std::move(args)), std::get<I>(std::move(args))...);
}

// ---- ranges of the std::ranges kind (not crew::range's splitting ranges) ----

// What a range overload accepts: random-access and sized (so begin + size is its end), and not a
// oneTBB-style splitting range such as crew::blocked_range (those have their own algorithms).
template <class R>
concept sized_random_access_range = std::ranges::random_access_range<R> && std::ranges::sized_range<R> &&
                                    !crew::range<std::remove_cvref_t<R>> && !partitioner<R>;

template <class R>
auto range_first(R& r) {
    return std::ranges::begin(r);
}
template <class R>
auto range_last(R& r) {
    return std::ranges::begin(r) + static_cast<std::ranges::range_difference_t<R>>(std::ranges::size(r));
}

// An iterator into r as std::ranges returns it: std::ranges::dangling for an rvalue range that
// does not borrow its elements (the iterator would outlive them).
template <class R, class It>
std::ranges::borrowed_iterator_t<R> borrowed(It it) {
    if constexpr (std::ranges::borrowed_range<R>)
        return it;
    else
        return std::ranges::dangling{};
}

// ---- the early-stopping search ----
//
// search_index(p, n, first_in) returns the least i in [0, n) that matches, or n. first_in(b, e)
// searches one sub-block: it returns the least matching index in [b, e), or e (a std::find_if or
// std::mismatch over the block, which the compiler can unroll and vectorize). Every call keeps
// `best`, the least matching index found so far. A piece [b, e) with b >= best is not started
// (nor split further), and a running leaf re-reads best between sub-blocks of search_check_every
// elements and stops once it is past it; pieces before best keep running, so the first match is
// always found. In `any` mode (any_of, equal, ...) any match ends the search: every piece stops.
// auto_partition does not split into pieces: its workers claim blocks in index order (search_claims
// below); the fixed partitioners split as described here.

inline constexpr std::size_t search_check_every = 1024;

template <class FirstIn>
struct search_state {
    FirstIn& first_in;
    bool any;
    std::atomic<std::size_t> best;
    cancel_flag cancel;

    // relaxed: best only tells pieces they may skip work; the final value is read after every
    // piece finished, and join's completion orders each piece's offer() before that read.
    std::size_t current() const noexcept { return best.load(std::memory_order_relaxed); }
    bool done_before(std::size_t i) const noexcept {
        std::size_t b = current();
        return any ? b != npos() : i >= b;
    }
    std::size_t npos() const noexcept { return n_; }
    void offer(std::size_t i) noexcept {
        std::size_t cur = current();
        // relaxed: a min over indices; see current().
        while (i < cur && !best.compare_exchange_weak(cur, i, std::memory_order_relaxed)) {
        }
    }
    std::size_t n_;

    search_state(FirstIn& f, bool any_match, std::size_t n) : first_in(f), any(any_match), best(n), n_(n) {}
};

// Searches [b, e) in sub-blocks of search_check_every; stops at a match or once the search is
// decided.
template <class FirstIn>
void search_leaf(search_state<FirstIn>& st, std::size_t b, std::size_t e) {
    while (b != e) {
        if (st.done_before(b)) return;
        const std::size_t stop = e - b > search_check_every ? b + search_check_every : e;
        if (const std::size_t i = st.first_in(b, stop); i != stop) {
            st.offer(i);
            return;
        }
        b = stop;
    }
}

template <class Splitter, class FirstIn>
void search_divide(Splitter s, std::size_t b, std::size_t e, bool migrated, search_state<FirstIn>& st);

// auto_partition's leaf: in blocks, splitting the rest off when this worker's deque ran empty.
template <class FirstIn>
void search_demand_leaf(adaptive_splitter s, std::size_t b, std::size_t e, search_state<FirstIn>& st) {
    const std::size_t block = demand_block(e - b, s);
    for (;;) {
        const std::size_t stop = demand_block_end(b, e, block, s);
        st.cancel.guard([&] { search_leaf(st, b, stop); });
        b = stop;
        if (b == e || st.cancel.cancelled() || st.done_before(b)) return;
        if (offer_work_wanted(e - b, s)) {
            s.splits = 1;  // exactly one split of the rest
            search_divide(s, b, e, false, st);
            return;
        }
    }
}

template <class Splitter, class FirstIn>
void search_divide(Splitter s, std::size_t b, std::size_t e, bool migrated, search_state<FirstIn>& st) {
    if (st.cancel.cancelled() || st.done_before(b)) return;
    Splitter rs;
    if (std::size_t l = s.split(e - b, migrated, rs); l != 0) {
        worker* creator = current_worker;
        const std::size_t m = b + l;
        crew::join([&] { search_divide(s, b, m, false, st); },
                   [&] { search_divide(rs, m, e, current_worker != creator, st); });
        return;
    }
    if constexpr (std::same_as<Splitter, adaptive_splitter>)
        search_demand_leaf(s, b, e, st);
    else
        st.cancel.guard([&] { search_leaf(st, b, e); });
}

// ---- auto_partition's search: blocks claimed in index order ----
//
// With auto_partition every worker of the pool claims blocks from one shared counter, lowest index
// first, so all of them search the front of the range first: a match at index k is found after
// about k / workers elements each (a split tree leaves one worker alone on the leftmost piece while
// the others search far behind the match). A block is an eighth of its start index long (at least
// search_claim_min), so a full scan makes few claims (about a hundred for 20M elements on two
// workers) and each worker's reads stay long runs; and at most the rest / (2 x workers) long, as
// guided scheduling does, so the last blocks shrink (down to one element: the predicate may be
// slow) and the workers finish together. Every index below the final best is searched: blocks are
// claimed in increasing order, a participant stops claiming only at a block that starts at or past
// best (so do all later ones), and search_leaf stops a block only past best.
inline constexpr std::size_t search_claim_min = 4096;
inline constexpr std::size_t search_max_forks = 32;

inline std::size_t search_claim_length(std::size_t b, std::size_t n, std::size_t workers) noexcept {
    const std::size_t front = b / 8 > search_claim_min ? b / 8 : search_claim_min;
    const std::size_t tail = (n - b) / (2 * workers);
    const std::size_t len = front < tail ? front : (tail > 0 ? tail : 1);
    return len < n - b ? len : n - b;
}

template <class FirstIn>
class search_claims {
public:
    search_claims(search_state<FirstIn>& st, std::size_t workers) noexcept : st_(st), workers_(workers) {}

    // Claims and searches blocks until none is left or the search is decided. Before each block it
    // forks another participant when this worker's fork would be wanted (a thief asked, or its
    // deque is empty and it holds no private fork: worker::offer_wanted): a join's fork becomes
    // stealable only at its owner's next fork or wait, and this loop forks nothing else, so
    // forking once up front could leave the pool's other workers without work for the whole scan.
    // A participant nobody stole finds nothing left and returns at once. A chain of participants
    // nests at most search_max_forks joins on one stack.
    void run(std::size_t forks_left = search_max_forks) {
        std::size_t b = 0, e = 0;
        for (;;) {
            if (st_.cancel.cancelled()) return;
            if (forks_left != 0 && workers_ > 1 && claimable() && current_worker->offer_wanted()) {
                crew::join([&] { run(forks_left - 1); }, [&] { run(forks_left - 1); });
                return;
            }
            if (!claim(b, e) || st_.done_before(b)) return;
            st_.cancel.guard([&] { search_leaf(st_, b, e); });
        }
    }

private:
    // Whether a block that may still matter is left (relaxed: a hint, as current()).
    bool claimable() const noexcept {
        const std::size_t at = next_.load(std::memory_order_relaxed);
        return at < st_.npos() && !st_.done_before(at);
    }

    // The next block [b, e), or false when every block is claimed.
    bool claim(std::size_t& b, std::size_t& e) noexcept {
        const std::size_t n = st_.npos();
        std::size_t at = next_.load(std::memory_order_relaxed);
        std::size_t len = 0;
        do {
            if (at >= n) return false;
            len = search_claim_length(at, n, workers_);
            // relaxed: the counter only hands out disjoint blocks; what a block finds is published
            // through best (search_state::offer) and join's completion, not through the counter.
        } while (!next_.compare_exchange_weak(at, at + len, std::memory_order_relaxed, std::memory_order_relaxed));
        b = at;
        e = at + len;
        return true;
    }

    search_state<FirstIn>& st_;
    std::size_t workers_;
    std::atomic<std::size_t> next_{0};
};

template <class P, class FirstIn>
void search_run(P part, search_state<FirstIn>& st) {
    if constexpr (std::same_as<std::remove_cvref_t<P>, auto_partition_t>) {
        search_claims<FirstIn>(st, current_pool_size()).run();
    } else {
        search_divide(make_splitter(part), 0, st.npos(), false, st);
    }
}

// The least i in [0, n) that first_in finds (any_match: some such i), or n when there is none.
template <class P, class FirstIn>
std::size_t search_index(P part, std::size_t n, FirstIn&& first_in, bool any_match) {
    if (n == 0) return 0;
    return on_worker([&] {
        search_state<std::remove_reference_t<FirstIn>> st(first_in, any_match, n);
        search_run(part, st);
        return st.current();
    });
}

// A predicate seen through a projection: pred(proj(x)).
template <class Pred, class Proj>
auto projected(Pred& pred, Proj& proj) {
    return [&pred, &proj](auto&& x) -> bool {
        return static_cast<bool>(std::invoke(pred, std::invoke(proj, std::forward<decltype(x)>(x))));
    };
}

// A comparator seen through a projection: comp(proj(a), proj(b)).
template <class Comp, class Proj>
auto projected_comp(Comp& comp, Proj& proj) {
    return [&comp, &proj](auto&& a, auto&& b) -> bool {
        return static_cast<bool>(std::invoke(comp, std::invoke(proj, std::forward<decltype(a)>(a)),
                                             std::invoke(proj, std::forward<decltype(b)>(b))));
    };
}

#define CREW_DETAIL_RANDOM_ACCESS(It, who) \
    static_assert(::crew::random_access_input<It>, who " needs random-access iterators (a vector's, an array's, a pointer)")

#define CREW_DETAIL_LOOP_PARTITIONER(P, who)                                                                 \
    static_assert(!std::same_as<std::remove_cvref_t<P>, ::crew::deterministic_partition>,                     \
                  who ": crew::deterministic only applies to reductions and scans; use crew::simple_partition{grain} " \
                  "for a fixed split")

}  // namespace detail

}  // namespace crew

// Defines name(args..., partitioner): oneTBB's order, forwarded to name(partitioner, args...). It is
// found for the calls whose last argument is a partitioner and whose first is not; overloads of
// name with a partitioner parameter last that are not variadic are more specialized and win.
#define CREW_DETAIL_PARTITIONER_LAST(name)                                                                    \
    template <class... A>                                                                                     \
        requires ::crew::detail::partitioner_last<A...>                                                       \
    decltype(auto) name(A&&... args) {                                                                       \
        auto call = [](auto&&... b) -> decltype(auto) { return name(std::forward<decltype(b)>(b)...); };     \
        return ::crew::detail::call_partitioner_first(call, std::forward_as_tuple(std::forward<A>(args)...), \
                                                      std::make_index_sequence<sizeof...(A) - 1>());         \
    }
