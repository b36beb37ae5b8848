// src/net/socket.cpp -- crew::net::detail::socket_state: descriptor, lazy driver registration,
// one operation per direction.
#include "crew/net/detail/socket.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "crew/errors.hpp"

namespace crew::net::detail {

socket_state::~socket_state() {
    delete reg_.load(std::memory_order_relaxed);  // deregister before the number can be reused
    if (fd_ >= 0) ::close(fd_);
}

crew::detail::io_registration& socket_state::register_cold() {
    std::lock_guard lock(register_mutex_);
    crew::detail::io_registration* r = reg_.load(std::memory_order_relaxed);  // under the mutex
    if (r != nullptr && r->forked_away()) {
        // The parent's registration: deregistering it leaves the parent's epoll set alone.
        reg_.store(nullptr, std::memory_order_relaxed);
        delete r;
        r = nullptr;
        // relaxed: set by parent tasks that never resume in this process.
        reading_.store(false, std::memory_order_relaxed);
        writing_.store(false, std::memory_order_relaxed);
    }
    if (r == nullptr) {
        r = new crew::detail::io_registration(fd_);
        reg_.store(r, std::memory_order_release);  // partner: the acquire load in registration()
    }
    return *r;
}

void socket_state::close() {
    if (fd_ < 0) return;
    // acquire: pairs with the release store in register_cold() (r->forked_away() reads r).
    crew::detail::io_registration* r = reg_.load(std::memory_order_acquire);
    // Acquire: pairs with the release in ~op_guard, so the finished operation's accesses to the
    // registration happen before we destroy it.
    const bool busy = reading_.load(std::memory_order_acquire) || writing_.load(std::memory_order_acquire);
    if (busy && (r == nullptr || !r->forked_away()))
        throw crew::usage_error("crew::net: close() while an operation is in flight on the socket; cancel and await it first");
    // relaxed: no operation is in flight, so no other thread reads reg_ now. Deleting a forked-away
    // registration leaves the parent's epoll set alone.
    delete reg_.exchange(nullptr, std::memory_order_relaxed);
    ::close(fd_);  // the descriptor is gone even when close reports an error (Linux)
    fd_ = -1;
}

socket_state::op_guard::op_guard(socket_state& s, crew::detail::io_interest dir)
    : busy_(dir == crew::detail::io_interest::read ? s.reading_ : s.writing_) {
    // Acquire: pairs with the release in ~op_guard of the previous operation in this direction.
    if (busy_.exchange(true, std::memory_order_acquire))
        throw crew::usage_error("crew::net: a second operation in the same direction while one is in flight");
}

socket_state::op_guard::~op_guard() {
    busy_.store(false, std::memory_order_release);  // pairs with the acquire in op_guard / close
}

int open_socket(int family) {
    const int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw_errno(errno, "crew::net: socket");
    return fd;
}

void throw_closed(const char* what) {
    throw std::system_error(EBADF, std::generic_category(), what);
}

void throw_errno(int err, const char* what) {
    throw std::system_error(err, std::generic_category(), what);
}

}  // namespace crew::net::detail
