// crew/net/detail/socket.hpp -- the state shared by tcp_listener and tcp_stream: a non-blocking
// descriptor, its driver registration (made on the first operation, from inside a crew task, so it
// belongs to the pool that runs the socket's tasks), and one "in use" flag per direction.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "crew/async/detail/io_registration.hpp"

namespace crew::net::detail {

class socket_state {
public:
    explicit socket_state(int fd) noexcept : fd_(fd) {}
    ~socket_state();
    socket_state(const socket_state&) = delete;
    socket_state& operator=(const socket_state&) = delete;

    int fd() const noexcept { return fd_; }
    // The registration, made on first use (throws std::system_error when epoll_ctl fails). Call it
    // before taking an op_guard. After fork(), a registration made in the parent is dropped here
    // (the driver is the parent's: io_driver.hpp) with the parent's in-flight flags, whose tasks
    // never run in the child, and the socket registers with the calling task's pool afresh.
    crew::detail::io_registration& registration() {
        // acquire: pairs with the release store in register_cold() (the registration is built).
        crew::detail::io_registration* r = reg_.load(std::memory_order_acquire);
        if (r != nullptr && !r->forked_away()) [[likely]] return *r;
        return register_cold();
    }
    // Deregister and close; throws crew::usage_error while an operation is in flight (one of
    // this process: an operation the parent had in flight at fork() does not count in the child).
    void close();

    // One operation per direction at a time (the driver holds one waiter per interest).
    // Throws crew::usage_error when the direction is already busy; the guard frees it.
    class op_guard {
    public:
        op_guard(socket_state& s, crew::detail::io_interest dir);
        ~op_guard();
        op_guard(const op_guard&) = delete;
        op_guard& operator=(const op_guard&) = delete;

    private:
        std::atomic<bool>& busy_;
    };

private:
    crew::detail::io_registration& register_cold();

    int fd_;
    std::mutex register_mutex_;                            // serialises register_cold()
    std::atomic<crew::detail::io_registration*> reg_{nullptr};  // owned; null until first use
    std::atomic<bool> reading_{false};
    std::atomic<bool> writing_{false};
};

// A new non-blocking, close-on-exec socket; throws std::system_error.
int open_socket(int family);
// EBADF as std::system_error, for an operation on a closed (or moved-from) socket.
[[noreturn]] void throw_closed(const char* what);
// errno as std::system_error (generic category).
[[noreturn]] void throw_errno(int err, const char* what);

}  // namespace crew::net::detail
