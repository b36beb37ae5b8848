// tests/net/tcp_test.cpp -- crew::net TCP: bind / accept / connect / echo, end of stream,
// endpoints, closed streams, many connections without a descriptor leak. Pools of 1, 2, 4, 8.
#include "net/net_common.hpp"

using namespace net_test;

class tcp_suite : public crew_test::pool_test {};
CREW_ALL_POOL_SIZES(tcp_suite);

TEST_P(tcp_suite, echo_round_trip_with_endpoints) {
    crew_test::watchdog wd(60s);
    auto l = bind_loopback();
    const endpoint at = l.local_endpoint();
    ASSERT_NE(at.port(), 0);
    EXPECT_EQ(at, endpoint::loopback(at.port()));
    auto server = pool().spawn(echo_server(l, 1));
    auto client = [&]() -> crew::task<std::string> {
        tcp_stream s = co_await tcp_stream::connect(at);
        EXPECT_TRUE(s.is_open());
        EXPECT_TRUE(s.nodelay());
        EXPECT_EQ(s.peer_endpoint(), at);
        EXPECT_EQ(s.local_endpoint().to_string().rfind("127.0.0.1:", 0), 0u);
        co_await s.write_all(bytes("hello, crew"));
        std::string got = co_await read_exactly(s, 11);
        co_await s.write_all(bytes("!"));
        got += co_await read_exactly(s, 1);
        s.shutdown();
        std::vector<std::byte> buf(16);
        EXPECT_EQ(co_await s.read_some(buf), 0u);  // the server closed after our end of stream
        EXPECT_EQ(co_await s.read_some(buf), 0u);  // and stays at end of stream
        co_return got;
    };
    EXPECT_EQ(pool().block_on(client()), "hello, crew!");
    EXPECT_EQ(server.get(), 12u);
}

TEST_P(tcp_suite, many_clients_many_round_trips_large_messages) {
    crew_test::watchdog wd(120s);
    auto l = bind_loopback();
    const endpoint at = l.local_endpoint();
    const std::size_t clients = 16, rounds = static_cast<std::size_t>(crew_test::scaled(50));
    auto server = pool().spawn(echo_server(l, clients));
    auto one = [](endpoint at, std::size_t id, std::size_t rounds) -> crew::task<std::size_t> {
        tcp_stream s = co_await tcp_stream::connect(at);
        std::size_t sent = 0;
        for (std::size_t r = 0; r < rounds; ++r) {
            // Every 10th message is 256 KiB: larger than the socket buffers, so write_all and
            // read_some both wait for readiness in the middle of a message.
            const std::size_t len = r % 10 == 3 ? 256 * 1024 : 1 + (id * 7 + r) % 300;
            std::string msg(len, static_cast<char>('a' + (id + r) % 26));
            msg[0] = static_cast<char>('0' + r % 10);
            auto w = crew::spawn(s.write_all(bytes(msg)));  // write and read at once (no deadlock)
            const std::string back = co_await read_exactly(s, len);
            co_await w;
            EXPECT_EQ(back, msg);
            sent += len;
        }
        s.close();
        co_return sent;
    };
    std::vector<crew::task<std::size_t>> ts;
    for (std::size_t i = 0; i < clients; ++i) ts.push_back(one(at, i, rounds));
    const auto sizes = pool().block_on(crew::when_all(std::move(ts)));
    std::size_t total = 0;
    for (auto n : sizes) total += n;
    EXPECT_EQ(server.get(), total);
}

TEST_P(tcp_suite, ipv6_loopback_round_trip) {
    crew_test::watchdog wd(60s);
    tcp_listener l;
    try {
        l = tcp_listener::bind(endpoint::parse("[::1]:0"));
    } catch (const std::system_error& e) {
        if (e.code().value() == EADDRNOTAVAIL || e.code().value() == EAFNOSUPPORT)
            GTEST_SKIP() << "no IPv6 loopback on this machine: " << e.what();
        throw;
    }
    const endpoint at = l.local_endpoint();
    EXPECT_TRUE(at.is_v6());
    auto server = pool().spawn(echo_server(l, 1));
    auto client = [](endpoint at) -> crew::task<std::string> {
        tcp_stream s = co_await tcp_stream::connect(at);
        EXPECT_TRUE(s.local_endpoint().is_v6());
        co_await s.write_all(bytes("six"));
        s.shutdown();
        co_return co_await read_exactly(s, 100);  // everything up to end of stream
    };
    EXPECT_EQ(pool().block_on(client(at)), "six");
    EXPECT_EQ(server.get(), 3u);
}

TEST_P(tcp_suite, end_of_stream_after_buffered_data) {
    crew_test::watchdog wd(60s);
    auto l = bind_loopback();
    const endpoint at = l.local_endpoint();
    auto sender = pool().spawn([](tcp_listener& l) -> crew::task<void> {
        tcp_stream s = co_await l.accept();
        co_await s.write_all(bytes("last words"));
        s.shutdown();
        std::vector<std::byte> buf(8);
        EXPECT_EQ(co_await s.read_some(buf), 0u);  // the client closed
    }(l));
    auto reader = [](endpoint at) -> crew::task<std::string> {
        tcp_stream s = co_await tcp_stream::connect(at);
        std::string got = co_await read_exactly(s, 1000);
        std::vector<std::byte> buf(8);
        EXPECT_EQ(co_await s.read_some(buf), 0u);
        EXPECT_EQ(co_await s.read_some(std::span<std::byte>{}), 0u);  // empty buffer: 0 at once
        co_return got;
    };
    EXPECT_EQ(pool().block_on(reader(at)), "last words");
    sender.get();
}

// A read shorter than its buffer forgets the read readiness (no recv that would only say EAGAIN),
// but that read may also have taken the peer's FIN, whose edge the driver reported before it: the
// next read must still see the end of stream (io_registration.hpp, io_closed_bit), not wait for
// an edge that never comes. The reader starts only after the data and the FIN are queued and the
// driver has reported them (the pool idles in the driver through the sleep).
TEST_P(tcp_suite, end_of_stream_reported_before_a_short_read) {
    crew_test::watchdog wd(60s);
    auto l = bind_loopback();
    const endpoint at = l.local_endpoint();
    std::atomic<bool> sent{false};
    auto sender = pool().spawn([](tcp_listener& l, std::atomic<bool>& sent) -> crew::task<void> {
        tcp_stream s = co_await l.accept();
        co_await s.write_all(bytes("last words"));
        s.shutdown();
        sent.store(true);
        std::vector<std::byte> buf(8);
        EXPECT_EQ(co_await s.read_some(buf), 0u);  // the client closed
    }(l, sent));
    auto reader = [](endpoint at, std::atomic<bool>& sent) -> crew::task<std::size_t> {
        tcp_stream s = co_await tcp_stream::connect(at);
        while (!sent.load()) co_await crew::sleep_for(1ms);
        co_await crew::sleep_for(20ms);
        std::vector<std::byte> buf(1000);
        const std::size_t n = co_await s.read_some(buf);  // short: the data (and the FIN)
        EXPECT_EQ(co_await s.read_some(buf), 0u);          // end of stream, not a hang
        EXPECT_EQ(co_await s.read_some(buf), 0u);
        s.close();
        co_return n;
    };
    EXPECT_EQ(pool().block_on(reader(at, sent)), 10u);
    sender.get();
}

TEST_P(tcp_suite, operations_on_a_closed_stream_throw_ebadf) {
    crew_test::watchdog wd(60s);
    auto l = bind_loopback();
    const endpoint at = l.local_endpoint();
    auto acceptor = pool().spawn(l.accept());
    auto body = [](endpoint at) -> crew::task<void> {
        tcp_stream s = co_await tcp_stream::connect(at);
        s.close();
        s.close();  // idempotent
        EXPECT_FALSE(s.is_open());
        EXPECT_EQ(s.native_handle(), -1);
        std::vector<std::byte> buf(8);
        int err = 0;
        try { (void)co_await s.read_some(buf); } catch (const std::system_error& e) { err = e.code().value(); }
        EXPECT_EQ(err, EBADF);
        err = 0;
        try { co_await s.write_all(bytes("x")); } catch (const std::system_error& e) { err = e.code().value(); }
        EXPECT_EQ(err, EBADF);
        tcp_stream moved_to = std::move(s);  // a moved-from and a default stream are closed too
        tcp_stream none;
        err = 0;
        try { (void)co_await none.read_some(buf); } catch (const std::system_error& e) { err = e.code().value(); }
        EXPECT_EQ(err, EBADF);
        EXPECT_EQ(error_of([&] { s.shutdown(); }), EBADF);
        EXPECT_EQ(error_of([&] { (void)s.local_endpoint(); }), EBADF);
        EXPECT_EQ(error_of([&] { (void)none.peer_endpoint(); }), EBADF);
        EXPECT_EQ(error_of([&] { none.set_nodelay(false); }), EBADF);
    };
    pool().block_on(body(at));
    (void)acceptor.get();
    l.close();
    int err = 0;
    try { (void)pool().block_on(l.accept()); } catch (const std::system_error& e) { err = e.code().value(); }
    EXPECT_EQ(err, EBADF);
    EXPECT_EQ(error_of([&] { (void)l.local_endpoint(); }), EBADF);
}

TEST_P(tcp_suite, set_nodelay_toggles) {
    auto l = bind_loopback();
    auto acceptor = pool().spawn(l.accept());
    auto body = [](endpoint at) -> crew::task<void> {
        tcp_stream s = co_await tcp_stream::connect(at);
        EXPECT_TRUE(s.nodelay());
        s.set_nodelay(false);
        EXPECT_FALSE(s.nodelay());
        s.set_nodelay(true);
        EXPECT_TRUE(s.nodelay());
    };
    pool().block_on(body(l.local_endpoint()));
    tcp_stream accepted = acceptor.get();
    EXPECT_TRUE(accepted.nodelay());
}

TEST_P(tcp_suite, second_read_in_flight_is_a_usage_error) {
    crew_test::watchdog wd(60s);
    auto l = bind_loopback();
    auto acceptor = pool().spawn(l.accept());
    tcp_stream s = pool().block_on(tcp_stream::connect(l.local_endpoint()));
    tcp_stream peer = acceptor.get();
    std::vector<std::byte> a(8), b(8);
    auto first = pool().spawn(s.read_some(a));
    // Whichever of two reads starts second gets usage_error; the other stays in flight. Retry
    // while neither has started yet (a loaded machine).
    bool saw_usage_error = false;
    for (int i = 0; i < 5000 && !saw_usage_error; ++i) {
        auto second = pool().spawn(s.read_some(b));
        std::this_thread::sleep_for(1ms);
        if (second.done()) {
            EXPECT_THROW((void)second.get(), crew::usage_error);
            saw_usage_error = true;
        } else if (first.done()) {
            EXPECT_THROW((void)first.get(), crew::usage_error);
            saw_usage_error = true;
            first = std::move(second);  // the one in flight
        } else {
            second.cancel();  // neither has started yet: try again
            try {
                (void)second.get();
            } catch (const crew::cancelled_error&) {
            } catch (const crew::usage_error&) {
                saw_usage_error = true;
            }
        }
    }
    EXPECT_THROW(s.close(), crew::usage_error);  // a read is in flight
    EXPECT_TRUE(saw_usage_error);
    pool().block_on(peer.write_all(bytes("go")));
    EXPECT_GE(first.get(), 1u);
    s.close();
}

TEST_P(tcp_suite, ten_thousand_connections_no_descriptor_leak) {
    crew_test::watchdog wd(120s);
    (void)pool();
    const std::size_t before = count_fds();
    {
        auto l = bind_loopback();
        const endpoint at = l.local_endpoint();
        const std::size_t total = static_cast<std::size_t>(crew_test::scaled(10000)), par = 16;
        auto server = pool().spawn(echo_server(l, total));
        auto client = [](endpoint at, std::size_t n) -> crew::task<std::size_t> {
            std::size_t ok = 0;
            for (std::size_t i = 0; i < n; ++i) {
                tcp_stream s = co_await tcp_stream::connect(at);
                co_await s.write_all(bytes("x"));
                ok += (co_await read_exactly(s, 1)) == "x";
            }  // closed here, before the server reads end of stream
            co_return ok;
        };
        std::vector<crew::task<std::size_t>> ts;
        for (std::size_t i = 0; i < par; ++i) ts.push_back(client(at, total / par + (i < total % par)));
        std::size_t ok = 0;
        for (auto n : pool().block_on(crew::when_all(std::move(ts)))) ok += n;
        EXPECT_EQ(ok, total);
        EXPECT_EQ(server.get(), total);
    }
    EXPECT_EQ(count_fds(), before);
}

// docs/API.md, "Networking": the example as written there.
TEST(tcp_docs, api_md_example) {
    crew_test::watchdog wd(60s);
    crew::pool pool(2);
    auto l = crew::net::tcp_listener::bind(crew::net::endpoint::parse("127.0.0.1:0"));
    auto server = pool.spawn([](crew::net::tcp_listener& l) -> crew::task<void> {
        crew::net::tcp_stream s = co_await l.accept();
        std::byte buf[64];
        while (std::size_t n = co_await s.read_some(buf)) co_await s.write_all(std::span(buf, n));
    }(l));
    auto got = pool.block_on([](crew::net::endpoint at) -> crew::task<std::size_t> {
        auto s = co_await crew::net::tcp_stream::connect(at);
        co_await s.write_all(std::as_bytes(std::span("ping", 4)));
        s.shutdown();
        std::byte buf[64];
        co_return co_await s.read_some(buf);  // 4
    }(l.local_endpoint()));
    server.get();
    EXPECT_EQ(got, 4u);
}
