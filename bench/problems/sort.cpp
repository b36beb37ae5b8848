// sort: 10,000,000 random 32-bit integers (a fixed hash of the index). Each run copies the input
// (untimed) and sorts it; the check value is an order-sensitive hash of the sorted result.
#include <algorithm>
#include <string>
#include <vector>

#include "peers.hpp"

namespace crew_bench {

namespace {

struct state {
    std::vector<std::uint32_t> input, work;
    explicit state(std::size_t n) : input(n), work(n) {
        for (std::size_t i = 0; i < n; ++i) input[i] = static_cast<std::uint32_t>(mix64(i ^ 0x5eed));
    }
    void reset() { std::copy(input.begin(), input.end(), work.begin()); }
    std::uint64_t check() const { return sequence_hash(work.begin(), work.end()); }
};

}  // namespace

problem make_sort(const config& cfg, std::vector<std::string>& notes) {
    std::size_t n = cfg.quick ? 4000000 : 10000000;
    problem p;
    p.name = "sort";
    p.title = "sort(" + std::to_string(n / 1000000) + "M ints)";
    p.size_note = cfg.quick ? "quick mode: 4M ints (full: 10M)" : "";
    p.what = "sort random 32-bit integers: crew::parallel_sort vs std::sort vs tbb::parallel_sort";
    note_missing_peers(notes);
    auto input = make_lazy<state>(p, [n] { return std::make_unique<state>(n); });
    auto prepare = [input] { input->get().reset(); };
    auto check = [input] { return input->get().check(); };
    p.impls.push_back(checked_impl("serial", make_no_env, [input](no_env&, std::size_t) {
        std::sort(input->get().work.begin(), input->get().work.end());
    }, prepare, check, true));
#if CREW_BENCH_HAVE_ALGORITHMS
    p.impls.push_back(checked_impl("crew", make_crew_env, [input](crew::pool& pool, std::size_t) {
        pool.run([&] { crew::parallel_sort(input->get().work.begin(), input->get().work.end()); });
    }, prepare, check));
#endif
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back(checked_impl("onetbb", make_tbb_env, [input](tbb::task_arena& arena, std::size_t) {
        arena.execute([&] { tbb::parallel_sort(input->get().work.begin(), input->get().work.end()); });
    }, prepare, check));
#endif
    return p;
}

}  // namespace crew_bench
