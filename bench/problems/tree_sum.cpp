// tree_sum: the sum of a balanced binary tree of N nodes, one fork per node and no cutoff (Spice's
// benchmark). The nodes are built once (untimed) in one array, in depth-first order as a recursive
// builder allocates them; each holds its value and pointers to its children. Tasks = N (one fork
// per node, leaves included, as Spice counts them).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fork_join.hpp"
#include "group_forks.hpp"

namespace crew_bench {

namespace {

struct node {
    std::int64_t value;
    const node* left;
    const node* right;
};

struct tree {
    std::vector<node> nodes;
    const node* root = nullptr;
    std::uint64_t expected = 0;

    explicit tree(std::size_t n) : nodes(n) {
        std::size_t next = 0;
        root = build(n, next);
    }

    // A balanced subtree of n nodes, built in depth-first order from nodes[next].
    const node* build(std::size_t n, std::size_t& next) {
        if (n == 0) return nullptr;
        node& here = nodes[next++];
        here.value = static_cast<std::int64_t>(mix64(next) % 1000);
        expected += static_cast<std::uint64_t>(here.value);
        const std::size_t left = (n - 1) / 2;
        here.left = build(left, next);
        here.right = build(n - 1 - left, next);
        return &here;
    }
};

template <class Fork>
std::int64_t sum(const node* n) {
    std::int64_t a = 0, b = 0;
    if (n->left == nullptr && n->right == nullptr) return n->value;
    if (n->left == nullptr) return n->value + sum<Fork>(n->right);  // a node of two: one child
    if (n->right == nullptr) return n->value + sum<Fork>(n->left);
    Fork::join([&] { a = sum<Fork>(n->left); }, [&] { b = sum<Fork>(n->right); });
    return n->value + a + b;
}

}  // namespace

problem make_tree_sum(const config& cfg, std::vector<std::string>& notes) {
    const std::size_t n = cfg.quick ? 10'000'000 : 100'000'000;
    problem p;
    p.name = "tree_sum";
    p.title = "tree_sum(" + std::to_string(n / 1'000'000) + "M nodes)";
    p.size_note = cfg.quick ? "quick mode: 10M nodes (full: 100M)" : "";
    p.what = "sum of a balanced binary tree, one fork per inner node, no cutoff (Spice's benchmark)";
    p.tasks = static_cast<double>(n);
    p.bytes = static_cast<double>(n * sizeof(node));
    auto input = make_lazy<tree>(p, [n] { return std::make_unique<tree>(n); });
    auto prepare = [input] { input->get(); };
    auto kernel = [input]<class Fork>() {
        const tree& t = input->get();
        const std::uint64_t s = static_cast<std::uint64_t>(sum<Fork>(t.root));
        return s == t.expected ? s : ~s;  // a wrong sum shows as a check mismatch
    };
    add_fork_join_impls(p, notes, kernel, prepare);
    add_crew_shapes(p, kernel, prepare);
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back({"onetbb task_group", [=](std::size_t t) -> run_fn {
                           auto arena = std::make_shared<tbb::task_arena>(static_cast<int>(t));
                           arena->initialize();
                           return [=] {
                               prepare();
                               return timed([&] {
                                   std::uint64_t r = 0;
                                   arena->execute([&] { r = kernel.template operator()<tbb_group_fork>(); });
                                   return r;
                               });
                           };
                       }});
#endif
    return p;
}

}  // namespace crew_bench
