// crew/metrics.hpp -- what the workers did: per-worker counters and times, pool-wide gauges, a
// schedule-latency histogram; snapshots, deltas, JSON and Prometheus export, and diagnose().
//
//   crew::pool_metrics before = pool.metrics();
//   ... run something ...
//   crew::pool_metrics delta = pool.metrics() - before;
//   std::puts(crew::diagnose(delta).c_str());      // "worker 0 was busy 99 % of the interval, ..."
//   std::puts(crew::to_json(delta).c_str());
//   std::puts(crew::to_prometheus(pool.metrics(), "myapp_crew").c_str());
//
// docs/OBSERVABILITY.md explains every field and walks through a diagnosis.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace crew {

// Time from "queued" to "started" of tasks, in log2 buckets: bucket i counts latencies of at most
// 2^i ns (and more than 2^(i-1) ns); the last bucket also holds everything longer.
struct latency_histogram {
    static constexpr std::size_t bucket_count = 40;  // bucket 38 ends at 2^38 ns (about 275 s)
    std::array<std::uint64_t, bucket_count> buckets{};
    std::chrono::nanoseconds sum{0};  // of every recorded latency

    // The inclusive upper bound of bucket i in ns (2^i); the last bucket has none (+Inf).
    static constexpr std::uint64_t upper_bound_ns(std::size_t i) noexcept { return std::uint64_t{1} << i; }
    std::uint64_t count() const noexcept;
    // The upper bound of the bucket holding the q-quantile (0 <= q <= 1), 0 when empty.
    std::chrono::nanoseconds quantile_upper_bound(double q) const noexcept;

    latency_histogram& operator+=(const latency_histogram& o) noexcept;
};

struct worker_metrics {
    // ---- counters (since the pool started; a delta subtracts them) ----
    std::uint64_t tasks_run = 0;           // every task it started: fork-join (a join's inline half
                                           // included) plus coroutine runs
    std::uint64_t fork_join_tasks_run = 0; // tasks_run - async_tasks_run
    std::uint64_t async_tasks_run = 0;     // coroutine task runs (resumes) -- bumped by the async scheduler
    std::uint64_t steals = 0;              // tasks it took from other workers
    std::uint64_t steal_operations = 0;    // steal attempts that found work (one may take several tasks)
    std::uint64_t failed_steals = 0;       // failed_steals_empty + failed_steals_lost
    std::uint64_t failed_steals_empty = 0; // attempts that found the victim empty
    std::uint64_t failed_steals_lost = 0;  // attempts that lost a race for the victim's last items
    std::uint64_t injector_pops = 0;       // tasks it took from the pool's outside-submission queue
    std::uint64_t ring_overflows = 0;      // coroutine-ring overflows to the injector (async scheduler)
    std::uint64_t lifo_hits = 0;           // coroutine tasks run from the LIFO slot (async scheduler)
    std::uint64_t budget_yields = 0;       // coroutine yields forced by the budget (async scheduler)
    std::uint64_t parks = 0;               // times it went to sleep
    std::uint64_t unparks = 0;             // times it woke up from a sleep
    std::uint64_t searches = 0;            // times it started looking for work after finding none

    // ---- times (ns; each worker's three add up to the time its thread lived in the interval) ----
    std::chrono::nanoseconds busy_time{0};    // running tasks (including a task blocked in user code)
    std::chrono::nanoseconds search_time{0};  // looking for work: spinning over the queues
    std::chrono::nanoseconds park_time{0};    // asleep: parked, or blocked waiting for a stolen half

    // ---- schedule latency (queued -> started) of injected and coroutine tasks ----
    latency_histogram schedule_latency;

    // ---- "now" values and high-water marks (a delta keeps the later snapshot's) ----
    std::uint64_t deque_depth = 0;      // tasks in its deque now
    std::uint64_t max_deque_depth = 0;  // the deepest its deque (with private forks) got since the pool started
    std::uint64_t ring_depth = 0;       // coroutine tasks in its ring now (async scheduler)
    std::uint64_t max_ring_depth = 0;   // the deepest its ring got (async scheduler)

    // busy_time / (busy + search + park), 0 when no time was recorded.
    double busy_fraction() const noexcept;

    // Sums the counters, times and histograms; "now" values add, high-water marks take the max.
    worker_metrics& operator+=(const worker_metrics& o) noexcept;
};

struct pool_metrics {
    std::vector<worker_metrics> workers;  // index i: worker i

    // ---- pool-wide ----
    std::uint64_t injector_length = 0;  // tasks in the outside-submission queue now
    std::uint64_t searching = 0;        // workers looking for work now (the parking protocol's count)
    std::uint64_t parked = 0;           // workers asleep in the pool's parking lot now
    std::uint64_t total_spawned = 0;    // tasks ever queued: every started task plus those still queued

    // When the snapshot was taken, and the time it covers: since the pool started for a snapshot,
    // between the two snapshots for a delta.
    std::chrono::steady_clock::time_point taken_at{};
    std::chrono::nanoseconds interval{0};

    // Sums of every worker (see worker_metrics::operator+=).
    worker_metrics total() const noexcept;
};

// later - earlier: counters, times and histograms subtract (never below 0); "now" values, maxima
// and the pool-wide gauges come from `later`; interval = later.taken_at - earlier.taken_at.
// Throws std::invalid_argument when the two have different numbers of workers or `earlier` was
// taken after `later`.
pool_metrics operator-(const pool_metrics& later, const pool_metrics& earlier);

// One JSON object: {"taken_at_ns":..., "interval_ns":..., pool-wide fields, "workers":[{...}]}.
std::string to_json(const pool_metrics& m);

// The Prometheus text exposition format (version 0.0.4): # HELP / # TYPE lines, one sample per
// worker with a worker="i" label; times in seconds; the schedule latency as a histogram
// (<prefix>_schedule_latency_seconds_bucket{le=...}, _sum, _count). `prefix` must match
// [a-zA-Z_:][a-zA-Z0-9_:]* (else std::invalid_argument); empty means "crew".
std::string to_prometheus(const pool_metrics& m, std::string_view prefix = "crew");

// Findings in plain words, one per line, each ending with where to read more; "no findings" when
// nothing stands out. Meant for a delta (a snapshot covers everything since the pool started).
std::string diagnose(const pool_metrics& delta);

}  // namespace crew
