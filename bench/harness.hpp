// bench/harness.hpp -- what crew-bench measures: problems, implementations, cells, results.
//
// A problem (fib, skynet, ...) has a list of implementations (serial, crew, oneTBB, OpenMP, the two
// seed baselines). An implementation is a factory: given a thread count it builds whatever it needs
// (a pool, an arena, input data) outside the timed region and returns a run function; each call of
// that function runs the problem once and reports its own time (so input copies stay untimed) and
// a check value that must equal the serial implementation's.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace crew_bench {

struct sample {
    double seconds = 0;
    std::uint64_t check = 0;                               // must equal the serial answer
    std::vector<std::pair<std::string, double>> extras;  // named figures (p99, GB/s, ...)
};

using run_fn = std::function<sample()>;
using impl_factory = std::function<run_fn(std::size_t threads)>;

struct impl {
    std::string name;
    impl_factory make;
    bool serial = false;  // the reference: run once, at "1 thread"
    bool once = false;    // not a thread-count series (a floor, a single-threaded probe): run once
};

struct problem {
    std::string name;       // as given to --problems
    std::string title;      // e.g. "fib(39)"
    std::string size_note;  // what quick mode changed, or ""
    std::string what;       // one line: what is measured
    double tasks = 0;       // forks/tasks per run (per-task overhead column), 0 = not applicable
    double bytes = 0;       // bytes streamed per run (GB/s column), 0 = not applicable
    std::string time_label = "time";  // what "time" means for this problem (e.g. "p50 latency")
    int max_reps = 0;                 // > 0: at most this many reps per cell (slow probes)
    std::function<void()> release;    // frees the problem's input after its last cell
    std::vector<impl> impls;
};

struct config {
    bool quick = true;
    std::vector<std::size_t> threads;
    int reps = 3;
    std::vector<std::string> problems;  // empty: all
    std::vector<std::string> impls;     // empty: all (the serial baseline always runs)
    std::string json_path;
    std::string html_path;
    std::string command;
    double cell_budget_s = 8;  // stop adding reps to a cell once it used this much time
};

// One measured cell: a problem, an implementation, a thread count.
struct cell {
    std::string problem;
    std::string impl;
    std::size_t threads = 1;
    bool serial = false;
    bool once = false;
    std::vector<double> times;  // seconds, one per rep
    double median = 0, min = 0, max = 0;
    double speedup = 0;      // serial median / median; 0 = not applicable
    double overhead_ns = 0;  // (threads * median - serial median) / tasks; only when tasks > 0
    bool has_overhead = false;
    double gbps = 0;         // bytes / median; 0 = not applicable
    double rss_mib = 0;      // peak resident set size during the cell
    double cpu_median = 0;   // process CPU time (all threads) per run, median over the reps
    std::vector<std::pair<std::string, double>> extras;  // medians over reps
    std::string error;       // non-empty: the cell failed (wrong answer, exception)
    std::string note;
};

struct target_check {
    std::string name;    // the target, in words
    std::string detail;  // the measured figures
    bool met = false;
    bool evaluated = false;  // false: the cells it needs were not run
};

struct results {
    config cfg;
    std::vector<problem> problems;  // titles and notes (impls unused after the run)
    std::vector<cell> cells;
    std::vector<std::string> notes;  // skipped peers, quick-mode sizes
    std::vector<target_check> targets;
    std::string machine;   // CPU, cores, kernel, compiler
    std::string date;      // UTC
    double total_seconds = 0;
    double capacity_before = 0, capacity_after = 0;  // parallel_capacity at the largest thread count
};

// ---- helpers for implementations ----
using clock = std::chrono::steady_clock;

inline double seconds_since(clock::time_point t0) {
    return std::chrono::duration<double>(clock::now() - t0).count();
}

// Times f() and returns {seconds, f()'s value as the check}.
template <class F>
sample timed(F&& f) {
    auto t0 = clock::now();
    auto v = f();
    sample s;
    s.seconds = seconds_since(t0);
    s.check = static_cast<std::uint64_t>(v);
    return s;
}

// Input data built on first use (untimed, inside a cell) and freed when the problem is done, so
// the peak-RSS column of a cell counts its own problem's input only.
template <class T>
struct lazy {
    std::function<std::unique_ptr<T>()> make;
    std::unique_ptr<T> value;
    explicit lazy(std::function<std::unique_ptr<T>()> m) : make(std::move(m)) {}
    T& get() {
        if (!value) value = make();
        return *value;
    }
    void reset() { value.reset(); }
};

template <class T, class Make>
std::shared_ptr<lazy<T>> make_lazy(problem& p, Make make) {
    auto l = std::make_shared<lazy<T>>(make);
    p.release = [l] { l->reset(); };
    return l;
}

// Keeps a value alive for the optimizer without costing anything.
template <class T>
inline void do_not_optimize(const T& v) {
    asm volatile("" : : "r,m"(v) : "memory");
}

// An order-sensitive hash of a sequence of integers (results of sort, scan, ...).
template <class It>
std::uint64_t sequence_hash(It first, It last) {
    std::uint64_t h = 1469598103934665603ull;
    for (; first != last; ++first) h = (h ^ static_cast<std::uint64_t>(*first)) * 1099511628211ull;
    return h;
}

inline std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finalizer
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// ---- the problems (bench/problems/*.cpp); each adds skip notes for peers not built in ----
problem make_fib(const config&, std::vector<std::string>& notes);
problem make_skynet(const config&, std::vector<std::string>& notes);
problem make_tree_sum(const config&, std::vector<std::string>& notes);
problem make_nqueens(const config&, std::vector<std::string>& notes);
problem make_matmul(const config&, std::vector<std::string>& notes);
problem make_uts(const config&, std::vector<std::string>& notes);
problem make_imbalanced_for(const config&, std::vector<std::string>& notes);
problem make_spawn_storm_outside(const config&, std::vector<std::string>& notes);
problem make_spawn_storm_inside(const config&, std::vector<std::string>& notes);
problem make_wake_latency(const config&, std::vector<std::string>& notes);
problem make_idle_cpu(const config&, std::vector<std::string>& notes);
problem make_deque(const config&, std::vector<std::string>& notes);
problem make_barrier(const config&, std::vector<std::string>& notes);
problem make_sort(const config&, std::vector<std::string>& notes);
problem make_reduce(const config&, std::vector<std::string>& notes);
problem make_map_sum(const config&, std::vector<std::string>& notes);
problem make_for_overhead(const config&, std::vector<std::string>& notes);
problem make_range_for(const config&, std::vector<std::string>& notes);
problem make_count_if(const config&, std::vector<std::string>& notes);
problem make_find_if_early(const config&, std::vector<std::string>& notes);
problem make_find_if_none(const config&, std::vector<std::string>& notes);
problem make_min_element(const config&, std::vector<std::string>& notes);
problem make_copy_if(const config&, std::vector<std::string>& notes);
// The timer problems (bench/problems/timers.cpp): shape is the name after "timer_".
problem make_timers(const config&, std::vector<std::string>& notes, const std::string& shape);
// The async shapes (bench/problems/async.cpp): shape is the name after "async_".
problem make_async(const config&, std::vector<std::string>& notes, const std::string& shape);
// After the run: the peer/crew ratios on the async_* rows and issue 10's targets.
void add_async_ratios(results& r);
// The tcp_echo_* problems (bench/problems/net.cpp), and after the run their ratios and issue 11's target.
problem make_net(const config&, std::vector<std::string>& notes, const std::string& name);
void add_net_ratios(results& r);
// A timer_* or tcp_echo_* shape as the Tokio and Asio peers run it: `<peer> name threads reps n iters`
// prints one JSON line per rep ("ns", "check" == check, and the keys of `figures`).
struct io_peer_shape {
    std::string name;
    std::uint64_t n = 0, iters = 1, check = 0;
    struct figure {
        std::string key;    // in the peer's JSON line, e.g. "p99_ns"
        std::string label;  // the extra's name on the row, e.g. "p99 us"
        double scale = 1;   // label's unit per key's unit
    };
    std::vector<figure> figures;
    const char* per_second_label = nullptr;  // non-null: an extra check / seconds under this name
    std::string time_key;  // non-empty: the row's time is this figure (ns), as crew's row reports it
};
// Adds the Tokio and Asio rows of `shape` (or notes saying why not). bench/problems/net.cpp.
void add_io_peers(problem& p, std::vector<std::string>& notes, const config& cfg, const io_peer_shape& shape);
// The peers' rows of a timer_* problem (for timers.cpp): n sleeps / timers. bench/problems/timer_peers.cpp.
void add_timer_peers(problem& p, std::vector<std::string>& notes, const config& cfg, const std::string& name,
                     std::uint64_t n);

// ---- the driver pieces (bench/runner.cpp, bench/report.cpp) ----
void run_problem(const config& cfg, const problem& p, results& out, std::size_t& done, std::size_t total);
void evaluate_targets(results& r);
// How many threads' worth of CPU a trivially parallel loop got on `threads` threads just now: the
// machine's free capacity (2.0 on an idle 2-core machine, less when other processes compete).
double parallel_capacity(std::size_t threads);
std::string machine_description();
void print_table(const results& r);
void print_targets(const results& r);
bool write_json(const results& r, const std::string& path);
bool write_html(const results& r, const std::string& path);

}  // namespace crew_bench
