// crew-asio-peer: Tokio's rt_multi_threaded benchmark shapes on standalone Asio's C++20 coroutines
// (co_spawn / awaitable on an io_context run by N threads), written like crew's and Tokio's
// versions (bench/problems/async.cpp, bench/peers/tokio/src/main.rs).
//
//   crew-asio-peer <problem> <threads> <reps> <n> <iters>
//
// prints one JSON line per rep, the same format as the Tokio peer:
//   {"peer":"asio","problem":"spawn_await","threads":2,"rep":0,"n":10000,"iters":10,"ns":123,"check":100000}
// Asio has no join handle and no when_all over a runtime count of coroutines (parallel_group is
// fixed-arity in 1.22): fan-in is a countdown whose last arrival signals a concurrent_channel the
// parent awaits -- the usual Asio idiom. "Yield" is co_await post(executor).
// The timer_* and tcp_echo_* problems (io_shapes.hpp) print the same line with "p50_ns", "p99_ns"
// and "spread_ns" added; for tcp_echo_* <iters> is the number of connections and a rep runs the
// shape once (n requests in all).
#include <asio.hpp>
#include <asio/experimental/concurrent_channel.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {
using value_channel = asio::experimental::concurrent_channel<void(asio::error_code, std::uint64_t)>;
}
#include "io_shapes.hpp"

namespace {

using asio::awaitable;
using asio::use_awaitable;
using u64 = std::uint64_t;

constexpr u64 yields_per_task = 1000;
constexpr u64 fork_join_tasks = 100;

// Counts down the children of a fan-out; the last one wakes the awaiting parent.
struct countdown {
    std::atomic<u64> left;
    std::atomic<u64> sum{0};
    value_channel done;  // void(error_code) channels do not compile in Asio 1.22
    countdown(asio::any_io_executor ex, u64 n) : left(n), done(ex, 1) {}
    void arrive(u64 v) {
        sum.fetch_add(v, std::memory_order_relaxed);
        // acq_rel: the last arrival sees every earlier sum; the parent reads sum after the channel.
        if (left.fetch_sub(1, std::memory_order_acq_rel) == 1) done.try_send(asio::error_code{}, u64{0});
    }
    awaitable<u64> wait() {
        co_await done.async_receive(use_awaitable);
        co_return sum.load(std::memory_order_relaxed);
    }
};

// Spawns child(i) for i < n on ex; each reports its value to the countdown.
template <class Child>
std::shared_ptr<countdown> fan_out(asio::any_io_executor ex, u64 n, Child child) {
    auto c = std::make_shared<countdown>(ex, n);
    for (u64 i = 0; i < n; ++i)
        asio::co_spawn(ex, child(i), [c](std::exception_ptr e, u64 v) {
            if (e) std::rethrow_exception(e);
            c->arrive(v);
        });
    return c;
}

awaitable<u64> bump(std::atomic<u64>* counter) {
    counter->fetch_add(1, std::memory_order_relaxed);
    co_return 0;
}

awaitable<u64> spawn_many_local(u64 n) {
    auto ex = co_await asio::this_coro::executor;
    std::atomic<u64> counter{0};
    co_await fan_out(ex, n, [&](u64) { return bump(&counter); })->wait();
    co_return counter.load();
}

awaitable<u64> yielder() {
    auto ex = co_await asio::this_coro::executor;
    for (u64 i = 0; i < yields_per_task; ++i) co_await asio::post(ex, use_awaitable);
    co_return yields_per_task;
}

awaitable<u64> yield_many(u64 n) {
    auto ex = co_await asio::this_coro::executor;
    co_return co_await fan_out(ex, n, [](u64) { return yielder(); })->wait();
}

awaitable<u64> pong(std::shared_ptr<value_channel> in, std::shared_ptr<value_channel> out) {
    u64 v = co_await in->async_receive(use_awaitable);
    co_await out->async_send(asio::error_code{}, v, use_awaitable);
    co_return 0;
}

// One round: spawn a partner, ping it, wait for its pong, then for the partner itself.
awaitable<u64> ping_round() {
    auto ex = co_await asio::this_coro::executor;
    auto ping = std::make_shared<value_channel>(ex, 1);
    auto back = std::make_shared<value_channel>(ex, 1);
    auto partner = fan_out(ex, 1, [&](u64) { return pong(ping, back); });
    co_await ping->async_send(asio::error_code{}, 1, use_awaitable);
    u64 v = co_await back->async_receive(use_awaitable);
    co_await partner->wait();
    co_return v;
}

awaitable<u64> ping_pong(u64 n) {
    auto ex = co_await asio::this_coro::executor;
    co_return co_await fan_out(ex, n, [](u64) { return ping_round(); })->wait();
}

awaitable<void> chain(std::shared_ptr<value_channel> done, u64 left, u64 depth) {
    auto ex = co_await asio::this_coro::executor;
    if (left == 0)
        done->try_send(asio::error_code{}, depth);
    else
        asio::co_spawn(ex, chain(done, left - 1, depth), asio::detached);
}

awaitable<u64> chained_spawn(u64 n) {
    auto ex = co_await asio::this_coro::executor;
    auto done = std::make_shared<value_channel>(ex, 1);
    asio::co_spawn(ex, chain(done, n, n), asio::detached);
    co_return co_await done->async_receive(use_awaitable);
}

awaitable<u64> one() { co_return 1; }

awaitable<u64> spawn_await(u64 n) {
    auto ex = co_await asio::this_coro::executor;
    u64 sum = 0;
    for (u64 i = 0; i < n; ++i) sum += co_await asio::co_spawn(ex, one(), use_awaitable);
    co_return sum;
}

awaitable<u64> echo(std::shared_ptr<value_channel> in, std::shared_ptr<value_channel> out, u64 n) {
    for (u64 i = 0; i < n; ++i) {
        u64 v = co_await in->async_receive(use_awaitable);
        co_await out->async_send(asio::error_code{}, v, use_awaitable);
    }
    co_return 0;
}

awaitable<u64> channel_round_trip(u64 n) {
    auto ex = co_await asio::this_coro::executor;
    auto to_echo = std::make_shared<value_channel>(ex, 1);
    auto from_echo = std::make_shared<value_channel>(ex, 1);
    auto partner = fan_out(ex, 1, [&](u64) { return echo(to_echo, from_echo, n); });
    u64 sum = 0;
    for (u64 i = 0; i < n; ++i) {
        co_await to_echo->async_send(asio::error_code{}, 1, use_awaitable);
        sum += co_await from_echo->async_receive(use_awaitable);
    }
    co_await partner->wait();
    co_return sum;
}

awaitable<u64> skynet(u64 num, u64 size) {
    if (size == 1) co_return num;
    auto ex = co_await asio::this_coro::executor;
    u64 sub = size / 10;
    co_return co_await fan_out(ex, 10, [=](u64 i) { return skynet(num + i * sub, sub); })->wait();
}

awaitable<u64> coro_skynet(u64 n) { co_return co_await skynet(0, n); }

u64 fib(u64 n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

// Asio has no fork-join: each of the 100 tasks runs fib serially (as the Tokio peer does).
awaitable<u64> fib_task(u64 n) {
    volatile u64 arg = n;
    co_return fib(arg);
}

awaitable<u64> fork_join_in_tasks(u64 n) {
    auto ex = co_await asio::this_coro::executor;
    co_return co_await fan_out(ex, fork_join_tasks, [n](u64) { return fib_task(n); })->wait();
}

// From this outside thread: n spawns onto the idle runtime, then wait for all of them.
u64 spawn_many_remote_idle(asio::io_context& ctx, u64 n) {
    std::atomic<u64> counter{0};
    std::atomic<u64> left{n};
    for (u64 i = 0; i < n; ++i)
        asio::co_spawn(ctx, bump(&counter), [&](std::exception_ptr e, u64) {
            if (e) std::rethrow_exception(e);
            // release: the waiter's acquire load sees every bump.
            if (left.fetch_sub(1, std::memory_order_acq_rel) == 1) left.notify_one();
        });
    for (u64 v = left.load(std::memory_order_acquire); v != 0; v = left.load(std::memory_order_acquire))
        left.wait(v, std::memory_order_acquire);
    return counter.load();
}

using shape_fn = awaitable<u64> (*)(u64);

struct shape {
    const char* name;
    shape_fn in_task;  // nullptr: spawn_many_remote_idle, run from the outside thread
};

const shape shapes[] = {
    {"spawn_many_local", spawn_many_local}, {"spawn_many_remote_idle", nullptr},
    {"yield_many", yield_many},             {"ping_pong", ping_pong},
    {"chained_spawn", chained_spawn},       {"spawn_await", spawn_await},
    {"channel_round_trip", channel_round_trip}, {"coro_skynet", coro_skynet},
    {"fork_join_in_tasks", fork_join_in_tasks},
};

[[noreturn]] void usage() {
    std::fputs("usage: crew-asio-peer <problem> <threads> <reps> <n> <iters>\n", stderr);
    std::exit(2);
}

u64 number(const char* s) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (end == s || *end != '\0' || v == 0) usage();
    return v;
}

// One JSON line per rep of a timer_* / tcp_echo_* problem.
void run_io(asio::io_context& ctx, const char* name, u64 threads, u64 reps, u64 n, u64 iters) {
    for (u64 rep = 0; rep < reps; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        const io_shapes::figures f = io_shapes::run(ctx, name, n, iters);
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
        std::printf("{\"peer\":\"asio\",\"problem\":\"%s\",\"threads\":%llu,\"rep\":%llu,\"n\":%llu,\"iters\":%llu,"
                    "\"ns\":%lld,\"check\":%llu,\"p50_ns\":%llu,\"p99_ns\":%llu,\"spread_ns\":%llu}\n",
                    name, static_cast<unsigned long long>(threads), static_cast<unsigned long long>(rep),
                    static_cast<unsigned long long>(n), static_cast<unsigned long long>(iters), static_cast<long long>(ns),
                    static_cast<unsigned long long>(f.check), static_cast<unsigned long long>(f.p50_ns),
                    static_cast<unsigned long long>(f.p99_ns), static_cast<unsigned long long>(f.spread_ns));
        std::fflush(stdout);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) usage();
    const shape* sh = nullptr;
    for (auto& s : shapes)
        if (std::strcmp(s.name, argv[1]) == 0) sh = &s;
    const bool io = io_shapes::is_io_problem(argv[1]);
    if (sh == nullptr && !io) usage();
    u64 threads = number(argv[2]), reps = number(argv[3]), n = number(argv[4]), iters = number(argv[5]);
    asio::io_context ctx(static_cast<int>(threads));
    auto guard = asio::make_work_guard(ctx);
    std::vector<std::thread> workers;
    for (u64 t = 0; t < threads; ++t) workers.emplace_back([&] { ctx.run(); });
    if (io) {
        try {
            run_io(ctx, argv[1], threads, reps, n, iters);
        } catch (const std::invalid_argument&) {
            usage();
        }
        guard.reset();
        ctx.stop();
        for (auto& w : workers) w.join();
        return 0;
    }
    for (u64 rep = 0; rep < reps; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        u64 check = 0;
        for (u64 i = 0; i < iters; ++i)
            check += sh->in_task ? asio::co_spawn(ctx, sh->in_task(n), asio::use_future).get()
                                 : spawn_many_remote_idle(ctx, n);
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
        std::printf("{\"peer\":\"asio\",\"problem\":\"%s\",\"threads\":%llu,\"rep\":%llu,\"n\":%llu,\"iters\":%llu,"
                    "\"ns\":%lld,\"check\":%llu}\n",
                    sh->name, static_cast<unsigned long long>(threads), static_cast<unsigned long long>(rep),
                    static_cast<unsigned long long>(n), static_cast<unsigned long long>(iters),
                    static_cast<long long>(ns), static_cast<unsigned long long>(check));
        std::fflush(stdout);
    }
    guard.reset();
    ctx.stop();
    for (auto& w : workers) w.join();
    return 0;
}
