// The console table, the targets, the JSON file and the machine description.
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <crew/pool.hpp>

#include "harness.hpp"
#include "report_util.hpp"

namespace crew_bench {

void add_note(std::vector<std::string>& notes, const std::string& note) {
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
}

std::string machine_description() {
    std::string cpu = "unknown CPU";
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("model name", 0) == 0) {
            cpu = line.substr(line.find(':') + 2);
            break;
        }
    }
    utsname u{};
    uname(&u);
    std::ostringstream out;
    out << cpu << ", " << crew::default_concurrency() << " usable CPUs, " << u.sysname << " " << u.release << ", "
#if defined(__clang__)
        << "clang " << __clang_major__ << "." << __clang_minor__
#else
        << "g++ " << __GNUC__ << "." << __GNUC_MINOR__
#endif
#if CREW_BENCH_HAVE_OPENMP
#if defined(__clang__)
        << ", OpenMP: LLVM libomp"
#else
        << ", OpenMP: GNU libgomp"
#endif
#endif
#if CREW_BENCH_HAVE_TBB
        << ", oneTBB " << CREW_BENCH_TBB_VERSION
#endif
        ;
    return out.str();
}

std::string format_time(double s) {
    char buf[32];
    if (s <= 0) return "-";
    if (s < 1e-3)
        std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
    else if (s < 10)
        std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.2f s", s);
    return buf;
}

std::string format_num(double v, int decimals) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string extras_text(const cell& c) {
    std::string s;
    for (auto& [k, v] : c.extras) s += (s.empty() ? "" : ", ") + k + " " + format_num(v, v < 10 ? 2 : 1);
    if (!c.note.empty()) s += (s.empty() ? "" : "; ") + c.note;
    if (!c.error.empty()) s = c.error + (s.empty() ? "" : "; " + s);
    return s;
}

const problem* find_problem(const results& r, const std::string& name) {
    for (auto& p : r.problems)
        if (p.name == name) return &p;
    return nullptr;
}

void print_table(const results& r) {
    std::printf("\n%-26s %-14s %3s %11s %23s %11s %8s %9s %7s %8s  %s\n", "problem", "implementation", "thr", "median",
                "min - max", "CPU", "speed-up", "ns/task", "GB/s", "RSS MiB", "notes");
    std::string last;
    for (const cell& c : r.cells) {
        const problem* p = find_problem(r, c.problem);
        std::string title = p ? p->title : c.problem;
        if (title != last && !last.empty()) std::printf("\n");
        std::string range = c.times.empty() ? "-" : format_time(c.min) + " - " + format_time(c.max);
        std::printf("%-26s %-14s %3s %11s %23s %11s %8s %9s %7s %8.1f  %s\n", title == last ? "" : title.c_str(),
                    c.impl.c_str(), c.serial ? "1" : c.once ? "-" : std::to_string(c.threads).c_str(),
                    c.error.empty() ? format_time(c.median).c_str() : "FAILED", range.c_str(),
                    c.times.empty() ? "-" : format_time(c.cpu_median).c_str(),
                    c.speedup > 0 ? (format_num(c.speedup, 2) + "x").c_str() : "-",
                    c.has_overhead ? format_num(c.overhead_ns, 1).c_str() : "-",
                    c.gbps > 0 ? format_num(c.gbps, 2).c_str() : "-", c.rss_mib, extras_text(c).c_str());
        last = title;
    }
    std::printf("\nCPU = process CPU time per run (all threads, median). speed-up = serial median / median.\n"
                "ns/task = (threads x median - serial median) / tasks: the CPU time each task (fork, join,\n"
                "spawned closure, loop element) adds over the serial code.\n");
    for (auto& n : r.notes) std::printf("note: %s\n", n.c_str());
    std::printf("total time: %.1f s\n", r.total_seconds);
}

void print_targets(const results& r) {
    if (r.targets.empty()) return;
    std::printf("\ntargets (issues 3 and 4), measured side by side in this run:\n");
    for (auto& t : r.targets)
        std::printf("  [%s] %s: %s\n", !t.evaluated ? "not run" : t.met ? "met" : "MISSED", t.name.c_str(),
                    t.detail.c_str());
}

std::string json_escape(const std::string& s) {
    std::string out;
    for (char ch : s) {
        if (ch == '"' || ch == '\\') out += '\\', out += ch;
        else if (ch == '\n') out += "\\n";
        else if (static_cast<unsigned char>(ch) < 0x20) out += ' ';
        else out += ch;
    }
    return out;
}

bool write_json(const results& r, const std::string& path) {
    std::ofstream f(path);
    if (!f) {
        std::fprintf(stderr, "crew-bench: cannot write %s\n", path.c_str());
        return false;
    }
    f << "{\n  \"command\": \"" << json_escape(r.cfg.command) << "\",\n  \"date\": \"" << r.date
      << "\",\n  \"machine\": \"" << json_escape(r.machine) << "\",\n  \"mode\": \"" << (r.cfg.quick ? "quick" : "full")
      << "\",\n  \"total_seconds\": " << r.total_seconds << ",\n  \"notes\": [";
    for (std::size_t i = 0; i < r.notes.size(); ++i) f << (i ? ", " : "") << '"' << json_escape(r.notes[i]) << '"';
    f << "],\n  \"problems\": [";
    for (std::size_t i = 0; i < r.problems.size(); ++i) {
        auto& p = r.problems[i];
        f << (i ? ",\n    " : "\n    ") << "{\"name\": \"" << p.name << "\", \"title\": \"" << json_escape(p.title)
          << "\", \"what\": \"" << json_escape(p.what) << "\", \"tasks\": " << p.tasks << ", \"bytes\": " << p.bytes
          << ", \"time_label\": \"" << p.time_label << "\"}";
    }
    f << "],\n  \"cells\": [";
    for (std::size_t i = 0; i < r.cells.size(); ++i) {
        auto& c = r.cells[i];
        f << (i ? ",\n    " : "\n    ") << "{\"problem\": \"" << c.problem << "\", \"impl\": \"" << c.impl
          << "\", \"threads\": " << c.threads << ", \"median_s\": " << c.median << ", \"min_s\": " << c.min
          << ", \"max_s\": " << c.max << ", \"times_s\": [";
        for (std::size_t k = 0; k < c.times.size(); ++k) f << (k ? ", " : "") << c.times[k];
        f << "], \"speedup\": " << c.speedup << ", \"overhead_ns_per_task\": ";
        if (c.has_overhead) f << c.overhead_ns;
        else f << "null";
        f << ", \"cpu_s\": " << c.cpu_median << ", \"gbps\": " << c.gbps << ", \"peak_rss_mib\": " << c.rss_mib << ", \"extras\": {";
        for (std::size_t k = 0; k < c.extras.size(); ++k)
            f << (k ? ", " : "") << '"' << json_escape(c.extras[k].first) << "\": " << c.extras[k].second;
        f << "}, \"error\": \"" << json_escape(c.error) << "\", \"note\": \"" << json_escape(c.note) << "\"}";
    }
    f << "],\n  \"targets\": [";
    for (std::size_t i = 0; i < r.targets.size(); ++i) {
        auto& t = r.targets[i];
        f << (i ? ",\n    " : "\n    ") << "{\"target\": \"" << json_escape(t.name) << "\", \"status\": \""
          << (!t.evaluated ? "not run" : t.met ? "met" : "missed") << "\", \"detail\": \"" << json_escape(t.detail)
          << "\"}";
    }
    f << "]\n}\n";
    return static_cast<bool>(f);
}

}  // namespace crew_bench
