// Runs the cells of one problem: the serial reference first, then every implementation at every
// thread count; checks every answer against the serial one; keeps median, min and max.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace crew_bench {

namespace {

// Resets the kernel's peak-RSS mark to the current RSS (Linux >= 4.0); harmless elsewhere.
void reset_peak_rss() {
    std::ofstream f("/proc/self/clear_refs");
    if (f) f << "5";
}

double peak_rss_mib() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("VmHWM:", 0) == 0) {
            std::istringstream in(line.substr(6));
            double kib = 0;
            in >> kib;
            return kib / 1024.0;
        }
    }
    return 0;
}

double process_cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto tv = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
    return tv(u.ru_utime) + tv(u.ru_stime);
}

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void progress(const problem& p, const impl& im, std::size_t threads, int rep, int reps, std::size_t done,
              std::size_t total) {
    static const bool tty = isatty(2) != 0;
    if (!tty && rep != 0) return;
    std::fprintf(stderr, "%s[%3zu/%zu] %-24s %-14s %2zu thread%s  rep %d/%d   %s", tty ? "\r" : "", done + 1, total,
                 p.title.c_str(), im.name.c_str(), threads, threads == 1 ? " " : "s", rep, reps, tty ? "" : "\n");
    std::fflush(stderr);
}

// Runs one cell; `reference` is the serial answer (set by the serial cell itself).
cell run_cell(const config& cfg, const problem& p, const impl& im, std::size_t threads, bool& have_reference,
              std::uint64_t& reference, std::size_t done, std::size_t total) {
    cell c;
    c.problem = p.name;
    c.impl = im.name;
    c.threads = threads;
    c.serial = im.serial;
    c.once = im.once;
    std::map<std::string, std::vector<double>> extras;
    std::vector<double> cpu_times;
    reset_peak_rss();
    auto start = clock::now();
    try {
        run_fn run = im.make(threads);
        int target = p.max_reps > 0 ? std::min(cfg.reps, p.max_reps) : cfg.reps;
        for (int rep = 0; rep <= target; ++rep) {
            progress(p, im, threads, rep, target, done, total);
            double cpu0 = process_cpu_seconds();
            sample s = run();
            double cpu = process_cpu_seconds() - cpu0;
            if (!have_reference && im.serial) {
                have_reference = true;
                reference = s.check;
            }
            if (have_reference && s.check != reference) {
                c.error = "WRONG ANSWER: got " + std::to_string(s.check) + ", serial says " + std::to_string(reference);
                break;
            }
            // The first run warms caches and the runtime; it counts only when it was long.
            if (rep == 0 && s.seconds < 0.5) continue;
            c.times.push_back(s.seconds);
            cpu_times.push_back(cpu);
            for (auto& [k, v] : s.extras) extras[k].push_back(v);
            if (static_cast<int>(c.times.size()) >= target) break;
            if (seconds_since(start) > cfg.cell_budget_s) {
                c.note = std::to_string(c.times.size()) + " of " + std::to_string(target) + " reps (time budget)";
                break;
            }
        }
    } catch (const std::exception& e) {
        c.error = std::string("exception: ") + e.what();
    }
    c.rss_mib = peak_rss_mib();
    if (!c.times.empty()) {
        c.median = median_of(c.times);
        c.min = *std::min_element(c.times.begin(), c.times.end());
        c.max = *std::max_element(c.times.begin(), c.times.end());
    }
    c.cpu_median = median_of(cpu_times);
    for (auto& [k, v] : extras) c.extras.emplace_back(k, median_of(v));
    return c;
}

std::uint64_t spin_work(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (int i = 0; i < 20000000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

}  // namespace

double parallel_capacity(std::size_t threads) {
    auto t0 = clock::now();
    do_not_optimize(spin_work(1));
    double one = seconds_since(t0);
    std::vector<std::thread> team;
    auto t1 = clock::now();
    for (std::size_t k = 0; k < threads; ++k) team.emplace_back([k] { do_not_optimize(spin_work(k + 2)); });
    for (auto& t : team) t.join();
    double all = seconds_since(t1);
    return static_cast<double>(threads) * one / all;
}

void run_problem(const config& cfg, const problem& p, results& out, std::size_t& done, std::size_t total) {
    bool have_reference = false;
    std::uint64_t reference = 0;
    double serial_median = 0;
    std::size_t first = out.cells.size();
    for (const impl& im : p.impls) {
        if (!im.serial && !im.once) continue;
        if (im.once) {
            out.cells.push_back(run_cell(cfg, p, im, 1, have_reference, reference, done++, total));
            continue;
        }
        out.cells.push_back(run_cell(cfg, p, im, 1, have_reference, reference, done++, total));
        serial_median = out.cells.back().error.empty() ? out.cells.back().median : 0;
    }
    for (const impl& im : p.impls) {
        if (im.serial || im.once) continue;
        for (std::size_t t : cfg.threads)
            out.cells.push_back(run_cell(cfg, p, im, t, have_reference, reference, done++, total));
    }
    for (std::size_t i = first; i < out.cells.size(); ++i) {
        cell& c = out.cells[i];
        if (!c.error.empty() || c.median <= 0) continue;
        if (serial_median > 0) c.speedup = serial_median / c.median;
        if (p.tasks > 0 && serial_median > 0) {
            c.has_overhead = true;
            c.overhead_ns = (static_cast<double>(c.threads) * c.median - serial_median) / p.tasks * 1e9;
        }
        if (p.bytes > 0) c.gbps = p.bytes / c.median / 1e9;
    }
    if (p.release) p.release();
    if (isatty(2)) std::fprintf(stderr, "\r%100s\r", "");
}

}  // namespace crew_bench
