// A load client for echo_server: N connections, M round trips each, one coroutine task per
// connection on crew's workers. Prints the round-trip latency p50 / p99 and round trips per second.
//
//   echo_client <port | address:port> [connections=10] [round_trips=1000] [message_size=64] [max_seconds=10]
//
// A bare port means loopback (127.0.0.1). Each connection stops early at the time limit; every
// echoed message is checked byte for byte (exit status 1 on a mismatch or an error).
#include <crew/crew.hpp>
#include <crew/net.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using crew::net::endpoint;
using crew::net::tcp_stream;

struct options {
    endpoint server;
    long connections = 10, round_trips = 1000, size = 64, max_seconds = 10;
};

// One connection: M round trips of `size` bytes; returns each round trip's latency in ns.
crew::task<std::vector<long>> run_connection(const options& o, long id, clock_type::time_point deadline,
                                             std::atomic<bool>& failed) {
    std::vector<long> lat;
    lat.reserve(static_cast<std::size_t>(o.round_trips));
    tcp_stream s = co_await tcp_stream::connect(o.server);
    std::vector<std::byte> msg(static_cast<std::size_t>(o.size)), back(msg.size());
    for (long r = 0; r < o.round_trips && clock_type::now() < deadline; ++r) {
        for (std::size_t i = 0; i < msg.size(); ++i) msg[i] = static_cast<std::byte>(id * 31 + r + static_cast<long>(i));
        const auto t0 = clock_type::now();
        co_await s.write_all(msg);
        std::size_t have = 0;
        while (have < back.size()) {
            const std::size_t n = co_await s.read_some(std::span(back).subspan(have));
            if (n == 0) break;
            have += n;
        }
        lat.push_back(static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now() - t0).count()));
        if (have != back.size() || !std::equal(msg.begin(), msg.end(), back.begin())) {
            failed.store(true);
            break;
        }
    }
    s.shutdown();
    co_return lat;
}

long number(const char* text, const char* what) {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (*end != '\0' || v <= 0) {
        std::fprintf(stderr, "echo_client: %s must be a positive number, got \"%s\"\n", what, text);
        std::exit(2);
    }
    return v;
}

options parse(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: echo_client <port | address:port> [connections] [round_trips] [message_size] [max_seconds]\n");
        std::exit(2);
    }
    options o;
    const std::string where = argv[1];
    try {
        o.server = where.find(':') == std::string::npos
                       ? endpoint::loopback(static_cast<std::uint16_t>(std::min(number(argv[1], "port"), 65535L)))
                       : endpoint::parse(where);
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "echo_client: %s\n", e.what());
        std::exit(2);
    }
    if (argc > 2) o.connections = std::min(number(argv[2], "connections"), 10000L);
    if (argc > 3) o.round_trips = number(argv[3], "round_trips");
    if (argc > 4) o.size = std::min(number(argv[4], "message_size"), 1L << 24);
    if (argc > 5) o.max_seconds = number(argv[5], "max_seconds");
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    crew::pool pool;
    std::atomic<bool> failed{false};
    const auto start = clock_type::now();
    const auto deadline = start + std::chrono::seconds(o.max_seconds);
    std::vector<crew::task<std::vector<long>>> conns;
    for (long i = 0; i < o.connections; ++i) conns.push_back(run_connection(o, i, deadline, failed));
    std::vector<long> all;
    try {
        for (auto& v : pool.block_on(crew::when_all(std::move(conns)))) all.insert(all.end(), v.begin(), v.end());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "echo_client: %s\n", e.what());
        return 1;
    }
    const double secs = std::chrono::duration<double>(clock_type::now() - start).count();
    if (all.empty()) {
        std::fprintf(stderr, "echo_client: no round trip completed\n");
        return 1;
    }
    std::sort(all.begin(), all.end());
    const auto pct = [&](double p) { return static_cast<double>(all[static_cast<std::size_t>(p * static_cast<double>(all.size() - 1))]) / 1000.0; };
    std::printf("%zu round trips over %ld connections of %ld bytes in %.3f s: %.0f round trips/s, "
                "latency p50 %.1f us, p99 %.1f us\n",
                all.size(), o.connections, o.size, secs, static_cast<double>(all.size()) / secs, pct(0.50), pct(0.99));
    if (failed.load()) {
        std::fprintf(stderr, "echo_client: an echo did not match what was sent\n");
        return 1;
    }
    return 0;
}
