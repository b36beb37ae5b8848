// tests/net/tcp_fault_test.cpp -- crew::net faults: port in use, connection refused, peer reset
// mid-write, cancellation in accept / read_some, the pool destroyed with open sockets, EMFILE,
// fork() with registered sockets. Pools of 1, 2, 4, 8.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <functional>

#include <crew/detail/registry.hpp>

#include "net/net_common.hpp"

using namespace net_test;

class tcp_fault_suite : public crew_test::pool_test {};
CREW_ALL_POOL_SIZES(tcp_fault_suite);

TEST_P(tcp_fault_suite, port_in_use_throws_eaddrinuse) {
    auto l = bind_loopback();
    EXPECT_EQ(error_of([&] { (void)tcp_listener::bind(l.local_endpoint()); }), EADDRINUSE);
    // The first listener is unaffected.
    auto acceptor = pool().spawn(l.accept());
    tcp_stream c = pool().block_on(tcp_stream::connect(l.local_endpoint()));
    EXPECT_EQ(acceptor.get().peer_endpoint(), c.local_endpoint());
    EXPECT_THROW((void)tcp_listener::bind(endpoint::parse("127.0.0.1:0"), -1), std::invalid_argument);
}

TEST_P(tcp_fault_suite, connection_refused_throws_econnrefused) {
    crew_test::watchdog wd(60s);
    endpoint at;
    {
        auto l = bind_loopback();  // a port that was free, then closed: nobody listens there
        at = l.local_endpoint();
    }
    for (int i = 0; i < 4; ++i)
        EXPECT_EQ(error_of([&] { (void)pool().block_on(tcp_stream::connect(at)); }), ECONNREFUSED);
}

TEST_P(tcp_fault_suite, peer_reset_mid_write_throws_econnreset_or_epipe) {
    crew_test::watchdog wd(60s);
    auto l = bind_loopback();
    auto resetter = pool().spawn([](tcp_listener& l) -> crew::task<void> {
        tcp_stream s = co_await l.accept();
        std::vector<std::byte> buf(1000);
        (void)co_await s.read_some(buf);  // the writer has started
        const linger lg{1, 0};            // close with RST
        EXPECT_EQ(::setsockopt(s.native_handle(), SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
        s.close();
    }(l));
    auto writer = [](endpoint at) -> crew::task<int> {
        tcp_stream s = co_await tcp_stream::connect(at);
        const std::vector<std::byte> chunk(1 << 20, std::byte{7});
        try {
            for (int i = 0; i < 10000; ++i) co_await s.write_all(chunk);  // blocks: nobody reads
        } catch (const std::system_error& e) {
            co_return e.code().value();
        }
        co_return 0;
    };
    const int err = pool().block_on(writer(l.local_endpoint()));
    EXPECT_TRUE(err == ECONNRESET || err == EPIPE) << "errno " << err;
    resetter.get();
}

TEST_P(tcp_fault_suite, cancel_while_blocked_in_accept) {
    crew_test::watchdog wd(60s);
    auto l = bind_loopback();
    for (int round = 0; round < 3; ++round) {
        auto h = pool().spawn(l.accept());
        std::this_thread::sleep_for(std::chrono::milliseconds(5 * round));  // 0: maybe not yet suspended
        h.cancel();
        EXPECT_THROW((void)h.get(), crew::cancelled_error);
    }
    // The listener still works after the cancelled accepts...
    auto acceptor = pool().spawn(l.accept());
    tcp_stream c = pool().block_on(tcp_stream::connect(l.local_endpoint()));
    tcp_stream s = acceptor.get();
    EXPECT_EQ(s.peer_endpoint(), c.local_endpoint());
    // ...and closes.
    l.close();
    EXPECT_FALSE(l.is_open());
}

TEST_P(tcp_fault_suite, cancel_while_blocked_in_read_some) {
    crew_test::watchdog wd(60s);
    auto l = bind_loopback();
    auto acceptor = pool().spawn(l.accept());
    tcp_stream c = pool().block_on(tcp_stream::connect(l.local_endpoint()));
    tcp_stream s = acceptor.get();
    std::vector<std::byte> buf(64);
    for (int round = 0; round < 3; ++round) {
        auto h = pool().spawn(s.read_some(buf));
        std::this_thread::sleep_for(std::chrono::milliseconds(5 * round));
        h.cancel();
        EXPECT_THROW((void)h.get(), crew::cancelled_error);
    }
    // No byte was lost to the cancelled reads: the stream reads what comes next.
    pool().block_on(c.write_all(bytes("after")));
    EXPECT_EQ(pool().block_on(read_exactly(s, 5)), "after");
    const int fd = s.native_handle();
    s.close();
    EXPECT_EQ(::fcntl(fd, F_GETFD), -1);  // really closed (nothing else opened it meanwhile)
}

TEST_P(tcp_fault_suite, pool_destroyed_with_open_sockets_closes_them) {
    crew_test::watchdog wd(60s);
    const std::size_t before = count_fds();
    {
        crew::pool p(workers());
        std::atomic<int> suspended{0};
        std::atomic<std::uint16_t> port{0};
        // A server that accepts one connection and reads forever; a client that connects and
        // reads forever; a second acceptor that never gets a connection. All sockets live in
        // the tasks' frames.
        auto server = [](std::atomic<std::uint16_t>& port, std::atomic<int>& suspended) -> crew::task<void> {
            auto l = bind_loopback();
            port.store(l.local_endpoint().port());
            tcp_stream s = co_await l.accept();
            std::vector<std::byte> buf(16);
            suspended.fetch_add(1);
            (void)co_await s.read_some(buf);
            ADD_FAILURE() << "read data that was never sent";
        };
        auto client = [](std::atomic<std::uint16_t>& port, std::atomic<int>& suspended) -> crew::task<void> {
            while (port.load() == 0) co_await crew::yield_now();
            tcp_stream s = co_await tcp_stream::connect(endpoint::loopback(port.load()));
            std::vector<std::byte> buf(16);
            suspended.fetch_add(1);
            (void)co_await s.read_some(buf);
            ADD_FAILURE() << "read data that was never sent";
        };
        auto idle = [](std::atomic<int>& suspended) -> crew::task<void> {
            auto l = bind_loopback();
            suspended.fetch_add(1);
            (void)co_await l.accept();
        };
        p.spawn(server(port, suspended)).detach();
        p.spawn(client(port, suspended)).detach();
        p.spawn(idle(suspended)).detach();
        while (suspended.load() < 3) std::this_thread::sleep_for(1ms);
        std::this_thread::sleep_for(10ms);  // let them reach the driver (not needed for correctness)
    }  // the pool destroys the suspended frames: every socket closes
    EXPECT_EQ(count_fds(), before);
}

// Fill the descriptor table: lower the soft limit to the current count + a margin, then dup until
// EMFILE. Restores everything when destroyed.
class fd_table_filler {
public:
    fd_table_filler() {
        EXPECT_EQ(::getrlimit(RLIMIT_NOFILE, &saved_), 0);
        rlimit low = saved_;
        low.rlim_cur = std::min<rlim_t>(saved_.rlim_cur, count_fds() + 64);
        EXPECT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
        for (;;) {
            const int fd = ::dup(0);
            if (fd < 0) {
                EXPECT_EQ(errno, EMFILE);
                break;
            }
            fillers_.push_back(fd);
        }
    }
    ~fd_table_filler() { release(); }
    void release() {
        for (int fd : fillers_) ::close(fd);
        fillers_.clear();
        ::setrlimit(RLIMIT_NOFILE, &saved_);
    }

private:
    rlimit saved_{};
    std::vector<int> fillers_;
};

// A blocking client socket made outside crew (the test thread is not a worker).
inline int raw_connect(const endpoint& at) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::connect(fd, at.data(), at.size()), 0);
    return fd;
}

inline std::string raw_round_trip(int fd, const std::string& msg) {
    EXPECT_EQ(::send(fd, msg.data(), msg.size(), MSG_NOSIGNAL), static_cast<ssize_t>(msg.size()));
    std::string got(msg.size(), '\0');
    std::size_t have = 0;
    while (have < got.size()) {
        const ssize_t n = ::recv(fd, got.data() + have, got.size() - have, 0);
        if (n <= 0) break;
        have += static_cast<std::size_t>(n);
    }
    got.resize(have);
    return got;
}

TEST_P(tcp_fault_suite, emfile_on_accept_reaches_the_server_which_keeps_serving) {
    crew_test::watchdog wd(60s);
    auto l = bind_loopback();
    const endpoint at = l.local_endpoint();
    std::atomic<bool> resume{false};
    std::atomic<int> emfiles{0};
    // Accept 2 connections; on EMFILE count it, wait for `resume`, and accept again.
    auto server = [](tcp_listener& l, std::atomic<bool>& resume, std::atomic<int>& emfiles) -> crew::task<void> {
        std::vector<crew::join_handle<std::size_t>> conns;
        while (conns.size() < 2) {
            bool failed = false;
            try {
                conns.push_back(crew::spawn(echo(co_await l.accept())));
            } catch (const std::system_error& e) {
                EXPECT_EQ(e.code().value(), EMFILE);
                failed = true;
            }
            if (failed) {
                emfiles.fetch_add(1);
                // Back off until descriptors are free. (Not crew::event: while the table is full,
                // UBSan's first vptr check of a type needs a descriptor and reports a false error.)
                while (!resume.load()) co_await crew::yield_now();
            }
        }
        for (auto& h : conns) (void)co_await h;
    };
    auto sh = pool().spawn(server(l, resume, emfiles));
    const int first = raw_connect(at);
    EXPECT_EQ(raw_round_trip(first, "one"), "one");  // accepted and served
    const int second = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(second, 0);
    {
        fd_table_filler full;
        // The server is in accept(): the connection arrives while the table is full -> EMFILE.
        ASSERT_EQ(::connect(second, at.data(), at.size()), 0);
        while (emfiles.load() == 0) std::this_thread::sleep_for(1ms);
        // The first connection is still served while accept fails.
        EXPECT_EQ(raw_round_trip(first, "still here"), "still here");
    }  // descriptors free again
    resume.store(true);
    EXPECT_EQ(raw_round_trip(second, "two"), "two");  // the queued connection is accepted now
    ::shutdown(first, SHUT_WR);
    ::shutdown(second, SHUT_WR);
    sh.get();
    EXPECT_GE(emfiles.load(), 1);
    ::close(first);
    ::close(second);
}

// ---- fork() ----

namespace {

using crew::detail::under_asan;

// Run `body` in a forked child and return its exit status (-1: killed after 30 s, 99: it threw).
// Under ASan, fork only while every worker of `p` sleeps (tests/edge/process_test.cpp says why).
int fork_and_wait(crew::pool& p, const std::function<int()>& body) {
    if (under_asan)
        while (crew::detail::registry_of(p).lot().sleepers() != p.size()) std::this_thread::yield();
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        int code = 99;
        try {
            code = body();
        } catch (...) {
        }
        ::_exit(code);
    }
    if (pid < 0) return -2;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            return -1;
        }
        std::this_thread::sleep_for(1ms);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -3;
}

crew::task<std::string> round_trip(tcp_stream& s, std::string msg) {
    co_await s.write_all(bytes(msg));
    co_return co_await read_exactly(s, msg.size());
}

}  // namespace

// The parent's driver (epoll set, eventfd) is shared with a forked child: the child must neither
// deregister the parent's fds from it (closing an inherited socket) nor use it. The parent keeps
// serving, the child's inherited sockets close quietly, and the child may use an inherited stream
// through its own pool (a fresh registration).
TEST_P(tcp_fault_suite, a_forked_child_leaves_the_parents_driver_alone) {
    crew_test::watchdog wd(120s);
    auto l = bind_loopback();
    auto server = pool().spawn(echo_server(l, 2));  // in accept() across the fork
    tcp_stream c = pool().block_on(tcp_stream::connect(l.local_endpoint()));
    ASSERT_EQ(pool().block_on(round_trip(c, "ping")), "ping");  // both ends registered
    crew::pool& parent_pool = pool();
    const int code = fork_and_wait(pool(), [&]() -> int {
        crew::detail::io_driver& d = crew::detail::driver_of(crew::detail::registry_of(parent_pool));
        if (!d.forked_away()) return 10;
        crew::detail::io_source src;
        src.fd = c.native_handle();
        try {
            d.register_fd(src);
            return 11;
        } catch (const crew::usage_error&) {
        }
        if (!crew::detail::under_tsan) {  // TSan cannot start the child's pool's threads
            // The inherited stream, through the child's default pool: the parent's server echoes.
            if (crew::default_pool().block_on(round_trip(c, "kid!")) != "kid!") return 12;
        }
        try {
            l.close();  // the parent's accept() in flight does not count here
            c.close();
        } catch (...) {
            return 13;
        }
        return 0;
    });
    EXPECT_EQ(code, 0);
    // The parent's registrations survived: the stream and the pending accept still get readiness.
    // (Had the child deregistered them from the shared epoll set, these would wait for ever.)
    try {
        EXPECT_EQ(pool().block_on(crew::timeout(10s, round_trip(c, "pong"))), "pong");
        tcp_stream c2 = pool().block_on(crew::timeout(10s, tcp_stream::connect(l.local_endpoint())));
        EXPECT_EQ(pool().block_on(crew::timeout(10s, round_trip(c2, "two"))), "two");
        c.shutdown();
        c2.shutdown();
        EXPECT_EQ(server.get(), 4u + 4u + 3u + (crew::detail::under_tsan ? 0u : 4u));  // ping, pong, two, kid!
    } catch (const crew::timeout_error&) {
        ADD_FAILURE() << "the parent lost a registration to the child";
        server.cancel();
        EXPECT_THROW((void)server.get(), crew::cancelled_error);
    }
}
