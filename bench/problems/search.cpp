// search: crew's std-named search and copy algorithms (<crew/algorithms/search.hpp>, copy.hpp)
// over 100,000,000 ints (20M in quick mode), each value a hash of its index in [0, 1,000,000):
//   count_if       the number of even values (about half)                  -> the count
//   find_if_early  the first x == -1; one -1 is planted at index n / 100    -> its index
//   find_if_none   the first x == -2; there is none, so a full scan         -> n
//   min_element    the FIRST smallest value (0 occurs ~n / 10^6 times)       -> its index
//   copy_if        copy the even values, in order, to a preallocated buffer -> hash of the output
// against std:: (serial) and oneTBB: parallel_reduce for count and min, parallel_for with
// cancel_group_execution for find, two parallel_for passes (count per block, serial prefix, copy)
// for copy_if.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "peers.hpp"

namespace crew_bench {

namespace {

constexpr int early_needle = -1;  // planted once, at n / 100
constexpr int absent_needle = -2;  // never in the input

struct search_data {
    std::vector<int> in;
    std::vector<int> out;  // copy_if's destination (sized n; only copy_if allocates it)
};

std::size_t search_size(const config& cfg) { return cfg.quick ? 20000000 : 100000000; }

std::unique_ptr<search_data> make_search_data(std::size_t n, bool with_out) {
    auto d = std::make_unique<search_data>();
    d->in.resize(n);
    for (std::size_t i = 0; i < n; ++i) d->in[i] = static_cast<int>(mix64(i) % 1000000u);
    d->in[n / 100] = early_needle;
    if (with_out) d->out.assign(n, 0);
    return d;
}

// A problem's header fields and its lazily built input.
std::shared_ptr<lazy<search_data>> search_header(problem& p, const config& cfg, const std::string& name,
                                                 const std::string& what, bool with_out,
                                                 std::vector<std::string>& notes) {
    const std::size_t n = search_size(cfg);
    p.name = name;
    p.title = name + "(" + std::to_string(n / 1000000) + "M ints)";
    p.size_note = cfg.quick ? "quick mode: 20M ints (full: 100M)" : "";
    p.what = what;
    p.bytes = static_cast<double>(n) * sizeof(int);
    note_missing_peers(notes);
    return make_lazy<search_data>(p, [n, with_out] { return make_search_data(n, with_out); });
}

// The predicate, as a function object: every implementation calls it the same way, inlined. (A
// function pointer such as &is_even passed to an algorithm is an indirect call per element unless
// the compiler sees through it, which a parallel algorithm's leaves make it unlikely to.)
struct even_t {
    bool operator()(int x) const { return x % 2 == 0; }
};
inline constexpr even_t is_even{};

#if CREW_BENCH_HAVE_TBB
// The index of the first x == needle, or n: chunks starting after a known match are skipped, and
// the first match found cancels the rest. With at most one match in the input (as here) that is the
// first match; a general first-match search must not cancel chunks before the match.
std::size_t tbb_find_index(tbb::task_arena& arena, const std::vector<int>& v, int needle) {
    const std::size_t n = v.size();
    std::atomic<std::size_t> best{n};
    arena.execute([&] {
        tbb::task_group_context ctx;
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, n),
            [&](const tbb::blocked_range<std::size_t>& r) {
                if (r.begin() > best.load(std::memory_order_relaxed)) return;
                auto it = std::find(v.data() + r.begin(), v.data() + r.end(), needle);
                if (it == v.data() + r.end()) return;
                std::size_t k = static_cast<std::size_t>(it - v.data());
                std::size_t cur = best.load(std::memory_order_relaxed);
                while (k < cur && !best.compare_exchange_weak(cur, k, std::memory_order_relaxed)) {
                }
                ctx.cancel_group_execution();
            },
            tbb::auto_partitioner(), ctx);
    });
    return best.load(std::memory_order_relaxed);  // parallel_for's return orders the stores
}

// The count, then a serial prefix over the blocks, then the copy.
std::size_t tbb_copy_if(tbb::task_arena& arena, const std::vector<int>& in, std::vector<int>& out) {
    const std::size_t n = in.size();
    const std::size_t blocks = std::min<std::size_t>(n, 1024);
    std::vector<std::size_t> pos(blocks + 1, 0);
    auto lo = [&](std::size_t b) { return n * b / blocks; };
    arena.execute([&] {
        tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
            pos[b + 1] = static_cast<std::size_t>(std::count_if(in.data() + lo(b), in.data() + lo(b + 1), is_even));
        });
        for (std::size_t b = 0; b < blocks; ++b) pos[b + 1] += pos[b];
        tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
            std::copy_if(in.data() + lo(b), in.data() + lo(b + 1), out.data() + pos[b], is_even);
        });
    });
    return pos[blocks];
}
#endif

// The serial, crew and oneTBB implementations of a find problem for `needle`.
void add_find_impls(problem& p, const std::shared_ptr<lazy<search_data>>& input, int needle) {
    auto prepare = [input] { input->get(); };
    p.impls.push_back(loop_impl("serial", make_no_env, [=](no_env&, std::size_t) {
        const auto& v = input->get().in;
        return static_cast<std::uint64_t>(std::find_if(v.begin(), v.end(), [=](int x) { return x == needle; }) - v.begin());
    }, prepare, true));
#if CREW_BENCH_HAVE_ALGORITHMS
    p.impls.push_back(loop_impl("crew", make_crew_env, [=](crew::pool& pool, std::size_t) {
        const auto& v = input->get().in;
        return static_cast<std::uint64_t>(pool.run([&] {
            return crew::parallel_find_if(v.begin(), v.end(), [=](int x) { return x == needle; }) - v.begin();
        }));
    }, prepare));
#endif
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back(loop_impl("onetbb", make_tbb_env, [=](tbb::task_arena& arena, std::size_t) {
        return static_cast<std::uint64_t>(tbb_find_index(arena, input->get().in, needle));
    }, prepare));
#endif
}

}  // namespace

problem make_count_if(const config& cfg, std::vector<std::string>& notes) {
    problem p;
    auto input = search_header(p, cfg, "count_if", "count the even ints: crew::parallel_count_if vs std::count_if, tbb::parallel_reduce", false, notes);
    auto prepare = [input] { input->get(); };
    p.impls.push_back(loop_impl("serial", make_no_env, [=](no_env&, std::size_t) {
        const auto& v = input->get().in;
        return static_cast<std::uint64_t>(std::count_if(v.begin(), v.end(), is_even));
    }, prepare, true));
#if CREW_BENCH_HAVE_ALGORITHMS
    p.impls.push_back(loop_impl("crew", make_crew_env, [=](crew::pool& pool, std::size_t) {
        const auto& v = input->get().in;
        return static_cast<std::uint64_t>(pool.run([&] { return crew::parallel_count_if(v.begin(), v.end(), is_even); }));
    }, prepare));
#endif
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back(loop_impl("onetbb", make_tbb_env, [=](tbb::task_arena& arena, std::size_t) {
        const auto& v = input->get().in;
        std::ptrdiff_t count = 0;
        arena.execute([&] {
            count = tbb::parallel_reduce(
                tbb::blocked_range<std::size_t>(0, v.size()), std::ptrdiff_t{0},
                [&](const tbb::blocked_range<std::size_t>& r, std::ptrdiff_t acc) {
                    return acc + std::count_if(v.data() + r.begin(), v.data() + r.end(), is_even);
                },
                std::plus<>{});
        });
        return static_cast<std::uint64_t>(count);
    }, prepare));
#endif
    return p;
}

problem make_find_if_early(const config& cfg, std::vector<std::string>& notes) {
    problem p;
    auto input = search_header(p, cfg, "find_if_early", "find_if with its only match at n/100: how soon the search stops (crew::parallel_find_if vs std::find_if, tbb::parallel_for + cancel_group_execution)", false, notes);
    p.bytes = 0;  // only ~1 % of the input is read
    add_find_impls(p, input, early_needle);
    return p;
}

problem make_find_if_none(const config& cfg, std::vector<std::string>& notes) {
    problem p;
    auto input = search_header(p, cfg, "find_if_none", "find_if with no match, so a full scan: crew::parallel_find_if vs std::find_if, tbb::parallel_for", false, notes);
    add_find_impls(p, input, absent_needle);
    return p;
}

namespace {

// The first smallest of two (value, index) candidates, as std::min_element picks.
using min_pick = std::pair<int, std::size_t>;
inline min_pick first_min(const min_pick& a, const min_pick& b) {
    return (b.first < a.first || (b.first == a.first && b.second < a.second)) ? b : a;
}

}  // namespace

problem make_min_element(const config& cfg, std::vector<std::string>& notes) {
    problem p;
    auto input = search_header(p, cfg, "min_element", "index of the first smallest int (the minimum repeats): crew::parallel_min_element vs std::min_element, tbb::parallel_reduce", false, notes);
    auto prepare = [input] { input->get(); };
    p.impls.push_back(loop_impl("serial", make_no_env, [=](no_env&, std::size_t) {
        const auto& v = input->get().in;
        return static_cast<std::uint64_t>(std::min_element(v.begin(), v.end()) - v.begin());
    }, prepare, true));
#if CREW_BENCH_HAVE_ALGORITHMS
    p.impls.push_back(loop_impl("crew", make_crew_env, [=](crew::pool& pool, std::size_t) {
        const auto& v = input->get().in;
        return static_cast<std::uint64_t>(pool.run([&] { return crew::parallel_min_element(v.begin(), v.end()) - v.begin(); }));
    }, prepare));
#endif
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back(loop_impl("onetbb", make_tbb_env, [=](tbb::task_arena& arena, std::size_t) {
        const auto& v = input->get().in;
        const std::size_t n = v.size();
        min_pick best{0, n};
        arena.execute([&] {
            best = tbb::parallel_reduce(
                tbb::blocked_range<std::size_t>(0, n), min_pick{0, n},
                [&](const tbb::blocked_range<std::size_t>& r, min_pick acc) {
                    auto it = std::min_element(v.data() + r.begin(), v.data() + r.end());
                    min_pick here{*it, static_cast<std::size_t>(it - v.data())};
                    return acc.second == n ? here : first_min(acc, here);
                },
                [n](const min_pick& a, const min_pick& b) { return a.second == n ? b : b.second == n ? a : first_min(a, b); });
        });
        return static_cast<std::uint64_t>(best.second);
    }, prepare));
#endif
    return p;
}

problem make_copy_if(const config& cfg, std::vector<std::string>& notes) {
    problem p;
    auto input = search_header(p, cfg, "copy_if", "copy the even ints (about half), in order: crew::parallel_copy_if vs std::copy_if, oneTBB two-pass (count, prefix, copy)", true, notes);
    p.bytes = static_cast<double>(search_size(cfg)) * sizeof(int) * 1.5;  // read all, write half
    auto prepare = [input] { input->get(); };
    // The check (untimed): the output's length and an order-sensitive hash of it.
    auto kept = std::make_shared<std::size_t>(0);
    auto check = [input, kept] {
        const auto& out = input->get().out;
        return sequence_hash(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(*kept)) ^ *kept;
    };
    p.impls.push_back(checked_impl("serial", make_no_env, [=](no_env&, std::size_t) {
        auto& d = input->get();
        *kept = static_cast<std::size_t>(std::copy_if(d.in.begin(), d.in.end(), d.out.begin(), is_even) - d.out.begin());
    }, prepare, check, true));
#if CREW_BENCH_HAVE_ALGORITHMS
    p.impls.push_back(checked_impl("crew", make_crew_env, [=](crew::pool& pool, std::size_t) {
        auto& d = input->get();
        *kept = static_cast<std::size_t>(pool.run([&] { return crew::parallel_copy_if(d.in.begin(), d.in.end(), d.out.begin(), is_even) - d.out.begin(); }));
    }, prepare, check));
#endif
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back(checked_impl("onetbb", make_tbb_env, [=](tbb::task_arena& arena, std::size_t) {
        auto& d = input->get();
        *kept = tbb_copy_if(arena, d.in, d.out);
    }, prepare, check));
#endif
    return p;
}

}  // namespace crew_bench
