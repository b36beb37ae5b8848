// bench/async_ping_pong_probe.cpp -- crew-bench's async_ping_pong shape (1,000 concurrent rounds: a
// task spawns a partner, pings it, awaits the pong and the partner) on a pool of W workers,
// repeated on the same pool, with the ping and the pong carried by crew::make_oneshot (as Tokio's
// shape does, and crew-bench's row since session 23) or by two crew::channel<u64>{1} (the row
// before). Prints the median time of 1,000 rounds (docs/BENCHMARKS.md, "Session 23"). Not part of
// the CMake build:
//   g++ -std=c++20 -O2 -g -DNDEBUG -Iinclude bench/async_ping_pong_probe.cpp build/libcrew.a -o ppprobe -lpthread
//   ./ppprobe 1 200 oneshot; ./ppprobe 1 200 channel       (workers, bursts, carrier)
//   valgrind --tool=callgrind --dump-instr=yes ./ppprobe 1 50 oneshot   (then bench/locked_ops.py)
#include <crew/crew.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

using crew::task;
using u64 = unsigned long long;

task<void> pong_channel(crew::channel<u64>* in, crew::channel<u64>* out) {
    auto v = co_await in->receive();
    co_await out->send(*v);
}
task<u64> round_channel() {
    crew::channel<u64> ping{1}, back{1};
    auto partner = crew::spawn(pong_channel(&ping, &back));
    co_await ping.send(1);
    auto v = co_await back.receive();
    co_await std::move(partner);
    co_return *v;
}

task<void> pong_oneshot(crew::oneshot_receiver<u64> in, crew::oneshot_sender<u64> out) {
    std::optional<u64> v = co_await std::move(in);
    out.send(*v);
}
task<u64> round_oneshot() {
    auto [ping_tx, ping_rx] = crew::make_oneshot<u64>();
    auto [pong_tx, pong_rx] = crew::make_oneshot<u64>();
    auto partner = crew::spawn(pong_oneshot(std::move(ping_rx), std::move(pong_tx)));
    ping_tx.send(1);
    std::optional<u64> v = co_await std::move(pong_rx);
    co_await std::move(partner);
    co_return *v;
}

task<u64> rounds(u64 n, bool oneshot) {
    std::vector<crew::join_handle<u64>> handles;
    handles.reserve(n);
    for (u64 i = 0; i < n; ++i) handles.push_back(crew::spawn(oneshot ? round_oneshot() : round_channel()));
    u64 sum = 0;
    for (auto& h : handles) sum += co_await std::move(h);
    co_return sum;
}

int main(int argc, char** argv) {
    crew::pool_options options;
    const std::size_t workers = argc > 1 ? static_cast<std::size_t>(std::atoi(argv[1])) : 1;
    const int bursts = argc > 2 ? std::atoi(argv[2]) : 200;
    const bool oneshot = argc <= 3 || std::strcmp(argv[3], "channel") != 0;
    options.threads = workers;
    crew::pool pool(options);
    pool.block_on(rounds(1000, oneshot));  // warm-up: the frame caches fill
    std::vector<double> us;
    for (int i = 0; i < bursts; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        if (pool.block_on(rounds(1000, oneshot)) != 1000) return 1;
        const auto t1 = std::chrono::steady_clock::now();
        us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::sort(us.begin(), us.end());
    std::printf("median %.1f us per 1,000 rounds (%s), workers: %zu\n", us[us.size() / 2], oneshot ? "oneshot" : "channel",
                workers);
}
