// bench/join_instructions.cpp -- a small driver for counting instructions per fork-join operation
// (docs/OBSERVABILITY.md, "Metrics cost, session 9"): fib through crew::join, skynet through a
// 10-way crew::fork_join, and skynet through crew::task_group as the public cross-runtime suite
// writes it (9 x run, the 10th inline, wait; session 12), on a pool of one worker. Not part of the
// CMake build:
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude bench/join_instructions.cpp build/libcrew.a -o drv -lpthread
//   valgrind --tool=callgrind ./drv 18; valgrind --tool=callgrind ./drv 22
// instructions per join = (the second total - the first) / (joins(22) - joins(18)) = ... / 24476,
// where joins(n) = joins(n-1) + joins(n-2) + 1 (28656 - 4180); for skynet, `./drv 10000 s` and
// `./drv 100000 s`: per 10-way fork_join = (difference) / 10000 (11111 - 1111 fork_joins). Add
// -DCREW_METRICS=0 to the compile line for the metrics-off figure (the fast path is all in this
// translation unit; session 9 linked the same metrics-ON library). `g` instead of `s`: the
// task_group form; instructions per child = (difference) / 99990 (111110 - 11110 children, 10 per
// node), and the fork_join form's difference / 99990 is per child as well (9 forked, 1 inline).
// `t`: tree_sum's shape (bench/problems/tree_sum.cpp: a join of two void lambdas per inner node of
// a balanced tree); `./drv 100000 t` and `./drv 1000000 t`: per node = (difference) / 900000;
// `u` in place of `t`: the same walk without forks, for the per-node overhead (t - u).
// Session 15 (docs/BENCHMARKS.md): the same commands with clang++ in place of g++.
// Session 16: `b` builds the tree and walks nothing (the serial walk's own instructions per node
// are u - b); `v` is `t` with a and b declared after the leaf tests. A third argument R times R
// walks of t/u/v and prints ns per node after each (e.g. `chrt -f 10 ./drv 10000000 t 5`).
#include <crew/crew.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
long fib(int n) {
    if (n < 2) return n;
    auto [a, b] = crew::join([&] { return fib(n - 1); }, [&] { return fib(n - 2); });
    return a + b;
}
long sky(long num, long size) {
    if (size == 1) return num;
    long s[10];
    auto f = [&](int i) { s[i] = sky(num + i * (size / 10), size / 10); };
    crew::fork_join([&] { f(0); }, [&] { f(1); }, [&] { f(2); }, [&] { f(3); }, [&] { f(4); },
                    [&] { f(5); }, [&] { f(6); }, [&] { f(7); }, [&] { f(8); }, [&] { f(9); });
    long t = 0;
    for (long x : s) t += x;
    return t;
}
long sky_group(long num, long size) {
    if (size == 1) return num;
    long s[10];
    crew::task_group g;
    for (int i = 0; i < 9; ++i) g.run([&s, i, num, size] { s[i] = sky_group(num + i * (size / 10), size / 10); });
    s[9] = sky_group(num + 9 * (size / 10), size / 10);
    g.wait();
    long t = 0;
    for (long x : s) t += x;
    return t;
}
struct node {
    std::int64_t value;
    const node* left;
    const node* right;
};
const node* build(std::vector<node>& nodes, std::size_t n, std::size_t& next) {
    if (n == 0) return nullptr;
    node& here = nodes[next++];
    here.value = static_cast<std::int64_t>(next % 1000);
    const std::size_t left = (n - 1) / 2;
    here.left = build(nodes, left, next);
    here.right = build(nodes, n - 1 - left, next);
    return &here;
}
std::int64_t tree_sum(const node* n) {
    std::int64_t a = 0, b = 0;
    if (n->left == nullptr && n->right == nullptr) return n->value;
    if (n->left == nullptr) return n->value + tree_sum(n->right);
    if (n->right == nullptr) return n->value + tree_sum(n->left);
    crew::join([&] { a = tree_sum(n->left); }, [&] { b = tree_sum(n->right); });
    return n->value + a + b;
}
std::int64_t tree_sum_late(const node* n) {  // `v`: a and b declared where the join needs them
    if (n->left == nullptr && n->right == nullptr) return n->value;
    if (n->left == nullptr) return n->value + tree_sum_late(n->right);
    if (n->right == nullptr) return n->value + tree_sum_late(n->left);
    std::int64_t a = 0, b = 0;
    crew::join([&] { a = tree_sum_late(n->left); }, [&] { b = tree_sum_late(n->right); });
    return n->value + a + b;
}
std::int64_t tree_sum_serial(const node* n) {  // `u`: the same walk without forks (the baseline)
    if (n->left == nullptr && n->right == nullptr) return n->value;
    if (n->left == nullptr) return n->value + tree_sum_serial(n->right);
    if (n->right == nullptr) return n->value + tree_sum_serial(n->left);
    return n->value + tree_sum_serial(n->left) + tree_sum_serial(n->right);
}
int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: drv <fib n> | drv <skynet size> s|g | drv <tree nodes> t|u|v|b [reps]\n");
        return 2;
    }
    const long n = std::atol(argv[1]);
    crew::pool p(1);
    if (argc > 2 && (argv[2][0] == 't' || argv[2][0] == 'u' || argv[2][0] == 'v' || argv[2][0] == 'b')) {
        std::vector<node> nodes(static_cast<std::size_t>(n));
        std::size_t next = 0;
        const node* root = build(nodes, nodes.size(), next);
        const char k = argv[2][0];
        const int reps = argc > 3 ? std::atoi(argv[3]) : 1;
        for (int r = 0; r < reps; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            const long s = static_cast<long>(p.run([&] {
                return k == 'b' ? 0L : k == 't' ? tree_sum(root) : k == 'v' ? tree_sum_late(root) : tree_sum_serial(root);
            }));
            const auto t1 = std::chrono::steady_clock::now();
            std::printf("%ld %.3f ns/node\n", s, std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(n));
        }
    } else if (argc > 2 && argv[2][0] == 'g') std::printf("%ld\n", p.run([&] { return sky_group(0, n); }));
    else if (argc > 2) std::printf("%ld\n", p.run([&] { return sky(0, n); }));
    else std::printf("%ld\n", p.run([&] { return fib(static_cast<int>(n)); }));
}
