// bench/problems/group_forks.hpp -- crew's other fork shapes, for the problems that compare them
// with crew::join: task_group as the public cross-runtime suites write it for task_group runtimes
// (k-1 x run, the k-th inline, wait) and crew::fork_join (k callables in one call).
#pragma once

#include <string>
#include <utility>

#include "fork_join.hpp"

namespace crew_bench {

struct crew_group_fork {
    template <class F, class G>
    static void join(F&& f, G&& g) {
        crew::task_group tg;
        tg.run(f);
        g();
        tg.wait();
    }
    template <class B>
    static void for_each(int k, B&& body) {
        crew::task_group tg;
        for (int i = 0; i + 1 < k; ++i) tg.run([&body, i] { body(i); });
        body(k - 1);
        tg.wait();
    }
};

struct crew_fork_join_fork {
    template <class F, class G>
    static void join(F&& f, G&& g) {
        crew::fork_join(f, g);
    }
    template <class B>
    static void for_each(int k, B&& body) {
        if (k == 10)
            ten(body, std::make_index_sequence<10>{});
        else
            split_for_each<crew_fork>(0, k, body);
    }

private:
    template <class B, std::size_t... I>
    static void ten(B& body, std::index_sequence<I...>) {
        crew::fork_join([&body] { body(static_cast<int>(I)); }...);
    }
};

#if CREW_BENCH_HAVE_TBB
// oneTBB's task_group for a two-way fork (run one, run_and_wait the other).
struct tbb_group_fork {
    template <class F, class G>
    static void join(F&& f, G&& g) {
        tbb::task_group tg;
        tg.run(f);
        tg.run_and_wait(g);
    }
    template <class B>
    static void for_each(int k, B&& body) {
        tbb_fork::for_each(k, body);
    }
};
#endif

// A crew row under another name, forking with Fork.
template <class Fork, class Kernel, class Prepare>
impl crew_shape_row(std::string name, Kernel kernel, Prepare prepare) {
    return {std::move(name), [=](std::size_t t) -> run_fn {
                auto pool = std::make_shared<crew::pool>(t);
                return [=] {
                    prepare();
                    return timed([&] { return pool->run([&] { return kernel.template operator()<Fork>(); }); });
                };
            }};
}

// The crew task_group and fork_join shapes, after the rows of add_fork_join_impls.
template <class Kernel, class Prepare>
void add_crew_shapes(problem& p, Kernel kernel, Prepare prepare) {
    p.impls.push_back(crew_shape_row<crew_group_fork>("crew task_group", kernel, prepare));
    p.impls.push_back(crew_shape_row<crew_fork_join_fork>("crew fork_join", kernel, prepare));
}

}  // namespace crew_bench
