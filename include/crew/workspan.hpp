// crew/workspan.hpp -- work, span and parallelism of a fork-join program, measured at run time.
//
// A scoped profiler in the manner of Cilkscale, over crew's own fork points (join, fork_join,
// task_group, and every algorithm built on them); no compiler pass:
//
//     crew::workspan ws;
//     {
//         auto region = ws.measure();  // the calling thread's strand, and everything it forks
//         crew::parallel_for(...);     // or join / fork_join / task_group / other algorithms
//     }
//     crew::workspan_report r = ws.report();
//     std::cout << r;  // T1, T-inf, T1/T-inf, burdened span, greedy bounds for P = 1, 2, ..., 256
//
// or `ws.run(pool, f)`: f on the pool, measured. Work T1 is the time all strands ran; span T-inf
// the longest chain of strands that had to run one after the other; parallelism T1/T-inf the most
// speed-up any number of workers could give. The burdened span charges every potential steal on
// the path (every forked branch but the one the forking thread runs inline, every task_group
// child) the measured cost of a steal, as Cilkscale does: T1/P + burdened span is a realistic
// estimate of the run time on P workers, even on a 2-core laptop. See docs/OBSERVABILITY.md
// "Work and span" for the recurrence, the accuracy and the cost.
//
// Off (no measure() scope active on a thread), a fork point pays one thread-local load. On, each
// fork point reads the clock about 4 times and each task_group child takes a lock: that overhead is
// kept out of the measured segments, the rest (one clock read per segment, calibrated once) is
// subtracted, and each fork point is charged what a plain one costs (calibrated once). With the default wall clock, blocking in a measured strand
// (sleeping, waiting on I/O or on something other than a crew fork point) counts as work; with the
// thread_cpu clock it does not. Regions of several workspans may run at once only with the
// same clock and steal cost (the profiler's settings are process-wide while a region runs).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "crew/pool.hpp"
#include "crew/detail/workspan_hooks.hpp"

namespace crew {

// What a strand's segments are timed with. wall (the default): steady_clock, about 25 ns a read
// (vDSO); it also counts a strand's blocking and the time its thread was preempted, so on a loaded
// machine work and span grow. thread_cpu: the CPU time of the thread running the strand
// (CLOCK_THREAD_CPUTIME_ID): preemption and blocking count nothing, but each read is a system
// call (about 0.5 to 1.5 us), so fine-grained programs measure mostly the profiler: use it for
// coarse leaves on a busy machine.
enum class workspan_clock { wall, thread_cpu };

struct workspan_options {
    // The cost charged to each potential steal in the burdened span. Negative: measured once per
    // process (the median time from a push to a searching thief starting the job, on a private
    // 2-worker pool; see docs/OBSERVABILITY.md).
    std::chrono::nanoseconds steal_cost{-1};
    workspan_clock clock = workspan_clock::wall;
};

struct workspan_report {
    std::chrono::nanoseconds work{0};           // T1
    std::chrono::nanoseconds span{0};           // T-infinity
    std::chrono::nanoseconds burdened_span{0};  // span with each potential steal charged steal_cost
    std::chrono::nanoseconds steal_cost{0};     // what each potential steal was charged
    std::chrono::nanoseconds strand_overhead{0};  // subtracted from each segment of a strand (calibrated)
    // What a plain (uninstrumented) join / fork_join, and a task_group child, cost the forking
    // strand: calibrated once per process on a 1-worker pool and charged to its work and span in
    // place of the instrumented fork point's own cost.
    std::chrono::nanoseconds join_cost{0};
    std::chrono::nanoseconds spawn_cost{0};
    std::uint64_t regions = 0;   // measure() scopes folded in (they compose serially)
    std::uint64_t forks = 0;     // fork points: join, fork_join, task_group::run
    std::uint64_t branches = 0;  // strands they started (2 per join, k per fork_join, 1 per run)
    std::uint64_t steals = 0;    // branches that ran on another thread than their fork point's
    std::chrono::nanoseconds steal_latency{0};  // summed: fork -> start of those branches

    // T1 / T-inf (0 when nothing was measured).
    double parallelism() const noexcept;
    // T1 / burdened span.
    double burdened_parallelism() const noexcept;
    // The greedy-scheduler bound T1/P + T-inf on the run time on `workers` workers (P >= 1; 0 is
    // taken as 1), and with the burdened span instead of the span.
    std::chrono::nanoseconds greedy_bound(std::size_t workers) const noexcept;
    std::chrono::nanoseconds burdened_bound(std::size_t workers) const noexcept;
    // T1 / greedy_bound(P) and T1 / burdened_bound(P): the speed-up those bounds predict.
    double speedup_bound(std::size_t workers) const noexcept;
    double burdened_speedup_bound(std::size_t workers) const noexcept;
};

// The report as a small table: T1, T-inf, parallelism, burdened span, and for P = 1, 2, 4, ...,
// 256 the greedy bound and the burdened estimate with their speed-ups.
std::ostream& operator<<(std::ostream& os, const workspan_report& r);
std::string to_string(const workspan_report& r);

class workspan {
public:
    workspan() : workspan(workspan_options{}) {}
    explicit workspan(workspan_options options);
    workspan(const workspan&) = delete;
    workspan& operator=(const workspan&) = delete;

    // A measured region on the calling thread: from construction to destruction, the calling
    // thread's code is one strand, and everything it forks through crew is measured (on whichever
    // workers it runs). Regions fold into this workspan serially; a region nested in another
    // measured region (of any workspan) also counts in the enclosing one. Neither copyable nor
    // movable: `auto region = ws.measure();`. Must end on the thread it began on (as any scope).
    class scope {
    public:
        scope(const scope&) = delete;
        scope& operator=(const scope&) = delete;
        ~scope();

    private:
        friend class workspan;
        explicit scope(workspan& ws);
        workspan& ws_;
        detail::ws_strand root_;
        detail::ws_strand* outer_;
        std::int64_t saved_burden_;
        bool saved_cpu_ = false;
        std::int64_t saved_overhead_ = 0;
        std::uint64_t forks0_, branches0_, steals0_, latency0_;
        std::optional<detail::ws_strand_scope> strand_;
    };
    [[nodiscard]] scope measure() { return scope(*this); }

    // Runs f on the calling thread inside measure(); returns its result, rethrows its exception.
    template <class F>
    decltype(auto) run(F&& f) {
        scope region = measure();
        return std::invoke(std::forward<F>(f));
    }
    // Runs f on `p` (as p.run(f)) inside measure().
    template <class F>
    std::invoke_result_t<F> run(pool& p, F&& f) {
        return p.run([&]() -> std::invoke_result_t<F> {
            scope region = measure();
            return std::invoke(std::forward<F>(f));
        });
    }

    // Everything measured so far (regions still open are not included). Any thread.
    workspan_report report() const;
    // Forget everything measured so far.
    void reset();

private:
    void fold(const detail::ws_strand& root, std::uint64_t forks, std::uint64_t branches, std::uint64_t steals,
              std::uint64_t latency);

    std::int64_t steal_cost_;
    bool cpu_clock_;
    mutable std::mutex mutex_;
    workspan_report total_;
};

}  // namespace crew
