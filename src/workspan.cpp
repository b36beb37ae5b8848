// crew::workspan: the cold half -- calibration, task_group records, the report.
#include "crew/workspan.hpp"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>
#include <unordered_map>
#include <vector>

#include <time.h>

#include "crew/join.hpp"
#include "crew/task_group.hpp"

namespace crew {

namespace detail {

namespace {
// Statistics of all running measurements (a scope reads them at its start and end). Relaxed: plain
// counters, read after the branches they count were joined (the joins order them).
std::atomic<std::uint64_t> ws_forks{0}, ws_branches{0}, ws_steals{0}, ws_latency{0};
std::atomic<std::int64_t> ws_overhead_ns{0};
std::atomic<bool> ws_cpu_clock{false};  // the outermost running scope's choice
std::int64_t ws_overhead_cpu = 0, ws_overhead_wall = 0;  // calibrated once (ws_overhead_once)
std::atomic<std::int64_t> ws_burden_ns{0};
std::atomic<std::int64_t> ws_join_ns{0}, ws_spawn_ns{0};

// A group's record, found by address while it has measured children not yet waited for.
std::mutex ws_groups_mutex;
std::unordered_map<const task_group*, std::shared_ptr<ws_group_record>> ws_groups;
std::atomic<std::size_t> ws_groups_count{0};

// One empty segment, many times: what the clock reads at its ends add to it.
std::int64_t calibrate_overhead(bool cpu) {
    ws_strand* const saved = ws_current;
    set_ws_current(nullptr);
    ws_cpu_clock.store(cpu, std::memory_order_relaxed);
    ws_overhead_ns.store(0, std::memory_order_relaxed);
    // The median: an interrupt or a preemption inside one of them must not move the calibration.
    std::vector<std::int64_t> samples(20001);
    for (auto& sample : samples) {
        ws_strand s;
        { ws_strand_scope scope(s); }
        sample = s.work;
    }
    set_ws_current(saved);
    std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
    return samples[samples.size() / 2];
}

// Plain fork points, many times, on a private 1-worker pool: the ns per empty join and per empty
// task_group child (run + its share of the wait).
void calibrate_fork_costs() {
    ws_strand* const saved = ws_current;
    set_ws_current(nullptr);
    constexpr int n = 20000;
    pool p(1);
    std::int64_t best_join = INT64_MAX, best_spawn = INT64_MAX;
    p.run([&] {
        for (int round = 0; round < 5; ++round) {
            const std::int64_t t0 = ws_wall_now();
            for (int i = 0; i < n; ++i) crew::join([] {}, [] {});
            const std::int64_t t1 = ws_wall_now();
            task_group g;
            for (int i = 0; i < n; ++i) g.run([] {});
            g.wait();
            const std::int64_t t2 = ws_wall_now();
            best_join = std::min(best_join, (t1 - t0) / n);
            best_spawn = std::min(best_spawn, (t2 - t1) / n);
        }
    });
    ws_join_ns.store(best_join, std::memory_order_relaxed);
    ws_spawn_ns.store(best_spawn, std::memory_order_relaxed);
    set_ws_current(saved);
}

// The time from pushing a join's second half to a thief starting it, while the thief is searching:
// the median over a few rounds on a private 2-worker pool.
std::int64_t calibrate_steal_cost() {
    ws_strand* const saved = ws_current;
    set_ws_current(nullptr);
    std::vector<std::int64_t> samples;
    {
        pool p(2);
        p.run([&] {
            for (int i = 0; i < 31; ++i) {
                std::atomic<std::int64_t> started{0};
                const void* const here = ws_thread_id();
                const void* ran_on = here;
                const std::int64_t t0 = ws_wall_now();
                crew::join(
                    [&] {
                        const std::int64_t give_up = t0 + 20'000'000;  // 20 ms: the thief never came
                        while (started.load(std::memory_order_acquire) == 0 && ws_wall_now() < give_up) {
                        }
                    },
                    [&] {
                        ran_on = ws_thread_id();
                        started.store(ws_wall_now(), std::memory_order_release);  // release: the spinner reads ran_on after
                    });
                if (ran_on != here) samples.push_back(started.load(std::memory_order_relaxed) - t0);
            }
        });
    }
    set_ws_current(saved);
    // The least: on a loaded machine the thief's thread is often not even scheduled (or parked and
    // slow to wake); the fastest round is what a steal costs when a thief is there to take the work.
    return samples.empty() ? 0 : *std::min_element(samples.begin(), samples.end());
}

std::once_flag ws_overhead_once, ws_steal_once;
std::int64_t ws_calibrated_steal_cost = 0;
}  // namespace

std::int64_t ws_now() noexcept {
    if (ws_cpu_clock.load(std::memory_order_relaxed)) {
        timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    }
    return ws_wall_now();
}
std::int64_t ws_wall_now() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
std::int64_t ws_strand_overhead() noexcept { return ws_overhead_ns.load(std::memory_order_relaxed); }
std::int64_t ws_join_cost() noexcept { return ws_join_ns.load(std::memory_order_relaxed); }
std::int64_t ws_spawn_cost() noexcept { return ws_spawn_ns.load(std::memory_order_relaxed); }
std::int64_t ws_burden() noexcept { return ws_burden_ns.load(std::memory_order_relaxed); }
void ws_note_fork(std::int64_t branches) noexcept {
    ws_forks.fetch_add(1, std::memory_order_relaxed);
    ws_branches.fetch_add(static_cast<std::uint64_t>(branches), std::memory_order_relaxed);
}
void ws_note_steal(std::int64_t latency_ns) noexcept {
    ws_steals.fetch_add(1, std::memory_order_relaxed);
    ws_latency.fetch_add(static_cast<std::uint64_t>(std::max<std::int64_t>(latency_ns, 0)), std::memory_order_relaxed);
}

struct ws_group_record {
    std::mutex mutex;
    std::int64_t work = 0;
    std::int64_t end_span = 0;      // max over children: the spawner's span at run() + the child's span
    std::int64_t end_burdened = 0;  // likewise, + the steal cost
};

std::shared_ptr<ws_group_record> ws_group_record_of(const task_group* g) {
    std::lock_guard lock(ws_groups_mutex);
    auto [it, inserted] = ws_groups.try_emplace(g);
    if (inserted) {
        it->second = std::make_shared<ws_group_record>();
        ws_groups_count.fetch_add(1, std::memory_order_relaxed);
    }
    return it->second;
}

void ws_group_child_done(ws_group_record& r, const ws_strand& s, std::int64_t start_span,
                         std::int64_t start_burdened) noexcept {
    std::lock_guard lock(r.mutex);
    r.work += s.work;
    r.end_span = std::max(r.end_span, start_span + s.span);
    r.end_burdened = std::max(r.end_burdened, start_burdened + s.burdened + ws_burden());
}

namespace {
std::shared_ptr<ws_group_record> take_record(const task_group* g) noexcept {
    if (ws_groups_count.load(std::memory_order_relaxed) == 0) return nullptr;
    std::lock_guard lock(ws_groups_mutex);
    auto it = ws_groups.find(g);
    if (it == ws_groups.end()) return nullptr;
    std::shared_ptr<ws_group_record> r = std::move(it->second);
    ws_groups.erase(it);
    ws_groups_count.fetch_sub(1, std::memory_order_relaxed);
    return r;
}

// The group's children join the waiting strand: their work adds up, and the strand's span is at
// least the end of its longest child.
void fold_group(ws_strand& s, const ws_group_record& r) noexcept {
    s.work += r.work;
    s.span = std::max(s.span, r.end_span);
    s.burdened = std::max(s.burdened, r.end_burdened);
}
}  // namespace

task_group_status workspan_group_wait(task_group& g) {
    ws_strand* const parent = ws_current;
    ws_strand_scope::close(*parent, ws_now());
    set_ws_current(nullptr);  // paused: the plain wait runs, and what it helps with is not ours
    struct resume {
        ws_strand* p;
        const task_group* g;
        ~resume() {
            // The children finished (wait returned or threw after waiting for all of them).
            if (std::shared_ptr<ws_group_record> r = take_record(g)) fold_group(*p, *r);
            set_ws_current(p);
            p->open = ws_now();
        }
    } resumer{parent, &g};
    return g.wait();
}

void workspan_group_end(const task_group* g) noexcept {
    std::shared_ptr<ws_group_record> r = take_record(g);
    if (r != nullptr && ws_current != nullptr) fold_group(*ws_current, *r);
}

bool workspan_groups_pending() noexcept { return ws_groups_count.load(std::memory_order_relaxed) != 0; }

}  // namespace detail

// ---- workspan ----

workspan::workspan(workspan_options options) {
    std::call_once(detail::ws_overhead_once, [] {
        // Only while no region runs (a region started meanwhile would read a half-set calibration).
        detail::ws_overhead_wall = detail::calibrate_overhead(false);
        detail::ws_overhead_cpu = detail::calibrate_overhead(true);
        detail::calibrate_fork_costs();
    });
    cpu_clock_ = options.clock == workspan_clock::thread_cpu;
    if (options.steal_cost.count() >= 0) {
        steal_cost_ = options.steal_cost.count();
    } else {
        std::call_once(detail::ws_steal_once, [] { detail::ws_calibrated_steal_cost = detail::calibrate_steal_cost(); });
        steal_cost_ = detail::ws_calibrated_steal_cost;
    }
    total_.steal_cost = std::chrono::nanoseconds(steal_cost_);
    total_.join_cost = std::chrono::nanoseconds(detail::ws_join_cost());
    total_.spawn_cost = std::chrono::nanoseconds(detail::ws_spawn_cost());
    total_.strand_overhead = std::chrono::nanoseconds(cpu_clock_ ? detail::ws_overhead_cpu : detail::ws_overhead_wall);
}

workspan::scope::scope(workspan& ws)
    : ws_(ws),
      outer_(detail::ws_current),
      saved_burden_(detail::ws_burden_ns.exchange(ws.steal_cost_, std::memory_order_relaxed)),
      forks0_(detail::ws_forks.load(std::memory_order_relaxed)),
      branches0_(detail::ws_branches.load(std::memory_order_relaxed)),
      steals0_(detail::ws_steals.load(std::memory_order_relaxed)),
      latency0_(detail::ws_latency.load(std::memory_order_relaxed)) {
    if (outer_ == nullptr) {  // the outermost region picks the clock; nested ones keep it
        saved_cpu_ = detail::ws_cpu_clock.exchange(ws.cpu_clock_, std::memory_order_relaxed);
        saved_overhead_ = detail::ws_overhead_ns.exchange(ws.total_.strand_overhead.count(), std::memory_order_relaxed);
    }
    strand_.emplace(root_);
}

workspan::scope::~scope() {
    strand_.reset();  // closes the root strand and resumes the enclosing one
    if (outer_ != nullptr) {  // a nested region is a serial piece of the enclosing strand
        outer_->work += root_.work;
        outer_->span += root_.span;
        outer_->burdened += root_.burdened;
    }
    ws_.fold(root_, detail::ws_forks.load(std::memory_order_relaxed) - forks0_,
             detail::ws_branches.load(std::memory_order_relaxed) - branches0_,
             detail::ws_steals.load(std::memory_order_relaxed) - steals0_,
             detail::ws_latency.load(std::memory_order_relaxed) - latency0_);
    detail::ws_burden_ns.store(saved_burden_, std::memory_order_relaxed);
    if (outer_ == nullptr) {
        detail::ws_cpu_clock.store(saved_cpu_, std::memory_order_relaxed);
        detail::ws_overhead_ns.store(saved_overhead_, std::memory_order_relaxed);
    }
}

void workspan::fold(const detail::ws_strand& root, std::uint64_t forks, std::uint64_t branches,
                    std::uint64_t steals, std::uint64_t latency) {
    std::lock_guard lock(mutex_);
    total_.work += std::chrono::nanoseconds(root.work);
    total_.span += std::chrono::nanoseconds(root.span);
    total_.burdened_span += std::chrono::nanoseconds(root.burdened);
    total_.regions += 1;
    total_.forks += forks;
    total_.branches += branches;
    total_.steals += steals;
    total_.steal_latency += std::chrono::nanoseconds(latency);
}

workspan_report workspan::report() const {
    std::lock_guard lock(mutex_);
    return total_;
}

void workspan::reset() {
    std::lock_guard lock(mutex_);
    workspan_report fresh;
    fresh.steal_cost = total_.steal_cost;
    fresh.strand_overhead = total_.strand_overhead;
    fresh.join_cost = total_.join_cost;
    fresh.spawn_cost = total_.spawn_cost;
    total_ = fresh;
}

// ---- the report ----

namespace {
double ratio(std::chrono::nanoseconds a, std::chrono::nanoseconds b) noexcept {
    return b.count() > 0 ? static_cast<double>(a.count()) / static_cast<double>(b.count()) : 0.0;
}
}  // namespace

double workspan_report::parallelism() const noexcept { return ratio(work, span); }
double workspan_report::burdened_parallelism() const noexcept { return ratio(work, burdened_span); }
std::chrono::nanoseconds workspan_report::greedy_bound(std::size_t workers) const noexcept {
    return work / static_cast<std::int64_t>(std::max<std::size_t>(workers, 1)) + span;
}
std::chrono::nanoseconds workspan_report::burdened_bound(std::size_t workers) const noexcept {
    return work / static_cast<std::int64_t>(std::max<std::size_t>(workers, 1)) + burdened_span;
}
double workspan_report::speedup_bound(std::size_t workers) const noexcept { return ratio(work, greedy_bound(workers)); }
double workspan_report::burdened_speedup_bound(std::size_t workers) const noexcept {
    return ratio(work, burdened_bound(workers));
}

std::ostream& operator<<(std::ostream& os, const workspan_report& r) { return os << to_string(r); }

std::string to_string(const workspan_report& r) {
    auto us = [](std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1000.0; };
    char line[160];
    std::string out;
    std::snprintf(line, sizeof line, "work (T1)            %14.1f us\n", us(r.work));
    out += line;
    std::snprintf(line, sizeof line, "span (T-inf)         %14.1f us\n", us(r.span));
    out += line;
    std::snprintf(line, sizeof line, "parallelism T1/T-inf %14.2f\n", r.parallelism());
    out += line;
    std::snprintf(line, sizeof line, "burdened span        %14.1f us  (steal cost %.2f us, parallelism %.2f)\n",
                  us(r.burdened_span), us(r.steal_cost), r.burdened_parallelism());
    out += line;
    std::snprintf(line, sizeof line, "clock overhead subtracted %.3f us per segment; charged per join %.3f us, per spawn %.3f us\n",
                  us(r.strand_overhead), us(r.join_cost), us(r.spawn_cost));
    out += line;
    std::snprintf(line, sizeof line,
                  "forks %" PRIu64 ", strands %" PRIu64 ", steals %" PRIu64 ", regions %" PRIu64 "\n", r.forks,
                  r.branches, r.steals, r.regions);
    out += line;
    out += "workers   T1/P+T-inf (us)  speed-up   burdened (us)  speed-up\n";
    for (std::size_t p = 1; p <= 256; p *= 2) {
        std::snprintf(line, sizeof line, "%7zu %16.1f %9.2f %15.1f %9.2f\n", p, us(r.greedy_bound(p)),
                      r.speedup_bound(p), us(r.burdened_bound(p)), r.burdened_speedup_bound(p));
        out += line;
    }
    return out;
}

}  // namespace crew
