// src/net/tcp.cpp -- crew::net::tcp_stream and tcp_listener over the worker's I/O driver.
//
// Every waiting operation follows the readiness pattern of crew/async/detail/io_registration.hpp:
// await readiness, try the syscall, and on EAGAIN forget the readiness observed at that token
// (the driver keeps a newer one), then wait again.
#include "crew/net/tcp.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

#include "crew/net/detail/socket.hpp"

namespace crew::net {

using crew::detail::io_interest;
using detail::socket_state;
using detail::throw_errno;

namespace {

bool would_block(int err) noexcept { return err == EAGAIN || err == EWOULDBLOCK; }

void set_nodelay_fd(int fd, bool on) {
    const int v = on ? 1 : 0;
    if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v) != 0) throw_errno(errno, "crew::net: TCP_NODELAY");
}

endpoint sock_name(int fd, bool peer, const char* what) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    auto* sa = reinterpret_cast<sockaddr*>(&ss);
    const int rc = peer ? ::getpeername(fd, sa, &len) : ::getsockname(fd, sa, &len);
    if (rc != 0) throw_errno(errno, what);
    return endpoint::from_sockaddr(sa, len);
}

// True once a connect in progress has finished; throws its error. False: still connecting.
bool connect_finished(int fd) {
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) throw_errno(errno, "crew::net::tcp_stream::connect");
    if (err != 0) throw_errno(err, "crew::net::tcp_stream::connect");
    sockaddr_storage ss{};
    socklen_t sl = sizeof ss;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &sl) == 0) return true;
    if (errno == ENOTCONN) return false;  // a readiness report that came before the handshake ended
    throw_errno(errno, "crew::net::tcp_stream::connect");
}

}  // namespace

// ---- tcp_stream -------------------------------------------------------------------------------

tcp_stream::tcp_stream() noexcept = default;
tcp_stream::tcp_stream(int fd) : s_(std::make_unique<socket_state>(fd)) {}
tcp_stream::tcp_stream(tcp_stream&&) noexcept = default;
tcp_stream& tcp_stream::operator=(tcp_stream&&) noexcept = default;
tcp_stream::~tcp_stream() = default;

socket_state& tcp_stream::checked(const char* what) const {
    if (!s_ || s_->fd() < 0) detail::throw_closed(what);
    return *s_;
}

bool tcp_stream::is_open() const noexcept { return s_ && s_->fd() >= 0; }
int tcp_stream::native_handle() const noexcept { return s_ ? s_->fd() : -1; }

task<tcp_stream> tcp_stream::connect(endpoint peer) {
    tcp_stream s(detail::open_socket(peer.family()));
    const int fd = s.s_->fd();
    set_nodelay_fd(fd, true);
    int rc;
    do {
        rc = ::connect(fd, peer.data(), peer.size());
    } while (rc != 0 && errno == EINTR);
    if (rc == 0) co_return s;
    if (errno != EINPROGRESS) throw_errno(errno, "crew::net::tcp_stream::connect");
    auto& reg = s.s_->registration();
    socket_state::op_guard guard(*s.s_, io_interest::write);
    for (;;) {
        auto tok = co_await reg.ready(io_interest::write);
        if (connect_finished(fd)) break;
        reg.clear_ready(io_interest::write, tok);
    }
    co_return s;
}

task<std::size_t> tcp_stream::read_some(std::span<std::byte> buf) {
    socket_state& s = checked("crew::net::tcp_stream::read_some");
    if (buf.empty()) co_return 0;
    auto& reg = s.registration();
    socket_state::op_guard guard(s, io_interest::read);
    for (;;) {
        auto tok = co_await reg.ready(io_interest::read);
        const ssize_t n = ::recv(s.fd(), buf.data(), buf.size(), 0);
        if (n >= 0) {
            // A short read emptied the receive queue: the next read_some waits for a new edge
            // instead of a recv that would return EAGAIN (io_registration.hpp, clear_drained).
            if (n > 0 && static_cast<std::size_t>(n) < buf.size()) reg.clear_drained(tok);
            co_return static_cast<std::size_t>(n);
        }
        if (would_block(errno)) {
            reg.clear_ready(io_interest::read, tok);
        } else if (errno != EINTR) {
            throw_errno(errno, "crew::net::tcp_stream::read_some");
        }
    }
}

task<void> tcp_stream::write_all(std::span<const std::byte> data) {
    socket_state& s = checked("crew::net::tcp_stream::write_all");
    if (data.empty()) co_return;
    auto& reg = s.registration();
    socket_state::op_guard guard(s, io_interest::write);
    while (!data.empty()) {
        auto tok = co_await reg.ready(io_interest::write);
        const ssize_t n = ::send(s.fd(), data.data(), data.size(), MSG_NOSIGNAL);
        if (n >= 0) {
            data = data.subspan(static_cast<std::size_t>(n));
        } else if (would_block(errno)) {
            reg.clear_ready(io_interest::write, tok);
        } else if (errno != EINTR) {
            throw_errno(errno, "crew::net::tcp_stream::write_all");
        }
    }
}

void tcp_stream::shutdown() {
    if (::shutdown(checked("crew::net::tcp_stream::shutdown").fd(), SHUT_WR) != 0)
        throw_errno(errno, "crew::net::tcp_stream::shutdown");
}

void tcp_stream::close() {
    if (s_) {
        s_->close();
        s_.reset();
    }
}

endpoint tcp_stream::local_endpoint() const {
    return sock_name(checked("crew::net::tcp_stream::local_endpoint").fd(), false, "crew::net::tcp_stream::local_endpoint");
}

endpoint tcp_stream::peer_endpoint() const {
    return sock_name(checked("crew::net::tcp_stream::peer_endpoint").fd(), true, "crew::net::tcp_stream::peer_endpoint");
}

void tcp_stream::set_nodelay(bool on) { set_nodelay_fd(checked("crew::net::tcp_stream::set_nodelay").fd(), on); }

bool tcp_stream::nodelay() const {
    int v = 0;
    socklen_t len = sizeof v;
    if (::getsockopt(checked("crew::net::tcp_stream::nodelay").fd(), IPPROTO_TCP, TCP_NODELAY, &v, &len) != 0)
        throw_errno(errno, "crew::net::tcp_stream::nodelay");
    return v != 0;
}

// ---- tcp_listener -----------------------------------------------------------------------------

tcp_listener::tcp_listener() noexcept = default;
tcp_listener::tcp_listener(tcp_listener&&) noexcept = default;
tcp_listener& tcp_listener::operator=(tcp_listener&&) noexcept = default;
tcp_listener::~tcp_listener() = default;

socket_state& tcp_listener::checked(const char* what) const {
    if (!s_ || s_->fd() < 0) detail::throw_closed(what);
    return *s_;
}

bool tcp_listener::is_open() const noexcept { return s_ && s_->fd() >= 0; }
int tcp_listener::native_handle() const noexcept { return s_ ? s_->fd() : -1; }

tcp_listener tcp_listener::bind(const endpoint& local, int backlog) {
    if (backlog < 0) throw std::invalid_argument("crew::net::tcp_listener::bind: backlog < 0");
    tcp_listener l;
    l.s_ = std::make_unique<socket_state>(detail::open_socket(local.family()));
    const int fd = l.s_->fd();
    const int one = 1;
    if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
        throw_errno(errno, "crew::net::tcp_listener::bind: SO_REUSEADDR");
    if (::bind(fd, local.data(), local.size()) != 0) throw_errno(errno, "crew::net::tcp_listener::bind");
    if (::listen(fd, backlog) != 0) throw_errno(errno, "crew::net::tcp_listener::bind: listen");
    return l;
}

task<tcp_stream> tcp_listener::accept() {
    socket_state& s = checked("crew::net::tcp_listener::accept");
    auto& reg = s.registration();
    socket_state::op_guard guard(s, io_interest::read);
    for (;;) {
        auto tok = co_await reg.ready(io_interest::read);
        const int fd = ::accept4(s.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            tcp_stream conn(fd);
            set_nodelay_fd(fd, true);
            co_return conn;
        }
        // EMFILE and friends: the readiness is kept (the connection is still queued), so the
        // next accept() retries at once.
        if (would_block(errno)) {
            reg.clear_ready(io_interest::read, tok);
        } else if (errno != EINTR && errno != ECONNABORTED && errno != EPROTO) {
            throw_errno(errno, "crew::net::tcp_listener::accept");
        }
    }
}

void tcp_listener::close() {
    if (s_) {
        s_->close();
        s_.reset();
    }
}

endpoint tcp_listener::local_endpoint() const {
    return sock_name(checked("crew::net::tcp_listener::local_endpoint").fd(), false, "crew::net::tcp_listener::local_endpoint");
}

}  // namespace crew::net
