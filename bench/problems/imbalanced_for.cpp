// imbalanced_for: the seeds' factory example. 100,000 items cost 1 to 10 units each (a fixed hash
// of the index), and every 64th item of the first half is 100x heavier, so the first half holds
// about 70% of the work: a static equal split on 2 threads can reach only about 1.4x. One unit is
// 32 dependent multiply-add steps. The check value is the wrapping sum of every item's result.
#include <string>
#include <vector>

#include "peers.hpp"

namespace crew_bench {

namespace {

constexpr std::size_t items = 100000;

inline std::uint64_t item_cost(std::size_t i) {
    std::uint64_t units = 1 + mix64(i) % 10;
    if (i < items / 2 && i % 64 == 0) units *= 100;
    return units * 32;
}

inline std::uint64_t item_work(std::size_t i) {
    std::uint64_t x = i, steps = item_cost(i);
    for (std::uint64_t s = 0; s < steps; ++s) x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

struct state {
    std::vector<std::uint64_t> out = std::vector<std::uint64_t>(items);
    std::uint64_t sum() const {
        std::uint64_t s = 0;
        for (auto v : out) s += v;
        return s;
    }
};

}  // namespace

problem make_imbalanced_for(const config&, std::vector<std::string>& notes) {
    problem p;
    p.name = "imbalanced_for";
    p.title = "imbalanced_for(100k)";
    p.what = "100,000 items costing 1-10 units, every 64th item of the first half 100x heavier; "
             "crew's parallel loop against a static equal split";
    p.tasks = static_cast<double>(items);
    note_missing_peers(notes);
    auto st = std::make_shared<state>();
    p.impls.push_back(loop_impl("serial", make_no_env, [st](no_env&, std::size_t) {
        for (std::size_t i = 0; i < items; ++i) st->out[i] = item_work(i);
        return st->sum();
    }, true));
#if CREW_BENCH_HAVE_ALGORITHMS
    p.impls.push_back(loop_impl("crew", make_crew_env, [st](crew::pool& pool, std::size_t) {
        return pool.run([&] {
            crew::parallel_for(std::size_t{0}, items, [&](std::size_t i) { st->out[i] = item_work(i); });
            return st->sum();
        });
    }));
    p.impls.push_back(loop_impl("crew-static", make_crew_env, [st](crew::pool& pool, std::size_t) {
        return pool.run([&] {
            crew::parallel_for(crew::static_partition, std::size_t{0}, items,
                               [&](std::size_t i) { st->out[i] = item_work(i); });
            return st->sum();
        });
    }));
#endif
    p.impls.push_back(loop_impl("static-split", make_no_env, [st](no_env&, std::size_t t) {
        static_split(t, items, [&](std::size_t lo, std::size_t hi, std::size_t) {
            for (std::size_t i = lo; i < hi; ++i) st->out[i] = item_work(i);
        });
        return st->sum();
    }));
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back(loop_impl("onetbb", make_tbb_env, [st](tbb::task_arena& arena, std::size_t) {
        arena.execute([&] { tbb::parallel_for(std::size_t{0}, items, [&](std::size_t i) { st->out[i] = item_work(i); }); });
        return st->sum();
    }));
#endif
#if CREW_BENCH_HAVE_OPENMP
    p.impls.push_back(loop_impl("openmp", make_no_env, [st](no_env&, std::size_t t) {
        long n = static_cast<long>(items);
        int nt = static_cast<int>(t);
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt)
        for (long i = 0; i < n; ++i) st->out[static_cast<std::size_t>(i)] = item_work(static_cast<std::size_t>(i));
        return st->sum();
    }));
#endif
    return p;
}

}  // namespace crew_bench
