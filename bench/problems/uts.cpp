// uts: unbalanced tree search on a binomial tree (as in the UTS suite's T3 family): the root has
// b0 children; every other node has m children with probability q, else none. With q * m just
// under 1 the subtree sizes vary wildly, which is what makes the load unpredictable. A node's
// random draw is a hash of its parent's state and its index (fixed seed), so the tree is the same
// for every runtime and thread count. The check value is the node count.
#include <array>
#include <string>
#include <vector>

#include "fork_join.hpp"

namespace crew_bench {

namespace {

constexpr int uts_m = 8;
constexpr double uts_q = 0.1240;  // q * m = 0.992

template <class Fork>
std::uint64_t uts_subtree(std::uint64_t state) {
    double u = static_cast<double>(state >> 11) * 0x1.0p-53;
    if (u >= uts_q) return 1;
    std::array<std::uint64_t, uts_m> counts{};
    Fork::for_each(uts_m, [&](int i) {
        counts[static_cast<std::size_t>(i)] = uts_subtree<Fork>(mix64(state + static_cast<std::uint64_t>(i + 1)));
    });
    std::uint64_t total = 1;
    for (auto c : counts) total += c;
    return total;
}

template <class Fork>
std::uint64_t uts_root(int b0, std::uint64_t seed) {
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(b0));
    std::uint64_t root = mix64(seed);
    Fork::for_each(b0, [&](int i) {
        counts[static_cast<std::size_t>(i)] = uts_subtree<Fork>(mix64(root + static_cast<std::uint64_t>(i + 1)));
    });
    std::uint64_t total = 1;
    for (auto c : counts) total += c;
    return total;
}

}  // namespace

problem make_uts(const config& cfg, std::vector<std::string>& notes) {
    int b0 = cfg.quick ? 4000 : 40000;
    std::uint64_t seed = 19;
    problem p;
    p.name = "uts";
    p.size_note = cfg.quick ? "quick mode: root degree 4,000 (full: 40,000)" : "";
    p.what = "binomial unbalanced tree, m = 8, q = 0.124, fixed seed; counts nodes";
    std::uint64_t nodes = uts_root<serial_fork>(b0, seed);
    p.title = "uts(" + std::to_string(nodes) + " nodes)";
    p.tasks = static_cast<double>(nodes - 1);
    add_fork_join_impls(p, notes, [b0, seed]<class Fork>() { return uts_root<Fork>(b0, seed); });
    return p;
}

}  // namespace crew_bench
