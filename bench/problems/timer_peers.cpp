// The Tokio and Asio rows of the timer_* problems (bench/problems/timers.cpp has crew's rows):
// the peers' timer shapes (bench/peers/tokio/src/io.rs, bench/peers/asio/io_shapes.hpp) run as
// subprocesses through add_io_peers (bench/problems/net.cpp).
//   timer_sleep_100us / _1ms / _10ms   n sleeps one after the other; extras "p50 over us",
//                                      "p99 over us" (overshoot: woken - asked)
//   timer_spread_10k                   n concurrent sleeps until start + 1 ms; extras "spread us"
//                                      (last - first firing) and the overshoot p50/p99
#include <cstdint>
#include <string>
#include <vector>

#include "harness.hpp"

namespace crew_bench {

void add_timer_peers(problem& p, std::vector<std::string>& notes, const config& cfg, const std::string& name,
                     std::uint64_t n) {
    io_peer_shape sh;
    sh.name = name;
    sh.n = n;
    sh.iters = 1;
    sh.check = n;
    sh.figures = {{"p50_ns", "p50 over us", 1e-3}, {"p99_ns", "p99 over us", 1e-3}};
    sh.time_key = "p50_ns";  // as crew's row: the time is the p50 overshoot, or the spread
    if (name == "timer_spread_10k") {
        sh.figures.push_back({"spread_ns", "spread us", 1e-3});
        sh.time_key = "spread_ns";
    }
    add_io_peers(p, notes, cfg, sh);
}

}  // namespace crew_bench
