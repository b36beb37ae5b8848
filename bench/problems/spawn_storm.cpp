// spawn_storm: 1,000,000 tiny tasks (each bumps a counter), submitted from an outside thread
// (spawn_storm_outside) or from inside a task (spawn_storm_inside), until all have run. The serial
// row calls the same closure in a loop; ns/task is the cost of one submitted task.
#include <atomic>
#include <memory>
#include <string>

#include "baselines/shared_queue_pool.hpp"
#include "baselines/stealing_pool.hpp"
#include "peers.hpp"

namespace crew_bench {

namespace {

struct counter {
    std::atomic<std::uint64_t> count{0};
    std::atomic<bool> done{false};
    std::uint64_t target = 0;
    void reset(std::uint64_t n) {
        count.store(0);
        done.store(false);
        target = n;
    }
    void bump() {
        // The last task raises the flag; acq_rel so the waiter sees every earlier bump.
        if (count.fetch_add(1, std::memory_order_acq_rel) + 1 == target) {
            done.store(true, std::memory_order_release);
            done.notify_all();
        }
    }
    void wait() {
        done.wait(false, std::memory_order_acquire);
    }
};

problem base(const config& cfg, bool inside, std::size_t& n) {
    n = cfg.quick ? 200000 : 1000000;
    problem p;
    p.name = inside ? "spawn_storm_inside" : "spawn_storm_outside";
    p.title = std::string("spawn storm ") + (inside ? "inside" : "outside") + " (" + std::to_string(n / 1000) + "k)";
    p.size_note = cfg.quick ? "quick mode: 200k tasks (full: 1M)" : "";
    p.what = std::string("tiny tasks submitted from ") + (inside ? "inside a task" : "an outside thread") + " until all ran";
    p.tasks = static_cast<double>(n);
    return p;
}

template <class Pool>
impl baseline_impl(const std::string& name, std::shared_ptr<counter> c, std::size_t n, bool inside) {
    return loop_impl(name, [](std::size_t t) { return std::make_shared<Pool>(t); }, [c, n, inside](Pool& pool, std::size_t) {
        c->reset(n);
        if (inside) {
            pool.run([&] {
                for (std::size_t i = 0; i < n; ++i) pool.spawn([cp = c.get()] { cp->bump(); });
                pool.help_until(c->done);
            });
        } else {
            for (std::size_t i = 0; i < n; ++i) pool.spawn([cp = c.get()] { cp->bump(); });
            c->wait();
        }
        return c->count.load();
    });
}

void add_impls(problem& p, std::size_t n, bool inside, std::vector<std::string>& notes) {
    note_missing_peers(notes);
    auto c = std::make_shared<counter>();
    p.impls.push_back(loop_impl("serial", make_no_env, [c, n](no_env&, std::size_t) {
        c->reset(n);
        for (std::size_t i = 0; i < n; ++i) c->bump();
        return c->count.load();
    }, true));
    p.impls.push_back(loop_impl("crew", make_crew_env, [c, n, inside](crew::pool& pool, std::size_t) {
        c->reset(n);
        if (inside) {
            pool.run([&] {
                crew::task_group g;
                for (std::size_t i = 0; i < n; ++i) g.run([cp = c.get()] { cp->bump(); });
                g.wait();
            });
        } else {
            for (std::size_t i = 0; i < n; ++i) pool.spawn([cp = c.get()] { cp->bump(); });
            c->wait();
        }
        return c->count.load();
    }));
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back(loop_impl("onetbb", make_tbb_env, [c, n, inside](tbb::task_arena& arena, std::size_t) {
        c->reset(n);
        if (inside) {
            arena.execute([&] {
                tbb::task_group g;
                for (std::size_t i = 0; i < n; ++i) g.run([cp = c.get()] { cp->bump(); });
                g.wait();
            });
        } else {
            for (std::size_t i = 0; i < n; ++i) arena.enqueue([cp = c.get()] { cp->bump(); });
            c->wait();
        }
        return c->count.load();
    }));
#endif
#if CREW_BENCH_HAVE_OPENMP
    if (inside) {
        p.impls.push_back(loop_impl("openmp", make_no_env, [c, n](no_env&, std::size_t t) {
            c->reset(n);
            counter* cp = c.get();
            int nt = static_cast<int>(t);
#pragma omp parallel num_threads(nt)
            {
#pragma omp single
                {
                    for (std::size_t i = 0; i < n; ++i) {
#pragma omp task
                        cp->bump();
                    }
#pragma omp taskwait
                }
            }
            return c->count.load();
        }));
    } else {
        add_note(notes, "spawn_storm_outside: OpenMP has no way to submit a task from a thread outside its team; no column.");
    }
#endif
    p.impls.push_back(baseline_impl<baseline::shared_queue_pool>("shared-queue", c, n, inside));
    p.impls.push_back(baseline_impl<baseline::stealing_pool>("mutex-deques", c, n, inside));
}

}  // namespace

problem make_spawn_storm_outside(const config& cfg, std::vector<std::string>& notes) {
    std::size_t n = 0;
    problem p = base(cfg, false, n);
    add_impls(p, n, false, notes);
    return p;
}

problem make_spawn_storm_inside(const config& cfg, std::vector<std::string>& notes) {
    std::size_t n = 0;
    problem p = base(cfg, true, n);
    add_impls(p, n, true, notes);
    return p;
}

}  // namespace crew_bench
