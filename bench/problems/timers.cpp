// timers: crew::sleep_for accuracy on an otherwise idle pool (issue 11).
//   timer_sleep_100us / _1ms / _10ms: one task sleeps repeatedly; "time" is the p50 overshoot
//   (actual sleep - requested), p99 in the extras.
//   timer_spread_10k: 10,000 tasks each sleep 1 ms from one start; "time" is the spread (last
//   firing - first firing), p50/p99 overshoot in the extras.
// The Tokio/Asio rows come from bench/problems/timer_peers.cpp (same shapes, same figures).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <crew/async.hpp>
#include <crew/crew.hpp>

#include "harness.hpp"

namespace crew_bench {

namespace {

crew::task<void> sleep_series(std::chrono::nanoseconds d, std::size_t n, std::vector<double>& over) {
    for (std::size_t i = 0; i < n; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        co_await crew::sleep_for(d);
        over.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0 - d).count());
    }
}

sample overshoot_sample(crew::pool& p, std::chrono::nanoseconds d, std::size_t n) {
    std::vector<double> over;
    over.reserve(n);
    p.block_on(sleep_series(d, n, over));
    std::sort(over.begin(), over.end());
    sample s;
    s.seconds = over[over.size() / 2];
    s.extras.emplace_back("p50 over us", s.seconds * 1e6);
    s.extras.emplace_back("p99 over us", over[over.size() * 99 / 100] * 1e6);
    return s;
}

crew::task<void> one_sleeper(std::chrono::steady_clock::time_point start, double* fired) {
    co_await crew::sleep_until(start + std::chrono::milliseconds(1));
    *fired = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

sample spread_sample(crew::pool& p, std::size_t n) {
    std::vector<double> fired(n, 0.0);
    std::vector<crew::join_handle<void>> hs;
    hs.reserve(n);
    const auto start = std::chrono::steady_clock::now() + std::chrono::milliseconds(5);  // spawn first
    for (std::size_t i = 0; i < n; ++i) hs.push_back(p.spawn(one_sleeper(start, &fired[i])));
    for (auto& h : hs) h.get();
    std::sort(fired.begin(), fired.end());
    sample s;
    s.seconds = fired.back() - fired.front();
    s.extras.emplace_back("p50 over us", (fired[n / 2] - 0.001) * 1e6);
    s.extras.emplace_back("p99 over us", (fired[n * 99 / 100] - 0.001) * 1e6);
    s.extras.emplace_back("spread us", s.seconds * 1e6);
    return s;
}

}  // namespace

problem make_timers(const config& cfg, std::vector<std::string>& notes, const std::string& shape) {
    problem p;
    p.name = "timer_" + shape;
    p.max_reps = 3;
    if (shape == "spread_10k") {
        p.title = "10,000 concurrent 1 ms sleeps";
        p.what = "10,000 tasks sleep until one instant 1 ms ahead: spread (last - first firing); overshoot p50/p99 "
                 "in the extras";
        p.time_label = "firing spread";
        p.impls.push_back({"crew", [](std::size_t t) -> run_fn {
                               auto pool = std::make_shared<crew::pool>(t);
                               return [pool] { return spread_sample(*pool, 10'000); };
                           }});
        add_timer_peers(p, notes, cfg, p.name, 10'000);
        return p;
    }
    std::chrono::nanoseconds d = std::chrono::microseconds(100);
    std::size_t n = cfg.quick ? 300 : 2000;
    if (shape == "sleep_1ms") {
        d = std::chrono::milliseconds(1);
        n = cfg.quick ? 100 : 1000;
    } else if (shape == "sleep_10ms") {
        d = std::chrono::milliseconds(10);
        n = cfg.quick ? 20 : 200;
    }
    p.title = "sleep_for(" + shape.substr(6) + ") overshoot";
    p.size_note = cfg.quick ? "quick mode: fewer sleeps per rep" : "";
    p.what = "one task sleeps repeatedly on an idle pool: p50 overshoot (actual - requested); p99 in the extras";
    p.time_label = "p50 overshoot";
    p.impls.push_back({"crew", [d, n](std::size_t t) -> run_fn {
                           auto pool = std::make_shared<crew::pool>(t);
                           return [pool, d, n] { return overshoot_sample(*pool, d, n); };
                       }});
    add_timer_peers(p, notes, cfg, p.name, n);
    return p;
}

}  // namespace crew_bench
