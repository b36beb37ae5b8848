// fib(n): recursive Fibonacci, one fork per call, no cutoff (the public cross-runtime suites'
// definition). Tasks = joins = fib(n + 1) - 1; the per-task overhead column is the cost of one join.
#include <string>

#include "fork_join.hpp"

namespace crew_bench {

template <class Fork>
std::uint64_t fib(int n) {
    if (n < 2) return static_cast<std::uint64_t>(n);
    std::uint64_t a = 0, b = 0;
    Fork::join([&] { a = fib<Fork>(n - 1); }, [&] { b = fib<Fork>(n - 2); });
    return a + b;
}

problem make_fib(const config& cfg, std::vector<std::string>& notes) {
    int n = cfg.quick ? 32 : 39;
    problem p;
    p.name = "fib";
    p.title = "fib(" + std::to_string(n) + ")";
    p.size_note = cfg.quick ? "quick mode: n = 32 (full: 39)" : "";
    p.what = "recursive Fibonacci, one fork per call, no cutoff";
    std::uint64_t f0 = 0, f1 = 1;  // joins = fib(n + 1) - 1
    for (int i = 0; i < n + 1; ++i) {
        std::uint64_t f2 = f0 + f1;
        f0 = f1;
        f1 = f2;
    }
    p.tasks = static_cast<double>(f0 - 1);
    add_fork_join_impls(p, notes, [n]<class Fork>() { return fib<Fork>(n); });
    return p;
}

}  // namespace crew_bench
