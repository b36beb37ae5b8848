// tests/net/net_common.hpp -- shared helpers of the crew::net tests.
#pragma once

#include <crew/crew.hpp>
#include <crew/net.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace net_test {

using namespace std::chrono_literals;
using crew::net::endpoint;
using crew::net::tcp_listener;
using crew::net::tcp_stream;

// Open descriptors of this process (the directory iterator's own descriptor is not counted twice:
// it is open during every count).
inline std::size_t count_fds() {
    std::size_t n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/self/fd"); it != std::filesystem::directory_iterator(); ++it) ++n;
    return n;
}

inline std::span<const std::byte> bytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

inline std::string text(std::span<const std::byte> b) {
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// Read exactly n bytes (fewer only at end of stream).
inline crew::task<std::string> read_exactly(tcp_stream& s, std::size_t n) {
    std::string out;
    std::vector<std::byte> buf(n == 0 ? 1 : n);
    while (out.size() < n) {
        const std::size_t got = co_await s.read_some(std::span(buf).first(n - out.size()));
        if (got == 0) break;
        out += text(std::span(buf).first(got));
    }
    co_return out;
}

// Echo until end of stream, then close. Returns the bytes echoed.
inline crew::task<std::size_t> echo(tcp_stream s) {
    std::vector<std::byte> buf(4096);
    std::size_t total = 0;
    for (;;) {
        const std::size_t n = co_await s.read_some(buf);
        if (n == 0) break;
        co_await s.write_all(std::span(buf).first(n));
        total += n;
    }
    s.close();
    co_return total;
}

// Accept `count` connections and echo each in its own task; returns after all of them ended.
inline crew::task<std::size_t> echo_server(tcp_listener& l, std::size_t count) {
    std::vector<crew::join_handle<std::size_t>> conns;
    for (std::size_t i = 0; i < count; ++i) conns.push_back(crew::spawn(echo(co_await l.accept())));
    std::size_t total = 0;
    for (auto& h : conns) total += co_await h;
    co_return total;
}

template <class F>
int error_of(F&& f) {
    try {
        f();
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code().category(), std::generic_category());
        return e.code().value();
    }
    return 0;
}

inline tcp_listener bind_loopback() { return tcp_listener::bind(endpoint::parse("127.0.0.1:0")); }

}  // namespace net_test
