// bench/fork_join.hpp -- one kernel, every runtime: the fork policies and the grid builder.
//
// A recursive kernel is written once as a template on a Fork policy with two operations:
//   Fork::join(f, g)         run f and g, potentially in parallel, and wait for both;
//   Fork::for_each(k, body)  run body(0..k-1), potentially in parallel, and wait for all.
// Each runtime implements them the way its own documentation and the public cross-runtime suites
// do: oneTBB with parallel_invoke and task_group (run k-1, run_and_wait the last), OpenMP with
// `task` + `taskwait` inside one `parallel`/`single` region, crew and the two seed baselines with
// their join (k children by binary splitting). add_fork_join_impls() turns a kernel into the row
// of implementations for a problem; peers not built in are skipped with a note.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <crew/crew.hpp>

#include "baselines/shared_queue_pool.hpp"
#include "baselines/stealing_pool.hpp"
#include "harness.hpp"

#if CREW_BENCH_HAVE_TBB
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#endif
#if CREW_BENCH_HAVE_OPENMP
#include <omp.h>
#endif

namespace crew_bench {

// k children by binary splitting over a two-way join.
template <class Join, class B>
void split_for_each(int lo, int hi, B& body) {
    if (hi - lo == 1) {
        body(lo);
        return;
    }
    int mid = lo + (hi - lo) / 2;
    Join::join([&] { split_for_each<Join>(lo, mid, body); }, [&] { split_for_each<Join>(mid, hi, body); });
}

struct serial_fork {
    template <class F, class G>
    static void join(F&& f, G&& g) {
        f();
        g();
    }
    template <class B>
    static void for_each(int k, B&& body) {
        for (int i = 0; i < k; ++i) body(i);
    }
};

struct crew_fork {
    template <class F, class G>
    static void join(F&& f, G&& g) {
        crew::join(f, g);
    }
    template <class B>
    static void for_each(int k, B&& body) {
        split_for_each<crew_fork>(0, k, body);
    }
};

struct shared_queue_fork {
    template <class F, class G>
    static void join(F&& f, G&& g) {
        baseline::shared_queue_pool::join(f, g);
    }
    template <class B>
    static void for_each(int k, B&& body) {
        split_for_each<shared_queue_fork>(0, k, body);
    }
};

struct stealing_fork {
    template <class F, class G>
    static void join(F&& f, G&& g) {
        baseline::stealing_pool::join(f, g);
    }
    template <class B>
    static void for_each(int k, B&& body) {
        split_for_each<stealing_fork>(0, k, body);
    }
};

#if CREW_BENCH_HAVE_TBB
struct tbb_fork {
    template <class F, class G>
    static void join(F&& f, G&& g) {
        tbb::parallel_invoke(f, g);
    }
    template <class B>
    static void for_each(int k, B&& body) {
        tbb::task_group tg;
        for (int i = 0; i + 1 < k; ++i) tg.run([&body, i] { body(i); });
        tg.run_and_wait([&body, k] { body(k - 1); });
    }
};
#endif

#if CREW_BENCH_HAVE_OPENMP
struct omp_fork {
    template <class F, class G>
    static void join(F&& f, G&& g) {
#pragma omp task default(shared)
        f();
        g();
#pragma omp taskwait
    }
    template <class B>
    static void for_each(int k, B&& body) {
        for (int i = 0; i + 1 < k; ++i) {
#pragma omp task default(shared) firstprivate(i)
            body(i);
        }
        body(k - 1);
#pragma omp taskwait
    }
};
#endif

void add_note(std::vector<std::string>& notes, const std::string& note);  // once per distinct note

// Each runtime's row: the pool or arena is built once per cell (untimed); prepare() runs before
// every timed run (untimed); the kernel's return value is the check.
template <class Kernel, class Prepare>
impl serial_row(Kernel kernel, Prepare prepare) {
    return {"serial", [=](std::size_t) -> run_fn {
                return [=] {
                    prepare();
                    return timed([&] { return kernel.template operator()<serial_fork>(); });
                };
            },
            true};
}

template <class Kernel, class Prepare>
impl crew_row(Kernel kernel, Prepare prepare) {
    return {"crew", [=](std::size_t t) -> run_fn {
                auto pool = std::make_shared<crew::pool>(t);
                return [=] {
                    prepare();
                    return timed([&] { return pool->run([&] { return kernel.template operator()<crew_fork>(); }); });
                };
            }};
}

#if CREW_BENCH_HAVE_TBB
template <class Kernel, class Prepare>
impl tbb_row(Kernel kernel, Prepare prepare) {
    return {"onetbb", [=](std::size_t t) -> run_fn {
                auto arena = std::make_shared<tbb::task_arena>(static_cast<int>(t));
                arena->initialize();
                return [=] {
                    prepare();
                    return timed([&] {
                        std::uint64_t r = 0;
                        arena->execute([&] { r = kernel.template operator()<tbb_fork>(); });
                        return r;
                    });
                };
            }};
}
#endif

#if CREW_BENCH_HAVE_OPENMP
template <class Kernel, class Prepare>
impl omp_row(Kernel kernel, Prepare prepare) {
    return {"openmp", [=](std::size_t t) -> run_fn {
                return [=] {
                    prepare();
                    return timed([&] {
                        std::uint64_t r = 0;
                        int nt = static_cast<int>(t);
#pragma omp parallel num_threads(nt) default(shared)
                        {
#pragma omp single
                            r = kernel.template operator()<omp_fork>();
                        }
                        return r;
                    });
                };
            }};
}
#endif

template <class Pool, class Fork, class Kernel, class Prepare>
impl baseline_row(const char* name, Kernel kernel, Prepare prepare) {
    return {name, [=](std::size_t t) -> run_fn {
                auto pool = std::make_shared<Pool>(t);
                return [=] {
                    prepare();
                    return timed([&] {
                        std::uint64_t r = 0;
                        pool->run([&] { r = kernel.template operator()<Fork>(); });
                        return r;
                    });
                };
            }};
}

// Runs `kernel.template operator()<Fork>()` (returning the check value) on every runtime; calls
// prepare() before each timed run (untimed).
template <class Kernel, class Prepare>
void add_fork_join_impls(problem& p, std::vector<std::string>& notes, Kernel kernel, Prepare prepare) {
    (void)notes;  // used only when a peer is missing
    p.impls.push_back(serial_row(kernel, prepare));
    p.impls.push_back(crew_row(kernel, prepare));
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back(tbb_row(kernel, prepare));
#else
    add_note(notes, "oneTBB (libtbb-dev) was not found when crew-bench was built: its columns are skipped.");
#endif
#if CREW_BENCH_HAVE_OPENMP
    p.impls.push_back(omp_row(kernel, prepare));
#else
    add_note(notes, "OpenMP was not found when crew-bench was built: its columns are skipped.");
#endif
    p.impls.push_back(baseline_row<baseline::shared_queue_pool, shared_queue_fork>("shared-queue", kernel, prepare));
    p.impls.push_back(baseline_row<baseline::stealing_pool, stealing_fork>("mutex-deques", kernel, prepare));
}

template <class Kernel>
void add_fork_join_impls(problem& p, std::vector<std::string>& notes, Kernel kernel) {
    add_fork_join_impls(p, notes, kernel, [] {});
}

}  // namespace crew_bench
