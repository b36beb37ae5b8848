// The performance targets of issues 3 and 4, evaluated on the cells of this run (ratios taken side
// by side, never against remembered figures). A target whose cells were not run says so.
#include <algorithm>
#include <string>

#include "harness.hpp"
#include "report_util.hpp"

namespace crew_bench {

namespace {

const cell* find(const results& r, const std::string& p, const std::string& impl, std::size_t threads) {
    for (auto& c : r.cells)
        if (c.problem == p && c.impl == impl && (c.serial || c.threads == threads) && c.error.empty() && c.median > 0)
            return &c;
    return nullptr;
}

double extra(const cell* c, const std::string& key) {
    if (c == nullptr) return 0;
    for (auto& [k, v] : c->extras)
        if (k == key) return v;
    return 0;
}

std::string x(double v) { return format_num(v, 2) + "x"; }

target_check ratio_target(const results& r, const std::string& p, const std::string& peer, std::size_t t) {
    target_check tc;
    const problem* pr = find_problem(r, p);
    tc.name = (pr ? pr->title : p) + " at " + std::to_string(t) + " thread" + (t == 1 ? "" : "s") +
              ": crew >= 5x faster than " + peer;
    const cell* c = find(r, p, "crew", t);
    const cell* o = find(r, p, peer, t);
    if (!c || !o) return tc;
    tc.evaluated = true;
    double ratio = o->median / c->median;
    tc.met = ratio >= 5.0;
    tc.detail = "crew " + format_time(c->median) + ", " + peer + " " + format_time(o->median) + ": " + x(ratio);
    return tc;
}

std::size_t two_threads(const config& cfg) {
    if (std::find(cfg.threads.begin(), cfg.threads.end(), std::size_t{2}) != cfg.threads.end()) return 2;
    return cfg.threads.empty() ? 1 : cfg.threads.back();
}

void fork_join_targets(results& r) {
    for (const char* p : {"fib", "skynet", "nqueens"})
        for (std::size_t t : {std::size_t{1}, std::size_t{2}}) {
            if (std::find(r.cfg.threads.begin(), r.cfg.threads.end(), t) == r.cfg.threads.end()) continue;
            for (const char* peer : {"onetbb", "openmp"}) r.targets.push_back(ratio_target(r, p, peer, t));
        }
    std::size_t t = two_threads(r.cfg);
    target_check tc;
    tc.name = "matmul at " + std::to_string(t) + " threads: crew within 5% of the fastest implementation";
    const cell* c = find(r, "matmul", "crew", t);
    const cell* best = nullptr;
    for (auto& o : r.cells)
        if (o.problem == "matmul" && o.error.empty() && o.median > 0 && (o.serial || o.threads == t))
            if (!best || o.median < best->median) best = &o;
    if (c && best) {
        tc.evaluated = true;
        tc.met = c->median <= 1.05 * best->median;
        tc.detail = "crew " + format_time(c->median) + ", fastest " + best->impl + " " + format_time(best->median);
    }
    r.targets.push_back(tc);
}

void speedup_target(results& r, const std::string& p, const std::string& name, double need, const std::string& also) {
    std::size_t t = two_threads(r.cfg);
    target_check tc;
    tc.name = name;
    const cell* c = find(r, p, "crew", t);
    if (c) {
        tc.evaluated = true;
        tc.met = c->speedup >= need;
        tc.detail = "crew speed-up " + x(c->speedup) + " at " + std::to_string(t) + " threads";
        if (!also.empty()) {
            const cell* o = find(r, p, also, t);
            if (o) {
                tc.detail += "; " + also + " " + x(o->speedup);
                if (also == "onetbb") {
                    tc.met = tc.met && c->median <= o->median;
                    tc.detail += " (crew " + format_time(c->median) + " vs " + format_time(o->median) + ")";
                }
            }
        }
    }
    r.targets.push_back(tc);
}

void runtime_targets(results& r) {
    std::size_t t = two_threads(r.cfg);
    target_check idle;
    idle.name = "idle_cpu: crew's idle pool uses under 1% of one core";
    if (const cell* c = find(r, "idle_cpu", "crew", t)) {
        idle.evaluated = true;
        double pct = extra(c, "cpu_%");
        idle.met = pct < 1.0;
        idle.detail = format_num(pct, 3) + "% of one core over 1 s, " + std::to_string(t) + " workers";
    }
    r.targets.push_back(idle);
    target_check wake;
    wake.name = "wake_latency: crew p50 within 2x the raw ping-pong floor";
    const cell* c = find(r, "wake_latency", "crew", t);
    const cell* f1 = find(r, "wake_latency", "floor-futex", 1);
    const cell* f2 = find(r, "wake_latency", "floor-condvar", 1);
    const cell* floor = f1 && f2 ? (f1->median < f2->median ? f1 : f2) : (f1 ? f1 : f2);
    if (c && floor) {
        wake.evaluated = true;
        wake.met = c->median <= 2 * floor->median;
        wake.detail = "crew p50 " + format_time(c->median) + ", " + floor->impl + " p50 " + format_time(floor->median) +
                      ": " + x(c->median / floor->median);
    }
    r.targets.push_back(wake);
}

void algorithm_targets(results& r) {
    std::size_t t = two_threads(r.cfg);
    speedup_target(r, "sort", "parallel_sort: >= 1.7x over std::sort on 2 workers and faster than oneTBB", 1.7,
                   "onetbb");
    target_check red;
    red.name = "parallel_reduce sum of doubles: >= 1.8x over serial, or at the measured memory-bandwidth limit";
    const cell* c = find(r, "reduce", "crew", t);
    const cell* probe = find(r, "reduce", "bandwidth-probe", t);
    if (c) {
        red.evaluated = true;
        red.met = c->speedup >= 1.8 || (probe && c->gbps >= 0.9 * probe->gbps);
        red.detail = "crew " + x(c->speedup) + ", " + format_num(c->gbps, 2) + " GB/s";
        if (probe) red.detail += "; bandwidth limit (probe) " + format_num(probe->gbps, 2) + " GB/s";
    }
    r.targets.push_back(red);
    speedup_target(r, "map_sum", "imbalanced map-and-sum (seed 004): >= 1.85x over serial and no slower than oneTBB",
                   1.85, "onetbb");
}

}  // namespace

void evaluate_targets(results& r) {
    fork_join_targets(r);
    speedup_target(r, "imbalanced_for", "imbalanced_for: crew >= 1.85x over serial on 2 threads (static split ~1.4x)",
                   1.85, "static-split");
    runtime_targets(r);
    algorithm_targets(r);
}

}  // namespace crew_bench
