// Metrics arithmetic and export: deltas, JSON, the Prometheus text format, and diagnose().
#include "crew/metrics.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace crew {

namespace {

using ns = std::chrono::nanoseconds;

// The fields every export walks: one table, so JSON, Prometheus and deltas never disagree.
enum class kind { counter, gauge };
struct u64_field {
    const char* name;
    std::uint64_t worker_metrics::*member;
    kind k;
    const char* help;
};
constexpr u64_field u64_fields[] = {
    {"tasks_run", &worker_metrics::tasks_run, kind::counter, "Tasks a worker started (fork-join, a join's inline half, coroutine runs)."},
    {"fork_join_tasks_run", &worker_metrics::fork_join_tasks_run, kind::counter, "Fork-join tasks a worker started."},
    {"async_tasks_run", &worker_metrics::async_tasks_run, kind::counter, "Coroutine task runs (resumes) a worker started."},
    {"steals", &worker_metrics::steals, kind::counter, "Tasks a worker took from other workers."},
    {"steal_operations", &worker_metrics::steal_operations, kind::counter, "Steal attempts that found work."},
    {"failed_steals", &worker_metrics::failed_steals, kind::counter, "Steal attempts that found nothing (empty or lost)."},
    {"failed_steals_empty", &worker_metrics::failed_steals_empty, kind::counter, "Steal attempts that found the victim empty."},
    {"failed_steals_lost", &worker_metrics::failed_steals_lost, kind::counter, "Steal attempts that lost a race."},
    {"injector_pops", &worker_metrics::injector_pops, kind::counter, "Tasks a worker took from the outside-submission queue."},
    {"ring_overflows", &worker_metrics::ring_overflows, kind::counter, "Coroutine-ring overflows to the injector."},
    {"lifo_hits", &worker_metrics::lifo_hits, kind::counter, "Coroutine tasks run from the LIFO slot."},
    {"budget_yields", &worker_metrics::budget_yields, kind::counter, "Coroutine yields forced by the budget."},
    {"parks", &worker_metrics::parks, kind::counter, "Times a worker went to sleep."},
    {"unparks", &worker_metrics::unparks, kind::counter, "Times a worker woke from a sleep."},
    {"searches", &worker_metrics::searches, kind::counter, "Times a worker started looking for work."},
    {"deque_depth", &worker_metrics::deque_depth, kind::gauge, "Tasks in a worker's deque now."},
    {"max_deque_depth", &worker_metrics::max_deque_depth, kind::gauge, "The deepest a worker's deque got."},
    {"ring_depth", &worker_metrics::ring_depth, kind::gauge, "Coroutine tasks in a worker's ring now."},
    {"max_ring_depth", &worker_metrics::max_ring_depth, kind::gauge, "The deepest a worker's ring got."},
};

struct time_field {
    const char* name;  // without unit
    ns worker_metrics::*member;
    const char* help;
};
constexpr time_field time_fields[] = {
    {"busy", &worker_metrics::busy_time, "Time a worker spent running tasks."},
    {"search", &worker_metrics::search_time, "Time a worker spent looking for work."},
    {"park", &worker_metrics::park_time, "Time a worker spent asleep (parked or blocked on a stolen half)."},
};

std::uint64_t minus(std::uint64_t a, std::uint64_t b) noexcept { return a > b ? a - b : 0; }

std::string u64(std::uint64_t v) { return std::to_string(v); }

std::string seconds(ns d) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(d.count()) * 1e-9);
    return buf;
}

worker_metrics worker_minus(const worker_metrics& later, const worker_metrics& earlier) noexcept {
    worker_metrics d = later;  // "now" values and maxima from the later one
    for (const auto& f : u64_fields)
        if (f.k == kind::counter) d.*f.member = minus(later.*f.member, earlier.*f.member);
    for (const auto& f : time_fields) d.*f.member = std::max(ns{0}, later.*f.member - earlier.*f.member);
    for (std::size_t i = 0; i < latency_histogram::bucket_count; ++i)
        d.schedule_latency.buckets[i] = minus(later.schedule_latency.buckets[i], earlier.schedule_latency.buckets[i]);
    d.schedule_latency.sum = std::max(ns{0}, later.schedule_latency.sum - earlier.schedule_latency.sum);
    return d;
}

void check_prefix(std::string_view p) {
    auto ok = [](char c, bool first) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
    };
    for (std::size_t i = 0; i < p.size(); ++i)
        if (!ok(p[i], i == 0))
            throw std::invalid_argument("crew::to_prometheus: the prefix must match [a-zA-Z_:][a-zA-Z0-9_:]*");
}

void prom_header(std::string& out, const std::string& name, const char* help, const char* type) {
    out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void prom_histograms(std::string& out, const std::string& p, const pool_metrics& m) {
    const std::string name = p + "_schedule_latency_seconds";
    prom_header(out, name, "Time from queued to started of injected and coroutine tasks.", "histogram");
    for (std::size_t w = 0; w < m.workers.size(); ++w) {
        const latency_histogram& h = m.workers[w].schedule_latency;
        const std::string label = "worker=\"" + std::to_string(w) + "\"";
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i + 1 < latency_histogram::bucket_count; ++i) {
            cumulative += h.buckets[i];
            out += name + "_bucket{" + label + ",le=\"" +
                   seconds(ns(static_cast<ns::rep>(latency_histogram::upper_bound_ns(i)))) + "\"} " + u64(cumulative) + "\n";
        }
        cumulative += h.buckets[latency_histogram::bucket_count - 1];
        out += name + "_bucket{" + label + ",le=\"+Inf\"} " + u64(cumulative) + "\n";
        out += name + "_sum{" + label + "} " + seconds(h.sum) + "\n";
        out += name + "_count{" + label + "} " + u64(cumulative) + "\n";
    }
}

}  // namespace

std::uint64_t latency_histogram::count() const noexcept {
    std::uint64_t n = 0;
    for (std::uint64_t b : buckets) n += b;
    return n;
}

std::chrono::nanoseconds latency_histogram::quantile_upper_bound(double q) const noexcept {
    const std::uint64_t n = count();
    if (n == 0) return ns{0};
    q = std::clamp(q, 0.0, 1.0);
    const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(n - 1)) + 1;  // 1-based
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < bucket_count; ++i) {
        seen += buckets[i];
        if (seen >= rank) return ns(static_cast<ns::rep>(upper_bound_ns(i)));
    }
    return ns(static_cast<ns::rep>(upper_bound_ns(bucket_count - 1)));
}

latency_histogram& latency_histogram::operator+=(const latency_histogram& o) noexcept {
    for (std::size_t i = 0; i < bucket_count; ++i) buckets[i] += o.buckets[i];
    sum += o.sum;
    return *this;
}

double worker_metrics::busy_fraction() const noexcept {
    const auto all = busy_time + search_time + park_time;
    return all.count() > 0 ? static_cast<double>(busy_time.count()) / static_cast<double>(all.count()) : 0.0;
}

worker_metrics& worker_metrics::operator+=(const worker_metrics& o) noexcept {
    for (const auto& f : u64_fields) {
        const bool high_water = f.member == &worker_metrics::max_deque_depth || f.member == &worker_metrics::max_ring_depth;
        this->*f.member = high_water ? std::max(this->*f.member, o.*f.member) : this->*f.member + o.*f.member;
    }
    for (const auto& f : time_fields) this->*f.member += o.*f.member;
    schedule_latency += o.schedule_latency;
    return *this;
}

worker_metrics pool_metrics::total() const noexcept {
    worker_metrics sum;
    for (const auto& w : workers) sum += w;
    return sum;
}

pool_metrics operator-(const pool_metrics& later, const pool_metrics& earlier) {
    if (later.workers.size() != earlier.workers.size())
        throw std::invalid_argument("crew::pool_metrics: a delta needs two snapshots of the same pool (worker counts differ)");
    if (later.taken_at < earlier.taken_at)
        throw std::invalid_argument("crew::pool_metrics: later - earlier, but the left snapshot was taken first");
    pool_metrics d = later;  // pool-wide gauges from the later one
    for (std::size_t i = 0; i < d.workers.size(); ++i) d.workers[i] = worker_minus(later.workers[i], earlier.workers[i]);
    d.total_spawned = minus(later.total_spawned, earlier.total_spawned);
    d.interval = std::chrono::duration_cast<ns>(later.taken_at - earlier.taken_at);
    return d;
}

std::string to_json(const pool_metrics& m) {
    std::string out = "{\"taken_at_ns\":" + u64(static_cast<std::uint64_t>(std::chrono::duration_cast<ns>(m.taken_at.time_since_epoch()).count())) +
                      ",\"interval_ns\":" + u64(static_cast<std::uint64_t>(m.interval.count())) +
                      ",\"injector_length\":" + u64(m.injector_length) + ",\"searching\":" + u64(m.searching) +
                      ",\"parked\":" + u64(m.parked) + ",\"total_spawned\":" + u64(m.total_spawned) +
                      ",\"latency_bucket_upper_ns\":[";
    for (std::size_t i = 0; i + 1 < latency_histogram::bucket_count; ++i) out += u64(latency_histogram::upper_bound_ns(i)) + ",";
    out += "null],\"workers\":[";
    for (std::size_t w = 0; w < m.workers.size(); ++w) {
        const worker_metrics& x = m.workers[w];
        out += (w == 0 ? "{\"worker\":" : ",{\"worker\":") + u64(w);
        for (const auto& f : u64_fields) out += ",\"" + std::string(f.name) + "\":" + u64(x.*f.member);
        for (const auto& f : time_fields)
            out += ",\"" + std::string(f.name) + "_time_ns\":" + u64(static_cast<std::uint64_t>((x.*f.member).count()));
        out += ",\"schedule_latency\":{\"count\":" + u64(x.schedule_latency.count()) +
               ",\"sum_ns\":" + u64(static_cast<std::uint64_t>(x.schedule_latency.sum.count())) + ",\"buckets\":[";
        for (std::size_t i = 0; i < latency_histogram::bucket_count; ++i) {
            if (i != 0) out += ',';
            out += u64(x.schedule_latency.buckets[i]);
        }
        out += "]}}";
    }
    out += "]}";
    return out;
}

std::string to_prometheus(const pool_metrics& m, std::string_view prefix) {
    check_prefix(prefix);
    const std::string p = prefix.empty() ? std::string("crew") : std::string(prefix);
    std::string out;
    for (const auto& f : u64_fields) {
        const std::string name = p + "_" + f.name + (f.k == kind::counter ? "_total" : "");
        prom_header(out, name, f.help, f.k == kind::counter ? "counter" : "gauge");
        for (std::size_t w = 0; w < m.workers.size(); ++w)
            out += name + "{worker=\"" + std::to_string(w) + "\"} " + u64(m.workers[w].*f.member) + "\n";
    }
    for (const auto& f : time_fields) {
        const std::string name = p + "_" + f.name + "_seconds_total";
        prom_header(out, name, f.help, "counter");
        for (std::size_t w = 0; w < m.workers.size(); ++w)
            out += name + "{worker=\"" + std::to_string(w) + "\"} " + seconds(m.workers[w].*f.member) + "\n";
    }
    prom_histograms(out, p, m);
    struct {
        const char* name;
        std::uint64_t value;
        const char* type;
        const char* help;
    } pool_wide[] = {
        {"_injector_length", m.injector_length, "gauge", "Tasks in the outside-submission queue now."},
        {"_searching_workers", m.searching, "gauge", "Workers looking for work now."},
        {"_parked_workers", m.parked, "gauge", "Workers asleep now."},
        {"_spawned_total", m.total_spawned, "counter", "Tasks ever queued (started plus still queued)."},
    };
    for (const auto& g : pool_wide) {
        prom_header(out, p + g.name, g.help, g.type);
        out += p + g.name + " " + u64(g.value) + "\n";
    }
    return out;
}

}  // namespace crew
