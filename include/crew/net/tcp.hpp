// crew/net/tcp.hpp -- TCP sockets for crew coroutine tasks (docs/ASYNC.md, "Networking").
//
//   auto l = crew::net::tcp_listener::bind(crew::net::endpoint::parse("127.0.0.1:0"));
//   crew::net::tcp_stream s = co_await l.accept();
//   std::size_t n = co_await s.read_some(buf);      // 0: the peer shut down its write side
//   co_await s.write_all(std::span(buf).first(n));
//
// Sockets are non-blocking and registered with the I/O driver of the pool whose worker runs their
// first operation; a waiting operation suspends the task, never the worker. Errors are
// std::system_error (std::generic_category, the errno value), thrown at the awaiting task only.
// An operation on a closed or moved-from socket throws std::system_error(EBADF). A task cancelled
// while it waits throws crew::cancelled_error; the socket stays usable and closable.
// At most one read-side (read_some / accept / connect) and one write-side (write_all) operation
// may be in flight per socket; a second one throws crew::usage_error, so does close() while one is
// in flight (cancel and await it first). Send never raises SIGPIPE (MSG_NOSIGNAL): a write to a
// reset connection throws EPIPE or ECONNRESET.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "crew/async/task.hpp"
#include "crew/net/endpoint.hpp"

namespace crew::net {

namespace detail {
class socket_state;
}

class tcp_stream {
public:
    tcp_stream() noexcept;  // closed
    tcp_stream(tcp_stream&&) noexcept;
    tcp_stream& operator=(tcp_stream&&) noexcept;  // closes the stream it replaces
    ~tcp_stream();                                  // closes

    // Non-blocking connect; waits for the socket to become writable and reads SO_ERROR.
    // Throws std::system_error (ECONNREFUSED, ENETUNREACH, ...). TCP_NODELAY is on.
    static task<tcp_stream> connect(endpoint peer);

    // Reads at most buf.size() bytes once some are available; 0 means end of stream (or an
    // empty buf, which returns 0 at once without a syscall).
    task<std::size_t> read_some(std::span<std::byte> buf);
    // Writes all of data (suspending while the send buffer is full).
    task<void> write_all(std::span<const std::byte> data);

    void shutdown();  // the write side: the peer reads 0 after the data already written
    void close();     // idempotent; throws crew::usage_error while an operation is in flight
    bool is_open() const noexcept;
    int native_handle() const noexcept;  // -1 when closed

    endpoint local_endpoint() const;
    endpoint peer_endpoint() const;
    void set_nodelay(bool on);
    bool nodelay() const;

private:
    friend class tcp_listener;
    explicit tcp_stream(int fd);
    detail::socket_state& checked(const char* what) const;
    std::unique_ptr<detail::socket_state> s_;
};

class tcp_listener {
public:
    tcp_listener() noexcept;  // closed
    tcp_listener(tcp_listener&&) noexcept;
    tcp_listener& operator=(tcp_listener&&) noexcept;
    ~tcp_listener();

    // socket + SO_REUSEADDR + bind + listen. Port 0 picks a free port (see local_endpoint()).
    // Throws std::system_error (EADDRINUSE, EACCES, ...); backlog < 0: std::invalid_argument.
    static tcp_listener bind(const endpoint& local, int backlog = 1024);

    // The next connection (non-blocking, close-on-exec, TCP_NODELAY on). EMFILE / ENFILE /
    // ENOBUFS / ENOMEM throw std::system_error to this task only; the pending connection stays
    // queued and the listener stays usable (back off, close something, accept again).
    task<tcp_stream> accept();

    void close();  // idempotent; throws crew::usage_error while accept() is in flight
    bool is_open() const noexcept;
    int native_handle() const noexcept;
    endpoint local_endpoint() const;

private:
    detail::socket_state& checked(const char* what) const;
    std::unique_ptr<detail::socket_state> s_;
};

}  // namespace crew::net
