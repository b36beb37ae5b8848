// bench/tree_sum_factors.cpp -- where tree_sum's time goes at one worker (session 16): the serial
// walk of bench/problems/tree_sum.cpp, and the same walk with each part of what a private fork
// does (detail/fork_stack.hpp, crew::join) added back one at a time, in plain code without crew.
// It isolates the candidates on a machine without hardware counters: the depth word's
// store-to-load chain through memory, the thread-local loads, the job's frame stores.
// Not part of the CMake build:
//   g++ -std=c++20 -O3 -DNDEBUG bench/tree_sum_factors.cpp -o tsf && chrt -f 10 ./tsf 10000000 7
//   (clang++ in place of g++ for the other compiler; the arguments: nodes, reps)
// Prints, per variant, the best and the median ns per node over the reps.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct node {
    std::int64_t value;
    const node* left;
    const node* right;
};

std::uint64_t mix64(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

const node* build(std::vector<node>& nodes, std::size_t n, std::size_t& next) {
    if (n == 0) return nullptr;
    node& here = nodes[next++];
    here.value = static_cast<std::int64_t>(mix64(next) % 1000);
    const std::size_t left = (n - 1) / 2;
    here.left = build(nodes, left, next);
    here.right = build(nodes, n - 1 - left, next);
    return &here;
}

// A job as crew::join builds it in the forking frame: execute pointer, callable, completion, context.
struct job {
    void (*execute)(job*);
    void* fn;
    std::atomic<std::uint32_t> done;
    void* context;
};

// A fork array as detail/fork_stack.hpp keeps it: the depth word (depth in the low 32 bits, a
// count above), the oldest private index, the items, and the request flag on its own line.
struct forks {
    std::atomic<std::uint64_t> word{0};
    std::uint32_t top = 0;
    std::uint64_t limit = 1 << 20;
    job* items[1 << 10];
    alignas(64) std::atomic<std::uint8_t> request{0};
};

forks the_forks;
thread_local forks* tls_forks __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local void* tls_other __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local void* tls_context __attribute__((tls_model("initial-exec"))) = nullptr;
constexpr std::uint64_t step = 0xffffffffULL;  // count + 1, depth - 1

[[gnu::noinline]] void cold() { std::abort(); }
void run_job(job*) {}

// The serial walk (the baseline).
std::int64_t serial(const node* n) {
    if (n->left == nullptr && n->right == nullptr) return n->value;
    if (n->left == nullptr) return n->value + serial(n->right);
    if (n->right == nullptr) return n->value + serial(n->left);
    return n->value + serial(n->left) + serial(n->right);
}

// Options: Tls (the fork array found through two thread-local loads, as crew::join before session
// 16; one otherwise), Frame (the job's four stores), Chain (the depth word loaded from memory at each
// fork and take-back; otherwise the depth travels in a register and the word is only stored).
template <bool Tls, bool Frame, bool Chain>
std::int64_t walk(const node* n, forks* f, std::uint32_t d) {
    if (n->left == nullptr && n->right == nullptr) return n->value;
    if (n->left == nullptr) return n->value + walk<Tls, Frame, Chain>(n->right, f, d);
    if (n->right == nullptr) return n->value + walk<Tls, Frame, Chain>(n->left, f, d);
    if constexpr (Tls) {
        if (tls_other != nullptr) cold();
        f = tls_forks;
        if (f == nullptr) cold();
    }
    job j;
    job* jp = &j;
    if constexpr (Frame) {
        j.execute = &run_job;
        j.fn = &n;
        j.done.store(0, std::memory_order_relaxed);
        j.context = tls_context;
    } else {
        jp = reinterpret_cast<job*>(const_cast<node*>(n));
    }
    std::int64_t a;
    if constexpr (Chain) {
        const std::uint64_t w = f->word.load(std::memory_order_relaxed);
        if ((w & 0xffffffffULL) >= f->limit) cold();
        f->items[w & 0x3ff] = jp;
        f->word.store(w + 1, std::memory_order_relaxed);
        if (f->request.load(std::memory_order_relaxed) != 0) cold();
        a = walk<Tls, Frame, Chain>(n->left, f, d);
        const std::uint64_t w2 = f->word.load(std::memory_order_relaxed);
        if (static_cast<std::uint32_t>(w2) <= f->top) cold();
        f->word.store(w2 + step, std::memory_order_relaxed);
    } else {
        if (d >= f->limit) cold();
        f->items[d & 0x3ff] = jp;
        f->word.store(d + 1, std::memory_order_relaxed);
        if (f->request.load(std::memory_order_relaxed) != 0) cold();
        a = walk<Tls, Frame, Chain>(n->left, f, d + 1);
        if (d + 1 <= f->top) cold();
        f->word.store(d, std::memory_order_relaxed);
    }
    asm volatile("" ::"r"(jp) : "memory");  // the job's address escapes, as into the real array
    const std::int64_t b = walk<Tls, Frame, Chain>(n->right, f, d);
    return n->value + a + b;
}

template <class F>
void measure(const char* name, F fn, std::size_t nodes, int reps, std::int64_t expected) {
    std::vector<double> ns;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        const std::int64_t s = fn();
        const auto t1 = std::chrono::steady_clock::now();
        if (s != expected) {
            std::printf("%s: wrong sum\n", name);
            std::exit(1);
        }
        ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(nodes));
    }
    std::sort(ns.begin(), ns.end());
    std::printf("%-40s best %.3f  median %.3f ns/node\n", name, ns.front(), ns[ns.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 7;
    std::vector<node> nodes(n);
    std::size_t next = 0;
    const node* root = build(nodes, n, next);
    tls_forks = &the_forks;
    const std::int64_t expected = serial(root);
    forks* f = &the_forks;
    measure("serial", [&] { return serial(root); }, n, reps, expected);
    measure("word chain", [&] { return walk<false, false, true>(root, f, 0); }, n, reps, expected);
    measure("word chain + frame", [&] { return walk<false, true, true>(root, f, 0); }, n, reps, expected);
    measure("word chain + frame + 2 TLS", [&] { return walk<true, true, true>(root, f, 0); }, n, reps, expected);
    measure("depth in register", [&] { return walk<false, false, false>(root, f, 0); }, n, reps, expected);
    measure("depth in register + frame", [&] { return walk<false, true, false>(root, f, 0); }, n, reps, expected);
    measure("depth in register + frame + 2 TLS", [&] { return walk<true, true, false>(root, f, 0); }, n, reps, expected);
}
