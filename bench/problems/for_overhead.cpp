// for_overhead: the per-element cost of a parallel loop whose body does nothing (it only keeps the
// index alive for the optimizer), against the same serial loop. The ns/task column is the
// per-element overhead: (threads x median - serial median) / elements.
#include <string>

#include "peers.hpp"

namespace crew_bench {

problem make_for_overhead(const config& cfg, std::vector<std::string>& notes) {
    std::size_t n = cfg.quick ? 20000000 : 100000000;
    problem p;
    p.name = "for_overhead";
    p.title = "empty parallel_for(" + std::to_string(n / 1000000) + "M)";
    p.size_note = cfg.quick ? "quick mode: 20M elements (full: 100M)" : "";
    p.what = "per-element overhead of a parallel loop with an empty body";
    p.tasks = static_cast<double>(n);
    note_missing_peers(notes);
    p.impls.push_back(loop_impl("serial", make_no_env, [n](no_env&, std::size_t) {
        for (std::size_t i = 0; i < n; ++i) do_not_optimize(i);
        return std::uint64_t{n};
    }, true));
#if CREW_BENCH_HAVE_ALGORITHMS
    p.impls.push_back(loop_impl("crew", make_crew_env, [n](crew::pool& pool, std::size_t) {
        pool.run([&] { crew::parallel_for(std::size_t{0}, n, [](std::size_t i) { do_not_optimize(i); }); });
        return std::uint64_t{n};
    }));
#endif
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back(loop_impl("onetbb", make_tbb_env, [n](tbb::task_arena& arena, std::size_t) {
        arena.execute([&] { tbb::parallel_for(std::size_t{0}, n, [](std::size_t i) { do_not_optimize(i); }); });
        return std::uint64_t{n};
    }));
#endif
#if CREW_BENCH_HAVE_OPENMP
    p.impls.push_back(loop_impl("openmp", make_no_env, [n](no_env&, std::size_t t) {
        long len = static_cast<long>(n);
        int nt = static_cast<int>(t);
#pragma omp parallel for num_threads(nt)
        for (long i = 0; i < len; ++i) do_not_optimize(i);
        return std::uint64_t{n};
    }));
#endif
    return p;
}

}  // namespace crew_bench
