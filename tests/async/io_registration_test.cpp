// crew::detail::io_registration over a socketpair: readiness wakes a reader, clear_ready + EAGAIN
// loops, cancellation while waiting, hang-up counts as ready, a pool destroyed with a registered
// fd and a waiting task, and an idle pool with idle registered fds at ~0 CPU. Pools 1, 2, 4, 8.
#include <crew/async/detail/io_registration.hpp>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <system_error>
#include <thread>

#include "async/primitives_common.hpp"

namespace {

using namespace std::chrono_literals;
using crew::detail::io_interest;
using crew::detail::io_registration;
using prim_test::wait_until;

struct socket_pair {
    int fd[2] = {-1, -1};
    socket_pair() {
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fd) != 0)
            throw std::system_error(errno, std::generic_category(), "socketpair");
    }
    ~socket_pair() {
        for (int f : fd)
            if (f >= 0) ::close(f);
    }
};

// The contract's read loop.
crew::task<long> read_some(io_registration& reg, char* p, std::size_t len, std::atomic<bool>* waiting = nullptr) {
    for (;;) {
        if (waiting != nullptr) waiting->store(true);
        auto tok = co_await reg.ready(io_interest::read);
        const ssize_t n = ::recv(reg.fd(), p, len, 0);
        if (n >= 0) co_return n;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            reg.clear_ready(io_interest::read, tok);
            continue;
        }
        if (errno == EINTR) continue;
        throw std::system_error(errno, std::generic_category(), "recv");
    }
}

crew::task<long> read_with_registration(int fd, std::atomic<bool>* waiting) {
    io_registration reg(fd);
    char buf[64];
    long total = 0;
    for (;;) {
        const long n = co_await read_some(reg, buf, sizeof buf, waiting);
        if (n == 0) co_return total;
        total += n;
    }
}

class io_suite : public crew_test::pool_test {};

TEST_P(io_suite, readiness_wakes_the_reader_until_hang_up) {
    crew_test::watchdog dog(60s);
    socket_pair sp;
    std::atomic<bool> waiting{false};
    auto h = pool().spawn(read_with_registration(sp.fd[0], &waiting));
    long sent = 0;
    for (int i = 0; i < 200; ++i) {
        ASSERT_TRUE(wait_until([&] { return waiting.load(); }));
        if (i % 10 == 0) std::this_thread::sleep_for(100us);
        ASSERT_EQ(::send(sp.fd[1], "hello", 5, 0), 5);
        sent += 5;
    }
    ::shutdown(sp.fd[1], SHUT_WR);  // hang-up: the read reports 0
    EXPECT_EQ(h.get(), sent);
}

TEST_P(io_suite, cancel_while_waiting_for_readiness) {
    crew_test::watchdog dog(60s);
    socket_pair sp;
    std::atomic<bool> waiting{false};
    auto h = pool().spawn(read_with_registration(sp.fd[0], &waiting));
    ASSERT_TRUE(wait_until([&] { return waiting.load(); }));
    std::this_thread::sleep_for(1ms);
    h.cancel();
    EXPECT_THROW(h.get(), crew::cancelled_error);
}

crew::task<long> register_bad_fd() {
    io_registration reg(-1);
    co_return 0;
}

TEST_P(io_suite, registering_a_bad_fd_throws_system_error) {
    crew_test::watchdog dog(60s);
    EXPECT_THROW(pool().block_on(register_bad_fd()), std::system_error);
}

TEST_P(io_suite, pool_destroyed_with_a_waiting_reader) {
    crew_test::watchdog dog(60s);
    socket_pair sp;
    std::atomic<bool> waiting{false};
    auto p = std::make_unique<crew::pool>(workers());
    auto h = p->spawn(read_with_registration(sp.fd[0], &waiting));
    ASSERT_TRUE(wait_until([&] { return waiting.load(); }));
    p.reset();
    EXPECT_THROW(h.get(), crew::cancelled_error);
}

double process_cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

TEST_P(io_suite, idle_pool_with_idle_registered_fds_uses_almost_no_cpu) {
    crew_test::watchdog dog(60s);
    socket_pair a, b;
    std::atomic<bool> wa{false}, wb{false};
    auto ha = pool().spawn(read_with_registration(a.fd[0], &wa));
    auto hb = pool().spawn(read_with_registration(b.fd[0], &wb));
    ASSERT_TRUE(wait_until([&] { return wa.load() && wb.load(); }));
    std::this_thread::sleep_for(100ms);
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(200ms);
    EXPECT_LT(process_cpu_seconds() - before, 0.02);
    ::shutdown(a.fd[1], SHUT_WR);
    ::shutdown(b.fd[1], SHUT_WR);
    EXPECT_EQ(ha.get(), 0);
    EXPECT_EQ(hb.get(), 0);
}

CREW_ALL_POOL_SIZES(io_suite);

}  // namespace
