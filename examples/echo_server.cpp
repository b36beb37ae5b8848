// A TCP echo server on crew's workers: one coroutine task per connection, no thread per
// connection, no second event loop (docs/ASYNC.md, "Networking").
//
//   echo_server [port] [max_connections] [max_seconds]
//
// port 0 (the default) picks a free port; the server prints "listening on 127.0.0.1:<port>" and
// serves loopback only. It stops after max_connections connections were served (0: no limit),
// after max_seconds (0: no limit), or on SIGINT / SIGTERM; then it cancels the connections still
// open and exits. It keeps serving when accept fails for lack of descriptors (EMFILE): it backs
// off (yields) and accepts again.
#include <crew/crew.hpp>
#include <crew/net.hpp>

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace {

using crew::net::tcp_listener;
using crew::net::tcp_stream;

crew::task<void> serve(tcp_stream s, std::atomic<long>& bytes) {
    std::vector<std::byte> buf(16 * 1024);
    try {
        for (;;) {
            const std::size_t n = co_await s.read_some(buf);
            if (n == 0) break;  // the client shut down its side
            co_await s.write_all(std::span(buf).first(n));
            bytes.fetch_add(static_cast<long>(n), std::memory_order_relaxed);
        }
    } catch (const std::system_error& e) {  // a reset peer ends this connection only
        std::fprintf(stderr, "echo_server: connection: %s\n", e.what());
    }
}

// Accept until `max_connections` (0: forever) or `stop`; then wait for the connections still open
// (or, when stopped, cancel them).
crew::task<long> accept_loop(tcp_listener& l, long max_connections, const std::atomic<bool>& stop,
                             std::atomic<long>& bytes) {
    std::vector<crew::join_handle<void>> conns;
    long served = 0;
    while (max_connections == 0 || served < max_connections) {
        bool back_off = false;
        try {
            tcp_stream s = co_await l.accept();
            if (stop.load()) break;  // the stopper's wake-up connection
            conns.push_back(crew::spawn(serve(std::move(s), bytes)));
            ++served;
        } catch (const std::system_error& e) {
            if (e.code().value() != EMFILE && e.code().value() != ENFILE) throw;
            back_off = true;  // out of descriptors: the other connections go on
        }
        if (back_off) co_await crew::yield_now();  // then accept again (the connection is still queued)
    }
    // Drain: wait for the open connections; a stop (signal, time limit) cancels them.
    for (auto& h : conns) {
        while (!h.done() && !stop.load()) co_await crew::sleep_for(std::chrono::milliseconds(20));
        if (stop.load()) h.cancel();
        try {
            co_await h;
        } catch (const crew::cancelled_error&) {
        }
    }
    co_return served;
}

long arg(int argc, char** argv, int i, long fallback) {
    if (argc <= i) return fallback;
    char* end = nullptr;
    const long v = std::strtol(argv[i], &end, 10);
    if (*end != '\0' || v < 0) {
        std::fprintf(stderr, "usage: echo_server [port] [max_connections] [max_seconds]\n");
        std::exit(2);
    }
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    const long port = arg(argc, argv, 1, 0), max_connections = arg(argc, argv, 2, 0), max_seconds = arg(argc, argv, 3, 0);
    if (port > 65535) {
        std::fprintf(stderr, "echo_server: port %ld out of range\n", port);
        return 2;
    }
    // Block SIGINT/SIGTERM in every thread (the workers inherit the mask); one thread waits for them.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    crew::pool pool;
    tcp_listener l;
    try {
        l = tcp_listener::bind(crew::net::endpoint::loopback(static_cast<std::uint16_t>(port)));
    } catch (const std::system_error& e) {
        std::fprintf(stderr, "echo_server: %s\n", e.what());
        return 1;
    }
    std::printf("listening on %s\n", l.local_endpoint().to_string().c_str());
    std::fflush(stdout);

    std::atomic<long> bytes{0};
    std::atomic<bool> stop{false}, done{false};
    auto server = pool.spawn(accept_loop(l, max_connections, stop, bytes));
    std::thread stopper([&, at = l.local_endpoint()] {
        // Wake every 100 ms to notice the end of the loop or the time limit.
        const auto start = std::chrono::steady_clock::now();
        const timespec tick{0, 100'000'000};
        while (!done.load()) {
            if (sigtimedwait(&stop_signals, nullptr, &tick) > 0 ||
                (max_seconds > 0 && std::chrono::steady_clock::now() - start >= std::chrono::seconds(max_seconds))) {
                stop.store(true);
                // Wake the accept loop with one connection of our own (blocking; we are not a worker).
                try {
                    (void)pool.block_on(crew::net::tcp_stream::connect(at));
                } catch (const std::exception&) {
                }
                return;
            }
        }
    });
    long served = 0;
    try {
        served = server.get();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "echo_server: %s\n", e.what());
    }
    done.store(true);
    stopper.join();
    std::printf("served %ld connections, %ld bytes\n", served, bytes.load());
    return 0;
}
