// crew/detail/io_driver.hpp -- one pool's I/O and timer driver: an epoll set, an eventfd to wake
// it, and the timer wheel (crew/async/detail/timer_wheel.hpp) behind a mutex. Which worker drives
// it is decided by a try-lock word (Tokio's shared driver: docs/DESIGN.md "The I/O and timer
// driver"):
//   * a worker about to park takes it (try_acquire), announces itself to the parking lot as the
//     driver sleeper (parking.hpp prepare_park_driver), re-checks the queues, then sleep()s in
//     epoll_pwait2 until the nearest timer; a notify that finds only the driver sleeper writes the
//     eventfd (unpark()); a timer inserted earlier than the armed timeout also writes it;
//   * a busy worker polls it every driver_poll_ticks tasks when the try-lock is free (poll());
//   * a worker that parks on the futex because another holds the driver sets `wanted_`; the holder
//     wakes one sleeper when it lets go (release), so that someone drives while it runs tasks.
// Expired timers and ready fds wake their tasks through waiter.hpp (waker::wake).
//
// Who calls what: add_timer/cancel_timer/register_fd/deregister/unpark from any thread;
// try_acquire by a worker; poll/sleep/release only by the worker that acquired it.
//
// fork(): the epoll set and the eventfd are shared with the parent process after fork(), so a
// driver made in an ancestor process is "forked away" in the child: it never touches them there
// (an EPOLL_CTL_DEL or an eventfd write from the child would change the parent's driver) and never
// takes its mutex (a parent thread may have held it at the fork). In the child, register_fd and
// add_timer on it throw crew::usage_error; deregister, cancel_timer and unpark are quiet no-ops
// (a deregistered source is kept, never freed: a parent task's frame copied into the child may
// still point at it); the child's tasks use the child's pools and their fresh drivers, and a
// socket registered before fork() registers afresh there (src/net/socket.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "crew/async/detail/timer_wheel.hpp"
#include "crew/async/detail/waiter.hpp"
#include "crew/detail/atomics.hpp"
#include "crew/detail/parking.hpp"

namespace crew::detail {

// A pending timer: a wheel node and the suspension it wakes (moved out under the driver's lock).
struct timer_entry : timer_node {
    waker w;
};

// The readiness bits of io_source::readiness: read, write, and "closed or exceptional"
// (EPOLLRDHUP, EPOLLHUP, EPOLLERR, EPOLLPRI), reported with io_read_bit; it counts as read
// readiness and survives io_registration::clear_drained (io_registration.hpp).
inline constexpr std::uint64_t io_read_bit = 1;
inline constexpr std::uint64_t io_write_bit = 2;
inline constexpr std::uint64_t io_closed_bit = 4;

// A registered fd's readiness (io_registration.hpp): the driver ORs in what epoll reported.
struct io_source {
    std::atomic<std::uint64_t> readiness{0};  // (tick << 8) | the io_*_bit bits above
    std::mutex mutex;                         // guards waiting[]
    struct io_waiter* waiting[2] = {nullptr, nullptr};  // read, write
    int fd = -1;
    io_source* next_release = nullptr;        // the driver's release list
};

// A task waiting for readiness: lives in its awaiter (io_registration.hpp).
struct io_waiter {
    waker w;
};

inline constexpr std::uint32_t driver_poll_ticks = 61;  // Tokio's event_interval

std::uint32_t fork_generation() noexcept;  // crew/detail/registry.hpp

class io_driver {
public:
    io_driver();  // throws std::system_error when epoll/eventfd cannot be created
    ~io_driver();
    io_driver(const io_driver&) = delete;
    io_driver& operator=(const io_driver&) = delete;

    // ---- timers (any thread) ----
    // Queue `e` (its deadline and waker set). Wakes the driver sleeper when it sleeps past it.
    void add_timer(timer_entry& e);
    // Take `e` out if it has not fired; its waker (if still there) is dropped.
    void cancel_timer(timer_entry& e) noexcept;
    std::size_t pending_timers() const noexcept { return timers_.load(std::memory_order_relaxed); }

    // ---- fds (any thread) ----
    void register_fd(io_source& s);  // throws std::system_error (errno) when epoll_ctl fails
    // EPOLL_CTL_DEL, then the source is freed by the driver at its next turn (an event for it may
    // be in flight in the holder's hands until then).
    void deregister(io_source* s) noexcept;

    // ---- the workers ----
    bool try_acquire() noexcept;
    // Let go; wakes a futex sleeper when one asked for the driver meanwhile (`wanted_`).
    void release(parking& lot) noexcept;
    // A futex sleeper's request (see the header); true when the driver is free (park no further).
    bool want() noexcept;
    // Holder: expire due timers and dispatch ready fds without blocking. True when anything woke.
    bool poll();
    // Has a busy poll anything to look at (timers due, fds registered)? Cheap, any thread.
    bool poll_wanted() const noexcept;
    // Holder, announced as the driver sleeper: epoll_pwait2 until an event, the nearest timer, or
    // unpark(); then leave the lot (lot.cancel_park_driver(), returned), then dispatch and expire.
    bool sleep(parking& lot);
    // Wake the driver sleeper (eventfd write). Any thread; async-signal-safe.
    void unpark() noexcept;
    static void unpark_thunk(void* self) noexcept { static_cast<io_driver*>(self)->unpark(); }

    // Made in an ancestor process (see the header): its epoll set and eventfd are the parent's.
    bool forked_away() const noexcept { return generation_ != fork_generation(); }

private:
    bool expire_timers(std::uint64_t now_ns);
    bool dispatch_events(const void* events, int n);
    void free_released() noexcept;
    void arm_timerfd(std::uint64_t deadline_ns) noexcept;

    int epoll_ = -1;
    int event_ = -1;
    int timerfd_ = -1;  // only when epoll_pwait2 is missing (ENOSYS) or under TSan
    // ThreadSanitizer (clang 14, g++ 12) does not intercept epoll_pwait2, so it would miss the
    // kernel's ordering from epoll_ctl(ADD) to the wait's report and flag the new source's
    // initialisation as a race; its builds take the timerfd + epoll_wait path, which it models.
    bool have_pwait2_ = !under_tsan;
    // held_: the try-lock; wanted_: a futex sleeper asked for a driver. seq_cst: the pair forms a
    // store-buffering handshake (want(): store wanted_, load held_; release(): store held_, then
    // exchange wanted_): one side sees the other.
    std::atomic<bool> held_{false};
    std::atomic<bool> wanted_{false};
    std::atomic<std::size_t> timers_{0};       // pending timers (a hint for poll_wanted)
    std::atomic<std::uint64_t> next_due_{timer_wheel::never};  // the wheel's next deadline (hint)
    std::atomic<std::size_t> sources_{0};      // registered fds
    std::mutex mutex_;                         // guards wheel_, sleeping_until_, released_
    timer_wheel wheel_;
    std::uint64_t sleeping_until_ = 0;         // the sleeper's timeout (ns); 0: no one sleeps
    io_source* released_ = nullptr;
    const std::uint32_t generation_ = fork_generation();
};

class registry;
// The driver of pool `r` (src/registry.cpp).
io_driver& driver_of(registry& r) noexcept;

// Now, in steady_clock nanoseconds (the wheel's clock).
std::uint64_t driver_now_ns() noexcept;

}  // namespace crew::detail
