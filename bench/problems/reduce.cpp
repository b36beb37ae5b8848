// reduce: the sum of 100,000,000 doubles (each a small whole number, i % 1000, so every summation
// order gives the exact same answer). Reports GB/s; "bandwidth-probe" (plain threads, a static
// split, eight independent accumulators each) measures what the memory system delivers, the limit
// a reduction can reach.
#include <numeric>
#include <string>
#include <vector>

#include "peers.hpp"

namespace crew_bench {

namespace {

double probe_sum(const double* p, std::size_t n) {
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) acc[k] += p[i + static_cast<std::size_t>(k)];
    double s = 0;
    for (; i < n; ++i) s += p[i];
    for (double a : acc) s += a;
    return s;
}

}  // namespace

problem make_reduce(const config& cfg, std::vector<std::string>& notes) {
    std::size_t n = cfg.quick ? 20000000 : 100000000;
    problem p;
    p.name = "reduce";
    p.title = "reduce(" + std::to_string(n / 1000000) + "M doubles)";
    p.size_note = cfg.quick ? "quick mode: 20M doubles (full: 100M)" : "";
    p.what = "sum of doubles (std::accumulate as the serial baseline); GB/s against the measured bandwidth limit";
    p.bytes = static_cast<double>(n) * sizeof(double);
    note_missing_peers(notes);
    auto input = make_lazy<std::vector<double>>(p, [n] {
        auto v = std::make_unique<std::vector<double>>(n);
        for (std::size_t i = 0; i < n; ++i) (*v)[i] = static_cast<double>(i % 1000);
        return v;
    });
    auto prepare = [input] { input->get(); };
    auto as_check = [](double s) { return static_cast<std::uint64_t>(s); };
    p.impls.push_back(loop_impl("serial", make_no_env, [=](no_env&, std::size_t) {
        return as_check(std::accumulate(input->get().begin(), input->get().end(), 0.0));
    }, prepare, true));
#if CREW_BENCH_HAVE_ALGORITHMS
    p.impls.push_back(loop_impl("crew", make_crew_env, [=](crew::pool& pool, std::size_t) {
        return as_check(pool.run([&] { return crew::parallel_reduce(input->get().begin(), input->get().end(), 0.0, std::plus<>{}); }));
    }, prepare));
#endif
    p.impls.push_back(loop_impl("bandwidth-probe", make_no_env, [=](no_env&, std::size_t t) {
        std::vector<double> partial(t);
        static_split(t, n, [&](std::size_t lo, std::size_t hi, std::size_t k) { partial[k] = probe_sum(input->get().data() + lo, hi - lo); });
        return as_check(std::accumulate(partial.begin(), partial.end(), 0.0));
    }, prepare));
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back(loop_impl("onetbb", make_tbb_env, [=](tbb::task_arena& arena, std::size_t) {
        double sum = 0;
        arena.execute([&] {
            sum = tbb::parallel_reduce(
                tbb::blocked_range<std::size_t>(0, n), 0.0,
                [&](const tbb::blocked_range<std::size_t>& r, double acc) {
                    return std::accumulate(input->get().data() + r.begin(), input->get().data() + r.end(), acc);
                },
                std::plus<>{});
        });
        return as_check(sum);
    }, prepare));
#endif
#if CREW_BENCH_HAVE_OPENMP
    p.impls.push_back(loop_impl("openmp", make_no_env, [=](no_env&, std::size_t t) {
        double sum = 0;
        const double* d = input->get().data();
        long len = static_cast<long>(n);
        int nt = static_cast<int>(t);
#pragma omp parallel for reduction(+ : sum) num_threads(nt)
        for (long i = 0; i < len; ++i) sum += d[i];
        return as_check(sum);
    }, prepare));
#endif
    return p;
}

}  // namespace crew_bench
