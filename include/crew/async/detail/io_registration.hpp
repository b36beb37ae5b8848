// crew/async/detail/io_registration.hpp -- a non-blocking fd registered with a pool's I/O driver
// (crew/detail/io_driver.hpp), and the readiness wait crew::net builds on (the contract:
// edge-triggered EPOLLIN|EPOLLOUT|EPOLLRDHUP; Tokio's readiness + tick rule).
//
//   for (;;) {
//       auto tok = co_await reg.ready(io_interest::read);
//       ssize_t n = ::recv(fd, p, len, 0);
//       if (n >= 0) co_return n;
//       if (errno == EAGAIN || errno == EWOULDBLOCK) { reg.clear_ready(io_interest::read, tok); continue; }
//       ...
//   }
//
// Readiness is a word (tick << 8 | bits): the driver ORs in what epoll reported and bumps the tick;
// clear_ready clears bits only if the tick is still the one the token saw (no lost edge). An error
// or hang-up counts as ready for both interests, so the next syscall reports it.
//
// A read that returned fewer bytes than asked emptied a stream socket's receive queue (Linux TCP
// and Unix stream sockets stop short only at an empty queue, the peer's FIN, an error or urgent
// data), so `clear_drained` may forget the read readiness then, saving the recv that would only
// return EAGAIN. It keeps io_closed_bit (FIN, hang-up, error, urgent data: what may still be
// readable after a short read without a new edge); only an EAGAIN (clear_ready) forgets that.
#pragma once

#include <coroutine>
#include <cstdint>
#include <mutex>

#include "crew/async/detail/waiter.hpp"
#include "crew/detail/async_schedule.hpp"
#include "crew/detail/io_driver.hpp"
#include "crew/errors.hpp"

namespace crew::detail {

registry& current_registry();

enum class io_interest : unsigned { read = 1, write = 2 };

struct io_ready_token {
    std::uint64_t tick = 0;
};

class io_registration {
public:
    // Registers `fd` (non-blocking) with the driver of the calling worker's pool, or of the default
    // pool from an outside thread. Throws std::system_error (errno) when epoll_ctl fails.
    explicit io_registration(int fd) : driver_(&driver_of(current_registry())), source_(new io_source) {
        source_->fd = fd;
        try {
            driver_->register_fd(*source_);
        } catch (...) {
            delete source_;
            throw;
        }
    }
    // Deregisters; the readiness state is freed by the driver at its next turn.
    ~io_registration() { driver_->deregister(source_); }
    io_registration(const io_registration&) = delete;
    io_registration& operator=(const io_registration&) = delete;

    int fd() const noexcept { return source_->fd; }
    // Registered with a driver of an ancestor process (io_driver.hpp, fork()): unusable here.
    bool forked_away() const noexcept { return driver_->forked_away(); }

    class [[nodiscard]] ready_awaiter {
    public:
        bool await_ready() noexcept {
            // acquire: pairs with the driver's acq_rel CAS (what the fd's event published).
            const std::uint64_t r = s_->readiness.load(std::memory_order_acquire);
            if ((r & bit()) == 0) return false;
            token_.tick = r >> 8;
            return spend_budget();
        }
        bool await_suspend(std::coroutine_handle<> h) {
            std::lock_guard lock(s_->mutex);
            // acquire: as in await_ready (partner: the driver's readiness CAS).
            const std::uint64_t r = s_->readiness.load(std::memory_order_acquire);
            if ((r & bit()) != 0) {  // ready after all (or the budget is spent): no wait
                token_.tick = r >> 8;
                return yield_suspend(h);
            }
            if (s_->waiting[index()] != nullptr)
                throw usage_error("crew: two tasks wait for the same readiness of one fd");
            node_.w = prepare_suspend(h);
            if (!node_.w) {
                cancelled_ = true;
                return false;
            }
            s_->waiting[index()] = &node_;
            armed_ = true;
            return true;
        }
        io_ready_token await_resume() {
            if (cancelled_ || (armed_ && resume_reason() == wake_reason::cancelled)) {
                unlink();
                throw_cancelled();
            }
            // acquire: the driver's readiness CAS that preceded the wake.
            if (armed_) token_.tick = s_->readiness.load(std::memory_order_acquire) >> 8;
            armed_ = false;
            return token_;
        }
        ~ready_awaiter() { unlink(); }
        ready_awaiter(const ready_awaiter&) = delete;
        ready_awaiter& operator=(const ready_awaiter&) = delete;

    private:
        friend class io_registration;
        ready_awaiter(io_source* s, io_interest i) noexcept : s_(s), interest_(i) {}
        std::uint64_t bit() const noexcept {
            return interest_ == io_interest::read ? io_read_bit | io_closed_bit : io_write_bit;
        }
        unsigned index() const noexcept { return static_cast<unsigned>(interest_) - 1; }
        void unlink() noexcept {
            if (!armed_) return;
            armed_ = false;
            std::lock_guard lock(s_->mutex);
            if (s_->waiting[index()] == &node_) s_->waiting[index()] = nullptr;
            node_.w.reset();
        }
        io_source* s_;
        io_interest interest_;
        io_waiter node_;
        io_ready_token token_;
        bool armed_ = false;
        bool cancelled_ = false;
    };

    // co_await: the fd was reported ready for `interest` (see the header). Throws
    // crew::cancelled_error when the task is cancelled while suspended.
    ready_awaiter ready(io_interest interest) noexcept { return ready_awaiter(source_, interest); }

    // After EAGAIN: forget the readiness seen at `token` unless a newer report came since.
    void clear_ready(io_interest interest, io_ready_token token) noexcept {
        clear_bits(interest == io_interest::read ? io_read_bit | io_closed_bit : io_write_bit, token);
    }
    // After a read of a stream socket that returned fewer bytes than asked (and more than 0): its
    // receive queue was empty then, so forget the read readiness seen at `token` as after EAGAIN,
    // but keep io_closed_bit (see the header).
    void clear_drained(io_ready_token token) noexcept { clear_bits(io_read_bit, token); }

private:
    void clear_bits(std::uint64_t bits, io_ready_token token) noexcept {
        std::uint64_t r = source_->readiness.load(std::memory_order_relaxed);
        while ((r >> 8) == token.tick && (r & bits) != 0) {
            // relaxed: only the bits change; the driver's next report bumps the tick and wins.
            if (source_->readiness.compare_exchange_weak(r, r & ~bits, std::memory_order_relaxed,
                                                         std::memory_order_relaxed))
                return;
        }
    }

    io_driver* driver_;
    io_source* source_;
};

}  // namespace crew::detail
