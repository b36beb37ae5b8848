// Porting pool configuration and per-thread state from oneTBB, std and Rayon to crew: each section
// is one row of docs/PORTING.md, with the original in a comment above the crew code.
// Runs as a program of its own (it configures the default pool, which a process does once).
#include <crew/crew.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
    std::printf("%-58s %s\n", what, ok ? "ok" : "FAILED");
    if (!ok) ++failures;
}

std::atomic<int> observed_entries{0};

}  // namespace

int main() {
    // ---- Rayon: ThreadPoolBuilder::new().num_threads(2).thread_name(|i| format!("app-{i}"))
    //             .start_handler(|i| ...).build_global()
    // ---- oneTBB: tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 2);
    //              (plus a task_scheduler_observer for the start handler)
    crew::pool_options global;
    global.threads = 2;       // num_threads / max_allowed_parallelism
    global.name = "app";      // threads app-0, app-1 (a prefix; Rayon takes a closure)
    global.on_thread_start = [](std::size_t) { observed_entries.fetch_add(1); };  // start_handler
    crew::configure_default_pool(global);  // before the first use, like build_global()
    auto [one, two] = crew::join([] { return 1; }, [] { return 2; });  // the default pool starts here
    check(one + two == 3 && crew::default_pool().size() == 2, "configure_default_pool (build_global, global_control)");
    try {
        crew::configure_default_pool(global);  // Rayon: build_global() returns Err the second time
        check(false, "configure after first use throws usage_error");
    } catch (const crew::usage_error&) {
        check(true, "configure after first use throws usage_error");
    }

    // ---- Rayon: rayon::current_num_threads()
    check(crew::current_pool_size() == 2, "current_pool_size (current_num_threads), outside");

    // ---- std: std::thread::hardware_concurrency()
    std::size_t cpus = crew::default_concurrency();  // affinity mask and cgroup quota, >= 1
    check(cpus >= 1, "default_concurrency (hardware_concurrency)");

    // ---- oneTBB: tbb::task_arena arena(3); arena.execute([&] { ... });
    // ---- Rayon:  let pool = ThreadPoolBuilder::new().num_threads(3).build()?; pool.install(|| ...);
    crew::pool arena(3);
    std::size_t inside = arena.run([] { return crew::current_pool_size(); });
    check(inside == 3, "pool(n).run (task_arena::execute, ThreadPool::install)");

    // ---- oneTBB: class observer : public tbb::task_scheduler_observer {
    //                  void on_scheduler_entry(bool) override { ... }
    //                  void on_scheduler_exit(bool) override { ... } };
    std::atomic<int> entries{0}, exits{0};
    {
        crew::pool_options options;
        options.threads = 2;
        options.on_thread_start = [&](std::size_t) { entries.fetch_add(1); };  // on_scheduler_entry
        options.on_thread_stop = [&](std::size_t) { exits.fetch_add(1); };     // on_scheduler_exit
        crew::pool observed(options);
        observed.run([] {});
    }
    check(entries == 2 && exits == 2, "on_thread_start/stop (task_scheduler_observer)");

    // ---- oneTBB: tbb::combinable<long> sum; ... sum.local() += i; ... sum.combine(std::plus<>{})
    crew::combinable<long> sum;
    crew::parallel_for(0, 100'000, [&](int i) { sum.local() += i; });
    check(sum.combine(std::plus<>{}) == 4999950000L, "combinable (tbb::combinable)");

    // ---- oneTBB: tbb::enumerable_thread_specific<std::vector<int>> ets;
    //              for (auto& v : ets) ...;
    crew::enumerable_thread_specific<std::vector<int>> evens;  // an alias of crew::combinable
    crew::parallel_for(0, 1000, [&](int i) {
        if (i % 2 == 0) evens.local().push_back(i);
    });
    std::size_t count = 0;
    for (const std::vector<int>& part : evens) count += part.size();
    check(count == 500, "enumerable_thread_specific (iteration)");

    // Hooks run on the workers as they start, not inside configure or the first use: wait a little.
    for (int ms = 0; ms < 10'000 && observed_entries.load() != 2; ++ms)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    check(observed_entries.load() == 2, "the default pool's start hook ran on both workers");
    return failures == 0 ? 0 : 1;
}
