// src/worker_tuning.hpp -- the worker's scheduling constants and its clock, shared by
// src/worker.cpp (finding and stealing work) and src/worker_idle.cpp (spinning, lingering, parking).
// Internal to the library: not installed.
#pragma once

#include <chrono>
#include <cstdint>

namespace crew::detail::tuning {

// How long an idle worker looks for work before it parks: rounds of a full steal sweep followed by
// a backoff (2^round pause instructions for the first rounds, then a yield of the core).
inline constexpr std::uint32_t pause_rounds = 8;
inline constexpr std::uint32_t spin_rounds = 24;
// Then it lingers (linger_round, src/worker_idle.cpp): it keeps looking, a yield of the core between looks, until this
// long after the linger began, and only then parks.
// oneTBB's workers do the same: a pool that gets its next job within the window (a caller calling
// one algorithm after another) finds both workers awake, and the job pays no futex wake-ups.
inline constexpr std::int64_t linger_ns = 200'000;
// The injector interval (Tokio's self-tuning): a worker looks at the injector first every
// injector_interval_ find_task calls, so outside submissions never starve behind a worker whose
// own queues never empty. The interval aims at target_interval_ns between looks, from a running
// mean (weight ewma_alpha) of the time per call, bounded to [min_interval, max_interval].
inline constexpr std::uint32_t min_interval = 2;
inline constexpr std::uint32_t max_interval = 127;
inline constexpr double target_interval_ns = 200'000.0;
inline constexpr double ewma_alpha = 0.1;
// At most this many coroutine tasks run from the LIFO slot in a row (Tokio PR #5712).
inline constexpr std::uint32_t max_lifo_runs = 3;
// A thief leaves a victim's lone coroutine task to the victim if the victim takes a task within
// this long (leave_lone_task_cold).
inline constexpr bool lone_task_rule = true;
inline constexpr std::int64_t lone_task_grace_ns = 5'000;
// A busy worker takes half of another worker's ring when that ring's head has not moved for this
// long while tasks wait in it (steal_stuck_cold): its worker is descheduled or stuck in one run.
inline constexpr std::int64_t stuck_grace_ns = 50'000;

inline std::int64_t now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace crew::detail::tuning
