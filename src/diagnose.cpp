// crew::diagnose: what stands out in a metrics delta, in plain words (docs/OBSERVABILITY.md).
#include "crew/metrics.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace crew {

namespace {

using ns = std::chrono::nanoseconds;

// Thresholds (docs/OBSERVABILITY.md "diagnose()" explains each).
constexpr double busy_high = 0.5;         // the busiest worker is "doing the work" above this
constexpr double busy_low_ratio = 0.25;   // ... and another "idle" below this share of it
constexpr double idle_pool = 0.05;        // every worker below this: the pool was idle
constexpr std::uint64_t lost_min = 1000;  // lost races worth a word
constexpr auto latency_high = std::chrono::milliseconds(1);

std::string fmt(const char* format, double a, double b = 0, double c = 0) {
    char buf[256];
    std::snprintf(buf, sizeof buf, format, a, b, c);
    return buf;
}

ns lived(const worker_metrics& w) { return w.busy_time + w.search_time + w.park_time; }

// One worker far busier than another: the story of a loop whose work is not split or not stolen.
void imbalance(const pool_metrics& d, std::vector<std::string>& found) {
    std::size_t hi = 0, lo = 0;
    for (std::size_t i = 1; i < d.workers.size(); ++i) {
        if (d.workers[i].busy_fraction() > d.workers[hi].busy_fraction()) hi = i;
        if (d.workers[i].busy_fraction() < d.workers[lo].busy_fraction()) lo = i;
    }
    const double h = d.workers[hi].busy_fraction(), l = d.workers[lo].busy_fraction();
    if (h < busy_high || l > h * busy_low_ratio) return;
    std::size_t idle = 0;
    for (const auto& w : d.workers) idle += w.busy_fraction() <= h * busy_low_ratio ? 1 : 0;
    std::string s = "worker " + std::to_string(hi) + " was busy " + fmt("%.0f", h * 100) + " % of the interval, worker " +
                    std::to_string(lo) + " " + fmt("%.0f", l * 100) + " %";
    if (d.workers.size() > 2)
        s += " (" + std::to_string(idle) + " of " + std::to_string(d.workers.size()) + " workers below " +
             fmt("%.0f", h * busy_low_ratio * 100) + " %)";
    s += ": the work is not being split or not stolen";
    const worker_metrics& busy = d.workers[hi];
    if (busy.tasks_run <= 2 && busy.busy_time > ns(0))
        s += " (worker " + std::to_string(hi) + " started only " + std::to_string(busy.tasks_run) +
             " task(s) in the interval: one long task, e.g. one expensive loop element in a chunk of its own"
             " or a leaf that does not fork)";
    found.push_back(s + "; see docs/OBSERVABILITY.md (\"one worker at 100 %\")");
}

void idle(const pool_metrics& d, std::vector<std::string>& found) {
    double most = 0;
    for (const auto& w : d.workers) most = std::max(most, w.busy_fraction());
    if (most >= idle_pool) return;
    found.push_back(fmt("the pool was idle: no worker was busy more than %.0f %% of the interval", most * 100) +
                    " (the work ran elsewhere, e.g. on the calling thread, or none was submitted);"
                    " see docs/OBSERVABILITY.md (\"an idle pool\")");
}

void searching(const pool_metrics& d, std::vector<std::string>& found) {
    const worker_metrics t = d.total();
    if (t.busy_time <= ns(0) || t.search_time <= t.busy_time || t.steal_operations == 0) return;
    found.push_back(fmt("the workers spent more time looking for work (%.1f ms) than running it (%.1f ms)",
                        static_cast<double>(t.search_time.count()) / 1e6, static_cast<double>(t.busy_time.count()) / 1e6) +
                    ": the tasks are too small or too few for " + std::to_string(d.workers.size()) +
                    " workers (a coarser grain, or fewer workers); see docs/OBSERVABILITY.md (\"searching\")");
}

void lost_races(const pool_metrics& d, std::vector<std::string>& found) {
    const worker_metrics t = d.total();
    if (t.failed_steals_lost < lost_min || t.failed_steals_lost < t.steal_operations) return;
    found.push_back(std::to_string(t.failed_steals_lost) + " steal attempts lost a race, for " +
                    std::to_string(t.steal_operations) +
                    " that found work: many thieves contend for few tasks (split the work earlier or into more"
                    " pieces); see docs/OBSERVABILITY.md (\"steals lost\")");
}

void injector_latency(const pool_metrics& d, std::vector<std::string>& found) {
    const worker_metrics t = d.total();
    const ns p99 = t.schedule_latency.quantile_upper_bound(0.99);
    if (t.schedule_latency.count() == 0 || p99 < latency_high) return;
    double busy = 0;
    for (const auto& w : d.workers) busy += w.busy_fraction();
    busy /= static_cast<double>(d.workers.size());
    found.push_back(fmt("queued tasks waited up to %.1f ms before a worker started them (99th percentile of %.0f;"
                        " the workers were busy %.0f %% on average)",
                        static_cast<double>(p99.count()) / 1e6, static_cast<double>(t.schedule_latency.count()), busy * 100) +
                    (busy > 0.9 ? ": outside submissions wait behind the workers' own work (longer tasks, or more workers)"
                                : ": the workers were not all busy, so wake-ups are slow (an oversubscribed machine?)") +
                    "; see docs/OBSERVABILITY.md (\"injector starvation\")");
}

}  // namespace

std::string diagnose(const pool_metrics& delta) {
    if (delta.workers.empty()) return "no findings: the snapshot has no workers\n";
    ns recorded{0};
    for (const auto& w : delta.workers) recorded += lived(w);
    if (recorded <= ns(0))
        return "no findings: no time was recorded (an empty interval, or metrics compiled out with CREW_METRICS=OFF)\n";
    std::vector<std::string> found;
    idle(delta, found);
    if (found.empty() && delta.workers.size() > 1) imbalance(delta, found);
    searching(delta, found);
    lost_races(delta, found);
    injector_latency(delta, found);
    std::string out;
    if (found.empty()) {
        double lo = 1, hi = 0;
        for (const auto& w : delta.workers) {
            lo = std::min(lo, w.busy_fraction());
            hi = std::max(hi, w.busy_fraction());
        }
        out = "no findings: the " + std::to_string(delta.workers.size()) + " worker(s) were busy between " +
              fmt("%.0f", lo * 100) + " % and " + fmt("%.0f", hi * 100) + " % of the interval\n";
    }
    for (const auto& f : found) out += f + "\n";
    return out;
}

}  // namespace crew
