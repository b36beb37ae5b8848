// crew/metrics.hpp -- per-worker counters, as returned by crew::pool::metrics().
#pragma once

#include <cstdint>
#include <vector>

namespace crew {

struct worker_metrics {
    std::uint64_t tasks_run = 0;        // tasks this worker executed (a join's inline half included)
    std::uint64_t steals = 0;           // tasks it took from another worker's deque
    std::uint64_t failed_steals = 0;    // steal attempts that found the victim empty or lost a race
    std::uint64_t parks = 0;            // times it went to sleep
    std::uint64_t injector_pops = 0;    // tasks it took from the pool's outside-submission queue
    std::uint64_t max_deque_depth = 0;  // the deepest its deque got

    worker_metrics& operator+=(const worker_metrics& o) noexcept {
        tasks_run += o.tasks_run;
        steals += o.steals;
        failed_steals += o.failed_steals;
        parks += o.parks;
        injector_pops += o.injector_pops;
        max_deque_depth = max_deque_depth > o.max_deque_depth ? max_deque_depth : o.max_deque_depth;
        return *this;
    }
};

struct pool_metrics {
    std::vector<worker_metrics> workers;  // index i: worker i

    // Sums of every counter; max_deque_depth is the largest of any worker.
    worker_metrics total() const noexcept {
        worker_metrics sum;
        for (const auto& w : workers) sum += w;
        return sum;
    }
};

}  // namespace crew
