// barrier: what a full memory barrier costs on this machine and compiler, the price of every
// owner pop of the Chase-Lev deque (and so of every crew::join). Each iteration is "relaxed store,
// barrier, relaxed load" on one thread, the Dekker shape of the pop: crew's policy fence
// (crew::detail::std_atomics::fence(seq_cst)), the standard fence as this compiler lowers it
// (clang: mfence; g++ >= 11: a locked or on the stack), and a seq_cst exchange used as the store.
// Compare the rows of one run, and runs built with g++ and clang (crew's fence must not depend on
// the compiler).
#include <atomic>
#include <string>
#include <vector>

#include <crew/detail/atomics.hpp>

#include "peers.hpp"

namespace crew_bench {

namespace {

std::atomic<unsigned> cell_a{0}, cell_b{0};

template <class Barrier>
sample measure(std::size_t n, Barrier barrier) {
    unsigned sum = 0;
    auto t0 = clock::now();
    for (std::size_t i = 0; i < n; ++i) {
        barrier(static_cast<unsigned>(i));
        sum += cell_b.load(std::memory_order_relaxed);
    }
    double s = seconds_since(t0);
    sample out;
    out.seconds = s;
    out.extras.emplace_back("ns_per_iteration", s / static_cast<double>(n) * 1e9);
    out.extras.emplace_back("checksum", static_cast<double>(sum & 1));
    return out;
}

impl once_impl(const std::string& name, std::size_t n, void (*barrier)(unsigned)) {
    return {name, [n, barrier](std::size_t) -> run_fn { return [n, barrier] { return measure(n, barrier); }; }, false, true};
}

}  // namespace

problem make_barrier(const config& cfg, std::vector<std::string>&) {
    std::size_t n = cfg.quick ? 5000000 : 20000000;
    problem p;
    p.name = "barrier";
    p.title = "store, barrier, load";
    p.size_note = cfg.quick ? "quick mode: 5M iterations (full: 20M)" : "";
    p.what = "one thread: relaxed store + full barrier + relaxed load, ns per iteration (extras)";
    p.impls.push_back(once_impl("crew-fence", n, [](unsigned i) {
        cell_a.store(i, std::memory_order_relaxed);
        crew::detail::std_atomics::fence(std::memory_order_seq_cst);
    }));
    p.impls.push_back(once_impl("std-fence", n, [](unsigned i) {
        cell_a.store(i, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
    }));
    p.impls.push_back(once_impl("xchg-store", n, [](unsigned i) { (void)cell_a.exchange(i, std::memory_order_seq_cst); }));
    p.impls.push_back(once_impl("no-barrier", n, [](unsigned i) { cell_a.store(i, std::memory_order_relaxed); }));
    return p;
}

}  // namespace crew_bench
