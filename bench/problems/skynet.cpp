// skynet: a 10-ary tree of depth 8 (10^8 leaves); each leaf returns its index, sums go up.
// Tasks = every node below the root (10 + 100 + ... + 10^depth). Besides the join-based rows (10
// children by binary splitting), crew runs it in its task_group shape (9 x run + the 10th inline +
// wait, as the public suite writes it for task_group runtimes) and with one 10-way fork_join.
#include <array>
#include <string>

#include "fork_join.hpp"
#include "group_forks.hpp"

namespace crew_bench {

template <class Fork>
std::uint64_t skynet(std::uint64_t base, int depth, int max_depth) {
    if (depth == max_depth) return base;
    std::uint64_t offset = 1;
    for (int i = 0; i < max_depth - depth - 1; ++i) offset *= 10;
    std::array<std::uint64_t, 10> sums{};
    Fork::for_each(10, [&](int i) {
        sums[static_cast<std::size_t>(i)] = skynet<Fork>(base + offset * static_cast<std::uint64_t>(i), depth + 1, max_depth);
    });
    std::uint64_t total = 0;
    for (auto s : sums) total += s;
    return total;
}

problem make_skynet(const config& cfg, std::vector<std::string>& notes) {
    int depth = cfg.quick ? 6 : 8;
    problem p;
    p.name = "skynet";
    p.title = "skynet(depth " + std::to_string(depth) + ")";
    p.size_note = cfg.quick ? "quick mode: depth 6, 10^6 leaves (full: depth 8, 10^8 leaves)" : "";
    p.what = "10-ary tree, each leaf returns its index, sums go up";
    double nodes = 0, level = 1;
    for (int d = 1; d <= depth; ++d) nodes += (level *= 10);
    p.tasks = nodes;
    auto kernel = [depth]<class Fork>() { return skynet<Fork>(0, 0, depth); };
    add_fork_join_impls(p, notes, kernel);
    add_crew_shapes(p, kernel, [] {});
    return p;
}

}  // namespace crew_bench
