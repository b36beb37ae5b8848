// bench/async_instructions.cpp -- a small driver for counting instructions per coroutine operation
// (docs/BENCHMARKS.md, "Coroutine tasks, session 8"): spawn+await ("sa") and ping_pong ("pp") with
// the bodies of bench/problems/async.cpp (and chained_spawn: "cs", one op = one link; spawn_many_local:
// "sm", one op = one spawn, its await and its bump), run on a pool of W workers. Not part of the CMake build:
//   g++ -std=c++20 -O2 -g -DNDEBUG -Iinclude bench/async_instructions.cpp build/libcrew.a -o drv -lpthread
//   valgrind --tool=callgrind ./drv sa 1000 1 10; valgrind --tool=callgrind ./drv sa 1000 1 20
// instructions per op = (the second total - the first) / (10 * 1000).
//   usage: drv sa|pp|cs|sm <ops per iteration> <workers> <iterations>
#include <crew/async/join_handle.hpp>
#include <crew/async/task.hpp>
#include <crew/async/channel.hpp>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>
using crew::task; using u64 = unsigned long long;
task<u64> one() { co_return 1; }
task<u64> spawn_await(u64 n) { u64 s = 0; for (u64 i = 0; i < n; ++i) s += co_await crew::spawn(one()); co_return s; }
task<u64> ping_round() {
    crew::channel<u64> ping{1}, pong{1};
    auto partner = crew::spawn([](crew::channel<u64>* in, crew::channel<u64>* out) -> task<u64> {
        auto v = co_await in->receive(); co_await out->send(*v + 1); co_return 0; }(&ping, &pong));
    co_await ping.send(1);
    u64 r = *co_await pong.receive();
    co_await std::move(partner);
    co_return r - 1;
}
task<u64> ping_pong(u64 n) {
    std::vector<crew::join_handle<u64>> hs; hs.reserve(n);
    for (u64 i = 0; i < n; ++i) hs.push_back(crew::spawn(ping_round()));
    u64 s = 0; for (auto& h : hs) s += co_await std::move(h); co_return s;
}
task<void> chain(std::shared_ptr<crew::channel<u64>> done, u64 left, u64 depth) {
    if (left == 0) co_await done->send(depth);
    else (void)crew::spawn(chain(std::move(done), left - 1, depth));  // dropping the handle detaches
}
task<u64> chained_spawn(u64 n) {
    auto done = std::make_shared<crew::channel<u64>>(1);
    (void)crew::spawn(chain(done, n, n));
    co_return *co_await done->receive();
}
task<void> bump(std::atomic<u64>* counter) { counter->fetch_add(1, std::memory_order_relaxed); co_return; }
task<u64> spawn_many_local(u64 n) {
    std::atomic<u64> counter{0};
    std::vector<crew::join_handle<void>> hs; hs.reserve(n);
    for (u64 i = 0; i < n; ++i) hs.push_back(crew::spawn(bump(&counter)));
    for (auto& h : hs) co_await std::move(h);
    co_return counter.load();
}
int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s sa|pp|cs|sm <ops per iteration> <workers> <iterations>\n", argv[0]);
        return 2;
    }
    const char* shape = argv[1]; u64 n = strtoull(argv[2], 0, 10); unsigned w = atoi(argv[3]); u64 it = strtoull(argv[4], 0, 10);
    crew::pool p(w);
    u64 tot = 0;
    for (u64 i = 0; i < it; ++i)
        tot += strcmp(shape, "sa") == 0   ? p.block_on(spawn_await(n))
               : strcmp(shape, "cs") == 0 ? p.block_on(chained_spawn(n))
               : strcmp(shape, "sm") == 0 ? p.block_on(spawn_many_local(n))
                                          : p.block_on(ping_pong(n));
    printf("%llu\n", tot);
}
