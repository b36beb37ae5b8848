// range_for: oneTBB's range/body model. A 5-point stencil over an N x N grid of integers with
// parallel_for(blocked_range2d, body), then the sum of the result with the functional
// parallel_reduce(blocked_range, identity, body, join), for crew, oneTBB and a serial baseline on
// the same grid and the same grains. The check value is the (exact, integer) sum.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "peers.hpp"

#if CREW_BENCH_HAVE_TBB
#include <tbb/blocked_range2d.h>
#endif

namespace crew_bench {

namespace {

struct grid {
    std::size_t n;
    std::vector<std::int32_t> in, out;
};

// out(i, j) for an interior cell: the 4-neighbour sum minus 4 x the cell.
inline std::int32_t stencil_at(const grid& g, std::size_t i, std::size_t j) {
    const std::int32_t* a = g.in.data();
    const std::size_t n = g.n;
    return a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1] - 4 * a[i * n + j];
}

inline void stencil_rows(grid& g, std::size_t r0, std::size_t r1, std::size_t c0, std::size_t c1) {
    for (std::size_t i = r0; i != r1; ++i)
        for (std::size_t j = c0; j != c1; ++j) g.out[i * g.n + j] = stencil_at(g, i, j);
}

inline std::int64_t sum_rows(const grid& g, std::size_t r0, std::size_t r1, std::int64_t acc) {
    for (std::size_t k = r0 * g.n; k != r1 * g.n; ++k) acc += g.out[k];
    return acc;
}

constexpr std::size_t row_grain = 16, col_grain = 256;

}  // namespace

problem make_range_for(const config& cfg, std::vector<std::string>& notes) {
    const std::size_t n = cfg.quick ? 2048 : 4096;
    problem p;
    p.name = "range_for";
    p.title = "range stencil+reduce(" + std::to_string(n) + "^2)";
    p.size_note = cfg.quick ? "quick mode: a 2048 x 2048 grid (full: 4096 x 4096)" : "";
    p.what = "parallel_for(blocked_range2d) 5-point stencil, then parallel_reduce(blocked_range) of the result";
    p.bytes = static_cast<double>(n) * static_cast<double>(n) * 3 * sizeof(std::int32_t);
    note_missing_peers(notes);
    auto data = make_lazy<grid>(p, [n] {
        auto g = std::make_unique<grid>(grid{n, std::vector<std::int32_t>(n * n), std::vector<std::int32_t>(n * n, 0)});
        for (std::size_t k = 0; k < n * n; ++k) g->in[k] = static_cast<std::int32_t>((k * 2654435761u) % 101);
        return g;
    });
    auto prepare = [data] { data->get(); };
    auto as_check = [](std::int64_t s) { return static_cast<std::uint64_t>(s); };
    p.impls.push_back(loop_impl("serial", make_no_env, [=](no_env&, std::size_t) {
        grid& g = data->get();
        stencil_rows(g, 1, n - 1, 1, n - 1);
        return as_check(sum_rows(g, 0, n, 0));
    }, prepare, true));
#if CREW_BENCH_HAVE_ALGORITHMS
    p.impls.push_back(loop_impl("crew", make_crew_env, [=](crew::pool& pool, std::size_t) {
        grid& g = data->get();
        return as_check(pool.run([&] {
            crew::parallel_for(crew::blocked_range2d<std::size_t>(1, n - 1, row_grain, 1, n - 1, col_grain),
                               [&](const crew::blocked_range2d<std::size_t>& r) {
                                   stencil_rows(g, r.rows().begin(), r.rows().end(), r.cols().begin(), r.cols().end());
                               });
            return crew::parallel_reduce(
                crew::blocked_range<std::size_t>(0, n, row_grain), std::int64_t{0},
                [&](const crew::blocked_range<std::size_t>& r, std::int64_t acc) { return sum_rows(g, r.begin(), r.end(), acc); },
                std::plus<>());
        }));
    }, prepare));
#endif
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back(loop_impl("onetbb", make_tbb_env, [=](tbb::task_arena& arena, std::size_t) {
        grid& g = data->get();
        std::int64_t sum = 0;
        arena.execute([&] {
            tbb::parallel_for(tbb::blocked_range2d<std::size_t>(1, n - 1, row_grain, 1, n - 1, col_grain),
                              [&](const tbb::blocked_range2d<std::size_t>& r) {
                                  stencil_rows(g, r.rows().begin(), r.rows().end(), r.cols().begin(), r.cols().end());
                              });
            sum = tbb::parallel_reduce(
                tbb::blocked_range<std::size_t>(0, n, row_grain), std::int64_t{0},
                [&](const tbb::blocked_range<std::size_t>& r, std::int64_t acc) { return sum_rows(g, r.begin(), r.end(), acc); },
                std::plus<>());
        });
        return as_check(sum);
    }, prepare));
#endif
    return p;
}

}  // namespace crew_bench
