// bench/peers/asio/io_shapes.hpp -- the timer_* and tcp_echo_* shapes of crew-bench on Asio
// (steady_timer, ip::tcp with C++20 coroutines), written as the Tokio peer's src/io.rs:
//   timer_sleep_<d>   n sleeps of <d> one after the other; overshoot (woken - asked) p50/p99
//   timer_spread_10k  n concurrent timers expiring at start + 1 ms; spread = last - first firing
//   tcp_echo_*        <conns> connections, n requests in all, 64-byte messages; client and server
//                     on this io_context; latency of a round trip p50/p99
// Included by asio_peer.cpp only.
#pragma once

#include <algorithm>
#include <array>
#include <stdexcept>

namespace io_shapes {

using asio::awaitable;
using asio::use_awaitable;
using asio::ip::tcp;
using u64 = std::uint64_t;
using steady = std::chrono::steady_clock;

constexpr std::size_t message = 64;

struct figures {
    u64 check = 0, p50_ns = 0, p99_ns = 0, spread_ns = 0;
};

inline figures make_figures(u64 check, std::vector<u64> v, u64 spread) {
    std::sort(v.begin(), v.end());
    figures f{check, 0, 0, spread};
    if (!v.empty()) {
        f.p50_ns = v[(v.size() - 1) / 2];
        f.p99_ns = v[static_cast<std::size_t>(static_cast<double>(v.size() - 1) * 0.99)];
    }
    return f;
}

inline u64 ns_since(steady::time_point t0) {
    return static_cast<u64>(std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now() - t0).count());
}

inline awaitable<std::vector<u64>> sleeps(std::chrono::nanoseconds d, u64 n) {
    asio::steady_timer t(co_await asio::this_coro::executor);
    std::vector<u64> over;
    over.reserve(n);
    for (u64 i = 0; i < n; ++i) {
        const auto t0 = steady::now();
        t.expires_after(d);
        co_await t.async_wait(use_awaitable);
        const u64 took = ns_since(t0);
        over.push_back(took > static_cast<u64>(d.count()) ? took - static_cast<u64>(d.count()) : 0);
    }
    co_return over;
}

inline awaitable<std::vector<u64>> spread(u64 n) {
    auto ex = co_await asio::this_coro::executor;
    const auto start = steady::now();
    const auto deadline = start + std::chrono::milliseconds(1);
    std::vector<u64> fired(n);
    std::atomic<u64> left{n};
    value_channel done(ex, 1);
    for (u64 i = 0; i < n; ++i)
        asio::co_spawn(ex, [&, i]() -> awaitable<void> {
            asio::steady_timer t(co_await asio::this_coro::executor, deadline);
            co_await t.async_wait(use_awaitable);
            fired[i] = ns_since(start);
            // acq_rel: the last arrival publishes every fired[] slot to the parent's receive.
            if (left.fetch_sub(1, std::memory_order_acq_rel) == 1) done.try_send(asio::error_code{}, u64{0});
        }, asio::detached);
    co_await done.async_receive(use_awaitable);
    co_return fired;
}

inline awaitable<void> echo(tcp::socket s) {
    std::array<char, 4096> buf;
    try {
        for (;;) {
            const std::size_t n = co_await s.async_read_some(asio::buffer(buf), use_awaitable);
            co_await asio::async_write(s, asio::buffer(buf.data(), n), use_awaitable);
        }
    } catch (const std::system_error&) {  // end of stream (asio::error::eof) or a reset
    }
}

inline awaitable<std::vector<u64>> client(tcp::endpoint at, u64 id, u64 rounds) {
    tcp::socket s(co_await asio::this_coro::executor);
    co_await s.async_connect(at, use_awaitable);
    s.set_option(tcp::no_delay(true));
    std::vector<u64> lat;
    lat.reserve(rounds);
    std::array<unsigned char, message> msg, back;
    for (u64 r = 0; r < rounds; ++r) {
        for (std::size_t i = 0; i < message; ++i) msg[i] = static_cast<unsigned char>(id * 31 + r + i);
        const auto t0 = steady::now();
        co_await asio::async_write(s, asio::buffer(msg), use_awaitable);
        co_await asio::async_read(s, asio::buffer(back), use_awaitable);
        lat.push_back(ns_since(t0));
        if (msg != back) throw std::runtime_error("echo mismatch");
    }
    co_return lat;
}

inline awaitable<std::vector<u64>> tcp_echo(u64 n, u64 conns) {
    auto ex = co_await asio::this_coro::executor;
    tcp::acceptor acc(ex, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    const tcp::endpoint at = acc.local_endpoint();
    asio::co_spawn(ex, [&acc, conns]() -> awaitable<void> {
        for (u64 i = 0; i < conns; ++i) {
            tcp::socket s = co_await acc.async_accept(use_awaitable);
            s.set_option(tcp::no_delay(true));
            asio::co_spawn(s.get_executor(), echo(std::move(s)), asio::detached);
        }
    }, asio::detached);
    std::vector<std::vector<u64>> per(conns);
    std::atomic<u64> left{conns};
    value_channel done(ex, 1);
    for (u64 c = 0; c < conns; ++c)
        asio::co_spawn(ex, client(at, c, n / conns + (c < n % conns ? 1 : 0)),
                       [&, c](std::exception_ptr e, std::vector<u64> lat) {
                           if (e) std::rethrow_exception(e);
                           per[c] = std::move(lat);
                           // acq_rel: the last arrival publishes every per[] slot to the parent.
                           if (left.fetch_sub(1, std::memory_order_acq_rel) == 1) done.try_send(asio::error_code{}, u64{0});
                       });
    co_await done.async_receive(use_awaitable);
    std::vector<u64> all;
    for (auto& v : per) all.insert(all.end(), v.begin(), v.end());
    co_return all;
}

inline bool is_io_problem(const std::string& p) { return p.rfind("timer_", 0) == 0 || p.rfind("tcp_echo_", 0) == 0; }

// One rep of an I/O shape; throws std::invalid_argument for an unknown name.
inline figures run(asio::io_context& ctx, const std::string& p, u64 n, u64 iters) {
    auto sleep_of = [&]() -> std::chrono::nanoseconds {
        if (p == "timer_sleep_100us") return std::chrono::microseconds(100);
        if (p == "timer_sleep_1ms") return std::chrono::milliseconds(1);
        if (p == "timer_sleep_10ms") return std::chrono::milliseconds(10);
        return std::chrono::nanoseconds(0);
    };
    if (auto d = sleep_of(); d.count() > 0)
        return make_figures(n, asio::co_spawn(ctx, sleeps(d, n), asio::use_future).get(), 0);
    if (p == "timer_spread_10k") {
        auto fired = asio::co_spawn(ctx, spread(n), asio::use_future).get();
        const auto [lo, hi] = std::minmax_element(fired.begin(), fired.end());
        std::vector<u64> over;
        for (u64 f : fired) over.push_back(f > 1'000'000 ? f - 1'000'000 : 0);
        return make_figures(n, std::move(over), fired.empty() ? 0 : *hi - *lo);
    }
    if (p == "tcp_echo_pingpong" || p == "tcp_echo_throughput") {
        auto lat = asio::co_spawn(ctx, tcp_echo(n, iters), asio::use_future).get();
        const u64 count = lat.size();
        return make_figures(count, std::move(lat), 0);
    }
    throw std::invalid_argument(p);
}

}  // namespace io_shapes
