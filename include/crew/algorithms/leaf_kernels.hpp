// crew/algorithms/leaf_kernels.hpp -- the serial loops at the leaves of count_if, find_if,
// min/max/minmax_element and copy_if, written so that g++ and clang++ vectorize them.
//
// The std algorithms are not always vectorized: g++ 12 leaves std::count_if scalar (its count is a
// 64-bit difference_type, which SSE2 cannot widen to cheaply), std::find_if is a scalar loop unrolled
// by four, std::min_element tracks an iterator (a dependency no compiler vectorizes), and
// std::copy_if branches on every answer, so a random predicate mispredicts about half the time.
// Each kernel gives exactly the std algorithm's result:
//  - count_kernel counts in runs, each with a counter as wide as a scalar element (32 bits for
//    others; 8 bits: runs of 192 elements, 16 bits: 65,472, 32 and 64 bits: 2^20), added to the
//    full count;
//  - find_kernel tests groups of 64 elements into a byte array, then looks for the first true one;
//    pred is called at most once per element, but (unlike std::find_if) on the rest of the group
//    after a match, as a parallel search calls it past the match anyway;
//  - extreme_kernel (integers under a plain less only) finds the smallest / largest value of each
//    run of 4,096 elements with a vectorized min/max, then the first (or last) run that holds the
//    answer, and the first (or last) position of the answer in that run; comp, being std::less on
//    integers, is never observable;
//  - mark_kernel keeps pred's answers as bits (n / 8 bytes, in a per-thread reused scratch), and
//    compact_kernel (trivially copyable elements between contiguous ranges) copies without a branch:
//    it writes every element at the next output slot and advances the slot only for a kept one,
//    stopping once the block's known number of kept elements is written, so it never writes past
//    its block's part of the output.
#pragma once

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <type_traits>

namespace crew::detail {

// ---- count_if ----

// The counter of one run. For a scalar element (a number, an enum, a pointer) it is as wide as the
// element, so each answer stays in the vector lane its element was loaded into (a byte's answer is
// not widened to 32 bits, a 64-bit one not narrowed); otherwise (a struct, whose predicate compares
// members of unknown width) 32 bits.
template <class V, std::size_t Size = std::is_scalar_v<V> ? sizeof(V) : 4>
using count_lane = std::conditional_t<
    Size == 1, std::uint8_t,
    std::conditional_t<Size == 2, std::uint16_t, std::conditional_t<Size == 8, std::uint64_t, std::uint32_t>>>;

// Elements per run of counter C, so that it cannot overflow: 8 and 16 bits, the largest multiple of
// 64 it can hold (64 = the widest unrolled vector step, so a run leaves no scalar remainder);
// 32 and 64 bits, 2^20 (a 64-bit counter cannot overflow at all, but without the run loop g++ 12
// compiles the scalar loop of a 64-bit `x > c` about twice as slow).
template <class C>
inline constexpr std::size_t count_run_of =
    sizeof(C) >= 4 ? std::size_t{1} << 20 : std::size_t{static_cast<C>(~C{0})} / 64 * 64;

// The number of x in [first, first + n) with pred(x). The answer is added as 0 or 1, except for
// floating-point elements, where it is counted with a conditional increment: g++ 12 vectorizes
// that one for double and not the addition of a bool made from a floating-point comparison
// (clang++ vectorizes both).
template <class D, class It, class Pred>
D count_kernel(It first, std::size_t n, Pred& pred) {
    using V = std::iter_value_t<It>;
    using C = count_lane<V>;
    constexpr std::size_t run = count_run_of<C>;
    D total{0};
    while (n != 0) {
        const std::size_t m = n < run ? n : run;
        C c = 0;
        for (std::size_t i = 0; i != m; ++i, ++first) {
            if constexpr (std::is_floating_point_v<V>) {
                if (std::invoke(pred, *first)) ++c;
            } else {
                c += static_cast<C>(static_cast<bool>(std::invoke(pred, *first)));
            }
        }
        total += static_cast<D>(c);
        n -= m;
    }
    return total;
}

// ---- find_if ----

inline constexpr std::size_t find_group = 64;

// The index of the first non-zero byte of hit[0..find_group), or find_group. Always inlined:
// clang++ 14 otherwise calls it once per group (find_kernel on bytes in cache: 0.064 ns per
// element with the call, 0.045 without; ints 0.146 / 0.140).
[[gnu::always_inline]] inline std::size_t first_hit(const bool* hit) noexcept {
    std::uint64_t w[find_group / 8];
    std::memcpy(w, hit, find_group);
    std::uint64_t any = 0;
    for (std::uint64_t x : w) any |= x;
    if (any == 0) return find_group;
    for (std::size_t j = 0; j != find_group; ++j)
        if (hit[j]) return j;
    return find_group;  // not reached
}

// The least i in [b, e) with pred(first[i]), or e.
template <class It, class Pred>
std::size_t find_kernel(It first, std::size_t b, std::size_t e, Pred& pred) {
    It it = first + static_cast<std::iter_difference_t<It>>(b);
    for (; e - b >= find_group; b += find_group) {
        bool hit[find_group];
        for (std::size_t j = 0; j != find_group; ++j, ++it) hit[j] = static_cast<bool>(std::invoke(pred, *it));
        if (const std::size_t j = first_hit(hit); j != find_group) return b + j;
    }
    for (; b != e; ++b, ++it)
        if (std::invoke(pred, *it)) return b;
    return e;
}

// ---- min_element, max_element, minmax_element ----

// Whether comp is a plain `<` on the integers It points to, so that a vectorized min/max finds what
// std::min_element would (no observable comparator, no NaN).
template <class It, class Comp>
inline constexpr bool plain_integer_less =
    std::contiguous_iterator<It> && std::integral<std::iter_value_t<It>> &&
    !std::same_as<std::iter_value_t<It>, bool> &&
    std::same_as<std::remove_cvref_t<std::iter_reference_t<It>>, std::iter_value_t<It>> &&
    !std::is_volatile_v<std::remove_reference_t<std::iter_reference_t<It>>> &&
    (std::same_as<Comp, std::less<>> || std::same_as<Comp, std::less<std::iter_value_t<It>>> ||
     std::same_as<Comp, std::ranges::less>);

inline constexpr std::size_t extreme_run = 4096;

template <bool Max, class V>
constexpr V better(V a, V b) noexcept {
    if constexpr (Max)
        return b > a ? b : a;
    else
        return b < a ? b : a;
}

// The smallest (Max: largest) of p[0..m), m > 0: a reduction without positions, which vectorizes.
// It keeps 64 bytes of lanes side by side (four SSE vectors, two AVX ones), so several independent
// compare-and-select chains are in flight: with one vector, g++ waits on each chain's latency and
// the kernel is slower than std::min_element.
template <bool Max, class V>
V run_extreme(const V* p, std::size_t m) noexcept {
    constexpr std::size_t lanes = 64 / sizeof(V) > 0 ? 64 / sizeof(V) : 1;
    V acc[lanes];
    for (std::size_t j = 0; j != lanes; ++j) acc[j] = p[0];
    std::size_t i = 0;
    for (; m - i >= lanes; i += lanes)
        for (std::size_t j = 0; j != lanes; ++j) acc[j] = better<Max>(acc[j], p[i + j]);
    V v = p[0];
    for (; i != m; ++i) v = better<Max>(v, p[i]);
    for (std::size_t j = 0; j != lanes; ++j) v = better<Max>(v, acc[j]);
    return v;
}

// The index of the first smallest (Max: first largest) of p[0..n), n > 0. A run whose extreme only
// equals the best so far keeps the earlier run, so the answer's first occurrence is in best_run.
template <bool Max, class V>
std::size_t first_extreme_kernel(const V* p, std::size_t n) noexcept {
    V best = p[0];
    std::size_t best_run = 0;
    for (std::size_t r = 0; r < n; r += extreme_run) {
        const V v = run_extreme<Max>(p + r, std::min(extreme_run, n - r));
        if (Max ? v > best : v < best) {
            best = v;
            best_run = r;
        }
    }
    return static_cast<std::size_t>(std::find(p + best_run, p + n, best) - p);
}

// The index of the last largest of p[0..n), n > 0 (minmax_element's max): a run whose largest equals
// the best so far replaces it, so the answer's last occurrence is in best_run.
template <class V>
std::size_t last_max_kernel(const V* p, std::size_t n) noexcept {
    V best = p[0];
    std::size_t best_run = 0;
    for (std::size_t r = 0; r < n; r += extreme_run) {
        const V v = run_extreme<true>(p + r, std::min(extreme_run, n - r));
        if (v >= best) {
            best = v;
            best_run = r;
        }
    }
    std::size_t i = std::min(best_run + extreme_run, n);
    while (p[i - 1] != best) --i;
    return i - 1;
}

// ---- copy_if and the partitions: one bit per answer ----

inline constexpr std::size_t mark_word = 64;  // answers per word; blocks start at multiples of it

// Element i's answer in bits (bit i % 64 of word i / 64).
inline bool marked(const std::uint64_t* bits, std::size_t i) noexcept { return ((bits[i / mark_word] >> (i % mark_word)) & 1u) != 0; }

// Packs hit[0..64) (each 0 or 1) into a word, hit[j] as bit j: a multiply gathers each 8 bytes'
// low bits into the top byte (byte i lands at bit 56 + i, and no two partial products overlap).
inline std::uint64_t pack_hits(const bool* hit) noexcept {
    std::uint64_t word = 0;
    for (std::size_t j = 0; j != mark_word; j += 8) {
        std::uint64_t x;
        std::memcpy(&x, hit + j, 8);
        word |= ((x * 0x0102040810204080u) >> 56) << j;
    }
    return word;
}

// pred(x) for the n elements from first into bits[0..ceil(n / 64)), once each; returns how many are
// true. (hit is bool, not unsigned char: a character store may alias pred's state, which would stop
// the vectorizer.)
template <class It, class Pred>
std::size_t mark_kernel(It first, std::size_t n, std::uint64_t* bits, Pred& pred) {
    std::size_t total = 0;
    for (; n != 0; ++bits) {
        const std::size_t m = n < mark_word ? n : mark_word;
        bool hit[mark_word] = {};
        for (std::size_t j = 0; j != m; ++j, ++first) hit[j] = static_cast<bool>(std::invoke(pred, *first));
        *bits = pack_hits(hit);
        total += static_cast<std::size_t>(std::popcount(*bits));
        n -= m;
    }
    return total;
}

// Whether copy_if may copy without a branch: trivially copyable elements of one type, both ranges
// contiguous (the output must not overlap the input, as for parallel_copy_if itself).
template <class It, class Out>
inline constexpr bool branchless_copyable =
    std::contiguous_iterator<It> && std::contiguous_iterator<Out> &&
    std::same_as<std::iter_value_t<It>, std::iter_value_t<Out>> &&
    std::same_as<std::iter_reference_t<Out>, std::iter_value_t<Out>&> &&
    !std::is_volatile_v<std::remove_reference_t<std::iter_reference_t<It>>> &&
    std::is_trivially_copyable_v<std::iter_value_t<It>> &&
    std::is_trivially_copy_assignable_v<std::iter_value_t<It>>;

// Copies the elements in[i] marked in bits to out[0..kept), in order; exactly `kept` are marked.
// Every element is written at out[k] and k advances for a marked one, so a dropped element's slot is
// overwritten by the next kept one; the loop ends when the last kept element is written, so no
// slot at or past out[kept] (another block's) is touched.
template <class V>
void compact_kernel(const V* in, const std::uint64_t* bits, V* out, std::size_t kept) noexcept {
    std::size_t k = 0;
    for (std::size_t i = 0; k != kept; ++i) {
        out[k] = in[i];
        k += static_cast<std::size_t>((bits[i / mark_word] >> (i % mark_word)) & 1u);
    }
}

// Scratch words for the answers, reused across calls: taken from this thread's cache when one big
// enough is there and put back afterwards, so a repeated copy_if does not fault in fresh pages (a
// fresh 20 MB buffer per call cost ~5,000 page faults, more than the copy itself). A nested call
// on the same thread finds the cache empty and allocates its own. At most 16 MiB (the answers of
// 128M elements) stays cached per thread.
class mark_scratch {
public:
    explicit mark_scratch(std::size_t words) {
        slot& c = cache();
        if (c.words >= words) {
            data_ = std::move(c.data);
            words_ = c.words;
            c.words = 0;
        } else {
            data_.reset(new std::uint64_t[words]);
            words_ = words;
        }
    }
    mark_scratch(const mark_scratch&) = delete;
    mark_scratch& operator=(const mark_scratch&) = delete;
    ~mark_scratch() {
        slot& c = cache();
        if (words_ <= max_cached_words && words_ > c.words) {
            c.data = std::move(data_);
            c.words = words_;
        }
    }
    std::uint64_t* get() const noexcept { return data_.get(); }

private:
    static constexpr std::size_t max_cached_words = (std::size_t{16} << 20) / sizeof(std::uint64_t);
    struct slot {
        std::unique_ptr<std::uint64_t[]> data;
        std::size_t words = 0;
    };
    static slot& cache() noexcept {
        thread_local slot s;
        return s;
    }
    std::unique_ptr<std::uint64_t[]> data_;
    std::size_t words_ = 0;
};

}  // namespace crew::detail
