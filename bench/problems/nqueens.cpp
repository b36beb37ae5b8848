// nqueens(n): count every placement of n queens; a task per valid placement of the next queen
// (the legal columns are listed first, then one child per legal column).
#include <array>
#include <string>

#include "fork_join.hpp"
#include "group_forks.hpp"

namespace crew_bench {

namespace {

constexpr int max_n = 16;
using board = std::array<signed char, max_n>;

template <class Fork>
std::uint64_t nqueens(int n, int row, const board& b) {
    if (row == n) return 1;
    std::array<signed char, max_n> cols{};
    int k = 0;
    for (int c = 0; c < n; ++c) {
        bool ok = true;
        for (int r = 0; r < row; ++r) {
            int q = b[static_cast<std::size_t>(r)];
            if (q == c || q == c - (row - r) || q == c + (row - r)) {
                ok = false;
                break;
            }
        }
        if (ok) cols[static_cast<std::size_t>(k++)] = static_cast<signed char>(c);
    }
    if (k == 0) return 0;
    std::array<std::uint64_t, max_n> counts{};
    Fork::for_each(k, [&](int i) {
        board next = b;
        next[static_cast<std::size_t>(row)] = cols[static_cast<std::size_t>(i)];
        counts[static_cast<std::size_t>(i)] = nqueens<Fork>(n, row + 1, next);
    });
    std::uint64_t total = 0;
    for (int i = 0; i < k; ++i) total += counts[static_cast<std::size_t>(i)];
    return total;
}

// Tree nodes below the root (one task each).
std::uint64_t count_tasks(int n, int row, board& b) {
    if (row == n) return 0;
    std::uint64_t tasks = 0;
    for (int c = 0; c < n; ++c) {
        bool ok = true;
        for (int r = 0; r < row; ++r) {
            int q = b[static_cast<std::size_t>(r)];
            if (q == c || q == c - (row - r) || q == c + (row - r)) ok = false;
        }
        if (!ok) continue;
        b[static_cast<std::size_t>(row)] = static_cast<signed char>(c);
        tasks += 1 + count_tasks(n, row + 1, b);
    }
    return tasks;
}

}  // namespace

problem make_nqueens(const config& cfg, std::vector<std::string>& notes) {
    int n = cfg.quick ? 12 : 14;
    problem p;
    p.name = "nqueens";
    p.title = "nqueens(" + std::to_string(n) + ")";
    p.size_note = cfg.quick ? "quick mode: n = 12 (full: 14)" : "";
    p.what = "count all solutions, a task per valid placement of the next queen";
    board b{};
    p.tasks = static_cast<double>(count_tasks(n, 0, b));
    auto kernel = [n]<class Fork>() { return nqueens<Fork>(n, 0, board{}); };
    add_fork_join_impls(p, notes, kernel);
    add_crew_shapes(p, kernel, [] {});  // "crew task_group" (issue 13 item 2) and "crew fork_join"
    return p;
}

}  // namespace crew_bench
