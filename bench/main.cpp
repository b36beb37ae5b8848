// crew-bench: crew against serial code, oneTBB, OpenMP tasks and the two seed designs, on the
// standard fork-join problems and the parallel algorithms. Prints a table and writes a
// self-contained HTML report (and JSON on request). See docs/BENCHMARKS.md.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <crew/pool.hpp>

#include "harness.hpp"

namespace crew_bench {

namespace {

using maker = problem (*)(const config&, std::vector<std::string>&);

struct registered {
    const char* name;
    maker make;
};

const std::vector<registered>& registry() {
    static const std::vector<registered> all = {
        {"fib", make_fib},
        {"skynet", make_skynet},
        {"tree_sum", make_tree_sum},
        {"nqueens", make_nqueens},
        {"matmul", make_matmul},
        {"uts", make_uts},
        {"imbalanced_for", make_imbalanced_for},
        {"spawn_storm_outside", make_spawn_storm_outside},
        {"spawn_storm_inside", make_spawn_storm_inside},
        {"wake_latency", make_wake_latency},
        {"idle_cpu", make_idle_cpu},
        {"deque", make_deque},
        {"barrier", make_barrier},
        {"sort", make_sort},
        {"reduce", make_reduce},
        {"map_sum", make_map_sum},
        {"for_overhead", make_for_overhead},
        {"range_for", make_range_for},
        {"count_if", make_count_if},
        {"find_if_early", make_find_if_early},
        {"find_if_none", make_find_if_none},
        {"min_element", make_min_element},
        {"copy_if", make_copy_if},
        {"async_spawn_many_local", [](const config& c, std::vector<std::string>& n) { return make_async(c, n, "spawn_many_local"); }},
        {"async_spawn_many_remote_idle", [](const config& c, std::vector<std::string>& n) { return make_async(c, n, "spawn_many_remote_idle"); }},
        {"async_yield_many", [](const config& c, std::vector<std::string>& n) { return make_async(c, n, "yield_many"); }},
        {"async_ping_pong", [](const config& c, std::vector<std::string>& n) { return make_async(c, n, "ping_pong"); }},
        {"async_chained_spawn", [](const config& c, std::vector<std::string>& n) { return make_async(c, n, "chained_spawn"); }},
        {"async_spawn_await", [](const config& c, std::vector<std::string>& n) { return make_async(c, n, "spawn_await"); }},
        {"async_channel_round_trip", [](const config& c, std::vector<std::string>& n) { return make_async(c, n, "channel_round_trip"); }},
        {"async_coro_skynet", [](const config& c, std::vector<std::string>& n) { return make_async(c, n, "coro_skynet"); }},
        {"timer_sleep_100us", [](const config& c, std::vector<std::string>& n) { return make_timers(c, n, "sleep_100us"); }},
        {"timer_sleep_1ms", [](const config& c, std::vector<std::string>& n) { return make_timers(c, n, "sleep_1ms"); }},
        {"timer_sleep_10ms", [](const config& c, std::vector<std::string>& n) { return make_timers(c, n, "sleep_10ms"); }},
        {"timer_spread_10k", [](const config& c, std::vector<std::string>& n) { return make_timers(c, n, "spread_10k"); }},
        {"async_fork_join_in_tasks", [](const config& c, std::vector<std::string>& n) { return make_async(c, n, "fork_join_in_tasks"); }},
        {"tcp_echo_pingpong", [](const config& c, std::vector<std::string>& n) { return make_net(c, n, "tcp_echo_pingpong"); }},
        {"tcp_echo_throughput", [](const config& c, std::vector<std::string>& n) { return make_net(c, n, "tcp_echo_throughput"); }},
    };
    return all;
}

const char* usage =
    "usage: crew-bench [--quick|--full] [--threads 1,2,4] [--problems fib,skynet,...] [--reps N]\n"
    "                  [--json FILE] [--html FILE] [--budget SECONDS] [--list]\n"
    "  --quick      smaller sizes, 3 reps (the default; about two minutes on 2 cores)\n"
    "  --full       the published sizes (fib(39), skynet depth 8, nqueens(14), matmul(2048), ...), 5 reps\n"
    "  --threads    thread counts to run every parallel implementation at (default: 1, 2, 4, ... up\n"
    "               to the CPUs this process may use)\n"
    "  --problems   comma-separated subset (see --list)\n"
    "  --reps       timed runs per cell (median, min and max are reported)\n"
    "  --html FILE  where to write the report (default: crew-bench-report.html)\n"
    "  --json FILE  also write every cell as JSON\n"
    "  --budget S   stop adding reps to a cell after S seconds (default 8 quick, 60 full)\n"
    "  --impls      comma-separated implementations to run (a name matches itself and its variants:\n"
    "               'crew' runs crew, crew task_group, ...); the serial baseline always runs\n";

std::vector<std::string> split_list(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

std::size_t parse_count(const std::string& s, const char* what) {
    std::size_t pos = 0;
    unsigned long v = 0;
    try {
        v = std::stoul(s, &pos);
    } catch (const std::exception&) {
        pos = 0;
    }
    if (pos != s.size() || v == 0 || v > 4096)
        throw std::invalid_argument(std::string("crew-bench: bad ") + what + ": '" + s + "'");
    return v;
}

std::vector<std::size_t> default_threads() {
    std::size_t n = crew::default_concurrency();
    std::vector<std::size_t> t;
    for (std::size_t k = 1; k < n; k *= 2) t.push_back(k);
    t.push_back(n);
    return t;
}

config parse(int argc, char** argv, bool& list) {
    config cfg;
    int reps = 0;
    double budget = 0;
    cfg.html_path = "crew-bench-report.html";
    for (int i = 0; i < argc; ++i) {
        if (i > 0) cfg.command += ' ';
        cfg.command += argv[i];
    }
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument("crew-bench: " + a + " needs a value");
            return argv[++i];
        };
        if (a == "--quick") cfg.quick = true;
        else if (a == "--full") cfg.quick = false;
        else if (a == "--threads") for (auto& t : split_list(value())) cfg.threads.push_back(parse_count(t, "thread count"));
        else if (a == "--problems") cfg.problems = split_list(value());
        else if (a == "--impls") cfg.impls = split_list(value());
        else if (a == "--reps") reps = static_cast<int>(parse_count(value(), "--reps"));
        else if (a == "--json") cfg.json_path = value();
        else if (a == "--html") cfg.html_path = value();
        else if (a == "--budget") budget = static_cast<double>(parse_count(value(), "--budget"));
        else if (a == "--list") list = true;
        else if (a == "--help" || a == "-h") throw std::invalid_argument("");
        else throw std::invalid_argument("crew-bench: unknown argument '" + a + "'");
    }
    if (cfg.threads.empty()) cfg.threads = default_threads();
    cfg.reps = reps > 0 ? reps : (cfg.quick ? 3 : 5);
    cfg.cell_budget_s = budget > 0 ? budget : (cfg.quick ? 8 : 60);
    std::set<std::string> known;
    for (auto& r : registry()) known.insert(r.name);
    for (auto& p : cfg.problems)
        if (!known.count(p)) throw std::invalid_argument("crew-bench: unknown problem '" + p + "' (see --list)");
    return cfg;
}

// --impls: the serial baseline and the implementations named (or variants of them: "crew task_group").
void keep_wanted_impls(const config& cfg, problem& p) {
    if (cfg.impls.empty()) return;
    std::erase_if(p.impls, [&](const impl& im) {
        if (im.serial) return false;
        for (auto& name : cfg.impls)
            if (im.name == name || im.name.rfind(name + " ", 0) == 0) return false;
        return true;
    });
}

std::string utc_now() {
    std::time_t t = std::time(nullptr);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
    return buf;
}

}  // namespace

int main_impl(int argc, char** argv) {
    bool list = false;
    config cfg;
    try {
        cfg = parse(argc, argv, list);
    } catch (const std::invalid_argument& e) {
        if (*e.what()) std::fprintf(stderr, "%s\n", e.what());
        std::fputs(usage, stderr);
        return *e.what() ? 2 : 0;
    }
    if (list) {
        for (auto& r : registry()) std::printf("%s\n", r.name);
        return 0;
    }
    results res;
    res.cfg = cfg;
    res.machine = machine_description();
    res.date = utc_now();
    auto t0 = clock::now();
    for (auto& r : registry()) {
        bool wanted = cfg.problems.empty();
        for (auto& p : cfg.problems) wanted = wanted || p == r.name;
        if (wanted) res.problems.push_back(r.make(cfg, res.notes));
    }
    for (auto& p : res.problems) keep_wanted_impls(cfg, p);
    std::size_t total = 0;
    for (auto& p : res.problems)
        for (auto& im : p.impls) total += im.serial || im.once ? 1 : cfg.threads.size();
    std::printf("crew-bench %s mode, threads {", cfg.quick ? "quick" : "full");
    for (std::size_t i = 0; i < cfg.threads.size(); ++i) std::printf("%s%zu", i ? "," : "", cfg.threads[i]);
    std::printf("}, %d reps per cell; %s\n", cfg.reps, res.machine.c_str());
    for (auto& p : res.problems)
        if (!p.size_note.empty()) res.notes.push_back(p.title + ": " + p.size_note);
    std::size_t max_threads = *std::max_element(cfg.threads.begin(), cfg.threads.end());
    res.capacity_before = parallel_capacity(max_threads);
    std::size_t done = 0;
    for (auto& p : res.problems) run_problem(cfg, p, res, done, total);
    res.capacity_after = parallel_capacity(max_threads);
    char cap[256];
    std::snprintf(cap, sizeof cap,
                  "machine load check: a trivially parallel loop on %zu threads got %.2f threads' worth of CPU "
                  "before the run and %.2f after (%zu.00 = the machine was quiet)",
                  max_threads, res.capacity_before, res.capacity_after, max_threads);
    res.notes.insert(res.notes.begin(), cap);
    res.total_seconds = seconds_since(t0);
    evaluate_targets(res);
    add_async_ratios(res);
    add_net_ratios(res);
    print_table(res);
    print_targets(res);
    int status = 0;
    for (auto& c : res.cells)
        if (!c.error.empty()) status = 1;
    if (!cfg.json_path.empty() && !write_json(res, cfg.json_path)) status = 1;
    if (!cfg.html_path.empty()) {
        if (write_html(res, cfg.html_path))
            std::printf("report: %s\n", cfg.html_path.c_str());
        else
            status = 1;
    }
    if (status != 0) std::printf("crew-bench: some cells FAILED (see the table)\n");
    return status;
}

}  // namespace crew_bench

int main(int argc, char** argv) { return crew_bench::main_impl(argc, argv); }
