// map_sum: seed 004's Rayon example, a parallel map and sum over 1,000,000 items where item i costs
// i % 100 + 1 dependent multiply-add steps. Sums are wrapping 64-bit integers, so every
// implementation must produce exactly the serial answer.
#include <string>

#include "peers.hpp"

namespace crew_bench {

namespace {

constexpr std::size_t items = 1000000;

inline std::uint64_t map_item(std::size_t i) {
    std::uint64_t x = i;
    std::uint64_t steps = i % 100 + 1;
    for (std::uint64_t s = 0; s < steps; ++s) x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

}  // namespace

problem make_map_sum(const config&, std::vector<std::string>& notes) {
    problem p;
    p.name = "map_sum";
    p.title = "map_sum(1M)";
    p.what = "seed 004's imbalanced map-and-sum: item i costs i % 100 + 1 multiply-add steps";
    p.tasks = static_cast<double>(items);
    note_missing_peers(notes);
    p.impls.push_back(loop_impl("serial", make_no_env, [](no_env&, std::size_t) {
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < items; ++i) sum += map_item(i);
        return sum;
    }, true));
#if CREW_BENCH_HAVE_ALGORITHMS
    p.impls.push_back(loop_impl("crew", make_crew_env, [](crew::pool& pool, std::size_t) {
        return pool.run([] {
            return crew::parallel_transform_reduce(std::size_t{0}, items, std::uint64_t{0}, std::plus<>{},
                                                   [](std::size_t i) { return map_item(i); });
        });
    }));
    p.impls.push_back(loop_impl("crew-static", make_crew_env, [](crew::pool& pool, std::size_t) {
        return pool.run([] {
            return crew::parallel_transform_reduce(crew::static_partition, std::size_t{0}, items, std::uint64_t{0},
                                                   std::plus<>{}, [](std::size_t i) { return map_item(i); });
        });
    }));
#endif
    p.impls.push_back(loop_impl("static-split", make_no_env, [](no_env&, std::size_t t) {
        std::vector<std::uint64_t> partial(t);
        static_split(t, items, [&](std::size_t lo, std::size_t hi, std::size_t k) {
            std::uint64_t s = 0;
            for (std::size_t i = lo; i < hi; ++i) s += map_item(i);
            partial[k] = s;
        });
        std::uint64_t sum = 0;
        for (auto v : partial) sum += v;
        return sum;
    }));
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back(loop_impl("onetbb", make_tbb_env, [](tbb::task_arena& arena, std::size_t) {
        std::uint64_t sum = 0;
        arena.execute([&] {
            sum = tbb::parallel_reduce(
                tbb::blocked_range<std::size_t>(0, items), std::uint64_t{0},
                [](const tbb::blocked_range<std::size_t>& r, std::uint64_t acc) {
                    for (std::size_t i = r.begin(); i != r.end(); ++i) acc += map_item(i);
                    return acc;
                },
                std::plus<>{});
        });
        return sum;
    }));
#endif
#if CREW_BENCH_HAVE_OPENMP
    p.impls.push_back(loop_impl("openmp", make_no_env, [](no_env&, std::size_t t) {
        std::uint64_t sum = 0;
        long n = static_cast<long>(items);
        int nt = static_cast<int>(t);
#pragma omp parallel for reduction(+ : sum) num_threads(nt)
        for (long i = 0; i < n; ++i) sum += map_item(static_cast<std::size_t>(i));
        return sum;
    }));
#endif
    return p;
}

}  // namespace crew_bench
