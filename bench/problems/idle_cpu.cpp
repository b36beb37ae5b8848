// idle_cpu: the CPU time a pool burns while idle. Each run gives the runtime a short burst of
// fork-join work, then sleeps 1 s and reads the process's CPU time (getrusage: every thread) across
// that second. "no-pool" measures the same second with no runtime running in it (the floor; other
// runtimes built earlier in this process are idle too). Reported as % of one core.
#include <sys/resource.h>

#include <string>
#include <thread>

#include "fork_join.hpp"
#include "peers.hpp"

namespace crew_bench {

namespace {

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto tv = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
    return tv(u.ru_utime) + tv(u.ru_stime);
}

template <class Fork>
std::uint64_t burst(int depth) {
    if (depth == 0) return 1;
    std::uint64_t a = 0, b = 0;
    Fork::join([&] { a = burst<Fork>(depth - 1); }, [&] { b = burst<Fork>(depth - 1); });
    return a + b;
}

sample idle_second() {
    double c0 = cpu_seconds();
    auto t0 = clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    double used = cpu_seconds() - c0;
    double wall = seconds_since(t0);
    sample s;
    s.seconds = used;
    s.extras.emplace_back("cpu_%", used / wall * 100.0);
    return s;
}

template <class Env, class Burst>
impl idle_impl(const std::string& name, Env make_env, Burst run_burst) {
    return {name, [=](std::size_t t) -> run_fn {
                auto env = make_env(t);
                return [=] {
                    run_burst(*env, t);
                    return idle_second();
                };
            }};
}

}  // namespace

problem make_idle_cpu(const config&, std::vector<std::string>& notes) {
    problem p;
    p.name = "idle_cpu";
    p.title = "idle CPU (1 s)";
    p.what = "CPU time used by the whole process during 1 s of idleness right after a burst of work";
    p.time_label = "CPU time used in 1 s idle";
    p.max_reps = 1;
    note_missing_peers(notes);
    p.impls.push_back({"no-pool", [](std::size_t) -> run_fn { return [] { return idle_second(); }; }, false, true});
    p.impls.push_back(idle_impl("crew", make_crew_env, [](crew::pool& pool, std::size_t) {
        do_not_optimize(pool.run([] { return burst<crew_fork>(16); }));
    }));
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back(idle_impl("onetbb", make_tbb_env, [](tbb::task_arena& arena, std::size_t) {
        arena.execute([] { do_not_optimize(burst<tbb_fork>(16)); });
    }));
#endif
#if CREW_BENCH_HAVE_OPENMP
    p.impls.push_back(idle_impl("openmp", make_no_env, [](no_env&, std::size_t t) {
        int nt = static_cast<int>(t);
        std::uint64_t r = 0;
#pragma omp parallel num_threads(nt)
        {
#pragma omp single
            r = burst<omp_fork>(12);
        }
        do_not_optimize(r);
    }));
#endif
    p.impls.push_back(idle_impl("shared-queue", [](std::size_t t) { return std::make_shared<baseline::shared_queue_pool>(t); },
                                [](baseline::shared_queue_pool& pool, std::size_t) {
                                    std::uint64_t r = 0;
                                    pool.run([&] { r = burst<shared_queue_fork>(14); });
                                    do_not_optimize(r);
                                }));
    p.impls.push_back(idle_impl("mutex-deques", [](std::size_t t) { return std::make_shared<baseline::stealing_pool>(t); },
                                [](baseline::stealing_pool& pool, std::size_t) {
                                    std::uint64_t r = 0;
                                    pool.run([&] { r = burst<stealing_fork>(14); });
                                    do_not_optimize(r);
                                }));
    return p;
}

}  // namespace crew_bench
