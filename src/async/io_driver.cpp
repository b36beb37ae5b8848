// The I/O and timer driver (crew/detail/io_driver.hpp): epoll, eventfd, the wheel, the try-lock.
#include "crew/detail/io_driver.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <string>
#include <system_error>
#include <utility>

#include "crew/errors.hpp"

namespace crew::detail {

namespace {

constexpr int max_events = 256;
// How a readiness report queues its task from a worker: async_wake::spawn (the back of the ring,
// in report order, stealable at once), or with CREW_IO_DRIVER_FIFO_WAKES=0 async_wake::wake (the
// LIFO slot; the previous occupant goes to the back of the ring, so a batch runs last-reported
// first). Session 7 measured FIFO ahead on both echo shapes on a quiet machine (docs/DESIGN.md
// "No dry-worker poll; FIFO readiness wakes"); the switch is kept for an A/B.
#ifndef CREW_IO_DRIVER_FIFO_WAKES
#define CREW_IO_DRIVER_FIFO_WAKES 1
#endif
constexpr async_wake readiness_wake = CREW_IO_DRIVER_FIFO_WAKES ? async_wake::spawn : async_wake::wake;
constexpr std::size_t wake_batch = 64;
constexpr std::uint64_t event_tag = 1;  // epoll data of the eventfd (sources are pointers)
constexpr std::uint64_t timer_tag = 2;  // epoll data of the fallback timerfd

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

// Low timer slack for the thread that sleeps in the driver: the kernel's default 50 us slack is
// half the 100 us overshoot target (docs/DESIGN.md has the before/after figures).
void lower_timer_slack() noexcept {
    static thread_local bool done = false;
    if (done) return;
    done = true;
    (void)::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
}

// Sources deregistered from a forked-away driver (the header's fork() note): kept reachable here,
// never freed. The mutex is the child's own (made at first use, after the fork that needs it).
std::mutex& abandoned_mutex() {
    static std::mutex* m = new std::mutex;
    return *m;
}
io_source* abandoned_sources = nullptr;

void abandon(io_source* list) noexcept {
    if (list == nullptr) return;
    std::lock_guard lock(abandoned_mutex());
    while (list != nullptr) {
        io_source* next = std::exchange(list->next_release, abandoned_sources);
        abandoned_sources = list;
        list = next;
    }
}

[[noreturn]] void throw_forked_away(const char* what) {
    throw usage_error(std::string(what) +
                      ": this pool's I/O driver was created before fork(); it belongs to the parent process "
                      "(a forked child uses its own pools)");
}

}  // namespace

std::uint64_t driver_now_ns() noexcept {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

io_driver::io_driver() : wheel_(driver_now_ns()) {
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0) throw_errno("crew: epoll_create1 for the I/O driver");
    event_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (event_ < 0) {
        ::close(epoll_);
        throw_errno("crew: eventfd for the I/O driver");
    }
    epoll_event ev{};
    ev.events = EPOLLIN;  // level-triggered: readable until drained, so no wake is lost
    ev.data.u64 = event_tag;
    if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, event_, &ev) != 0) {
        const int e = errno;
        ::close(event_);
        ::close(epoll_);
        throw std::system_error(e, std::generic_category(), "crew: epoll_ctl for the I/O driver");
    }
}

io_driver::~io_driver() {
    if (forked_away()) {
        abandon(std::exchange(released_, nullptr));  // unlocked: a parent thread may have held mutex_
    } else {
        free_released();
    }
    if (timerfd_ >= 0) ::close(timerfd_);
    ::close(event_);
    ::close(epoll_);
}

// ---- timers ----

void io_driver::add_timer(timer_entry& e) {
    if (forked_away()) [[unlikely]] throw_forked_away("crew: a timer");
    bool kick = false;
    {
        std::lock_guard lock(mutex_);
        wheel_.insert(e);
        const std::uint64_t next = wheel_.next_deadline();
        next_due_.store(next, std::memory_order_relaxed);
        // The sleeper's timeout is later than this timer: wake it to re-arm (once per change).
        if (sleeping_until_ != 0 && e.deadline_ns < sleeping_until_) {
            sleeping_until_ = e.deadline_ns;
            kick = true;
        }
    }
    timers_.fetch_add(1, std::memory_order_relaxed);
    if (kick) unpark();
}

void io_driver::cancel_timer(timer_entry& e) noexcept {
    if (forked_away()) [[unlikely]] return;  // no timer of the child is in this wheel
    std::lock_guard lock(mutex_);
    if (wheel_.cancel(e)) timers_.fetch_sub(1, std::memory_order_relaxed);
    e.w.reset();
}

// Fire what is due, at most wake_batch wakers per lock hold; wakes happen outside the lock.
bool io_driver::expire_timers(std::uint64_t now_ns) {
    bool any = false;
    for (;;) {
        waker batch[wake_batch];
        std::size_t n = 0;
        {
            std::lock_guard lock(mutex_);
            while (n < wake_batch) {
                timer_node* t = wheel_.poll(now_ns);
                if (t == nullptr) break;
                batch[n++] = std::move(static_cast<timer_entry*>(t)->w);
            }
            next_due_.store(wheel_.next_deadline(), std::memory_order_relaxed);
        }
        timers_.fetch_sub(n, std::memory_order_relaxed);
        // FIFO (the back of the ring, in deadline order): with the LIFO slot, the last timer of a
        // batch (due after the others) would resume first.
        for (std::size_t i = 0; i < n; ++i) any |= batch[i].wake(async_wake::spawn);
        if (n < wake_batch) return any;
    }
}

// ---- fds ----

void io_driver::register_fd(io_source& s) {
    if (forked_away()) [[unlikely]] throw_forked_away("crew: registering an fd");
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.ptr = &s;
    if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, s.fd, &ev) != 0) throw_errno("crew: epoll_ctl(EPOLL_CTL_ADD)");
    sources_.fetch_add(1, std::memory_order_relaxed);
}

void io_driver::deregister(io_source* s) noexcept {
    if (forked_away()) [[unlikely]] {  // the epoll set is the parent's: leave its entry alone
        s->next_release = nullptr;
        abandon(s);
        return;
    }
    (void)::epoll_ctl(epoll_, EPOLL_CTL_DEL, s->fd, nullptr);
    sources_.fetch_sub(1, std::memory_order_relaxed);
    std::lock_guard lock(mutex_);
    s->next_release = released_;
    released_ = s;
}

// Holder only, before an epoll call: no event of a source deregistered before this is in flight
// (the previous holder dispatched all it got before releasing the try-lock).
void io_driver::free_released() noexcept {
    io_source* list;
    {
        std::lock_guard lock(mutex_);
        list = released_;
        released_ = nullptr;
    }
    while (list != nullptr) delete std::exchange(list, list->next_release);
}

bool io_driver::dispatch_events(const void* raw, int n) {
    const auto* events = static_cast<const epoll_event*>(raw);
    bool any = false;
    for (int i = 0; i < n; ++i) {
        const epoll_event& ev = events[i];
        if (ev.data.u64 == event_tag) {
            std::uint64_t drained;
            (void)!::read(event_, &drained, sizeof drained);
            continue;
        }
        if (ev.data.u64 == timer_tag) {
            std::uint64_t drained;
            (void)!::read(timerfd_, &drained, sizeof drained);
            continue;
        }
        auto* s = static_cast<io_source*>(ev.data.ptr);
        std::uint64_t bits = 0;
        if (ev.events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR | EPOLLPRI)) bits |= io_read_bit;
        if (ev.events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR | EPOLLPRI)) bits |= io_closed_bit;
        if (ev.events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) bits |= io_write_bit;
        // acq_rel: the new tick orders this report after earlier ones (clear_ready's CAS compares it).
        std::uint64_t cur = s->readiness.load(std::memory_order_relaxed);
        while (!s->readiness.compare_exchange_weak(cur, ((cur >> 8) + 1) << 8 | (cur & 0xff) | bits,
                                                   std::memory_order_acq_rel, std::memory_order_relaxed)) {
        }
        waker ws[2];
        {
            std::lock_guard lock(s->mutex);  // partner: the awaiter's re-check under the same lock
            for (int k = 0; k < 2; ++k)
                if ((bits & (1u << k)) && s->waiting[k] != nullptr) {
                    ws[k] = std::move(s->waiting[k]->w);
                    s->waiting[k] = nullptr;
                }
        }
        for (auto& w : ws) any |= w.wake(readiness_wake);
    }
    return any;
}

// ---- the workers ----

bool io_driver::try_acquire() noexcept {
    if (held_.load(std::memory_order_relaxed)) return false;
    if (held_.exchange(true, std::memory_order_seq_cst)) return false;
    wanted_.store(false, std::memory_order_relaxed);  // we drive now: earlier requests are met
    return true;
}

void io_driver::release(parking& lot) noexcept {
    held_.store(false, std::memory_order_seq_cst);
    // seq_cst: partner of want()'s store-then-load; if the futex sleeper missed the free driver,
    // it is seen here and woken (it announced itself to `lot` before asking).
    if (wanted_.load(std::memory_order_seq_cst) && wanted_.exchange(false, std::memory_order_seq_cst))
        lot.notify_one();
}

bool io_driver::want() noexcept {
    wanted_.store(true, std::memory_order_seq_cst);
    return !held_.load(std::memory_order_seq_cst);
}

bool io_driver::poll_wanted() const noexcept {
    if (sources_.load(std::memory_order_relaxed) != 0) return true;
    if (timers_.load(std::memory_order_relaxed) == 0) return false;
    return next_due_.load(std::memory_order_relaxed) <= driver_now_ns();
}

bool io_driver::poll() {
    free_released();
    bool any = false;
    if (sources_.load(std::memory_order_relaxed) != 0) {
        epoll_event events[max_events];
        const int n = ::epoll_wait(epoll_, events, max_events, 0);
        if (n > 0) any |= dispatch_events(events, n);
    }
    if (timers_.load(std::memory_order_relaxed) != 0) any |= expire_timers(driver_now_ns());
    return any;
}

void io_driver::arm_timerfd(std::uint64_t deadline_ns) noexcept {
    if (timerfd_ < 0) {
        timerfd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (timerfd_ < 0) return;
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = timer_tag;
        (void)::epoll_ctl(epoll_, EPOLL_CTL_ADD, timerfd_, &ev);
    }
    itimerspec spec{};
    spec.it_value.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000);
    spec.it_value.tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000);
    (void)::timerfd_settime(timerfd_, TFD_TIMER_ABSTIME, &spec, nullptr);
}

bool io_driver::sleep(parking& lot) {
    lower_timer_slack();
    free_released();
    std::uint64_t deadline;
    {
        std::lock_guard lock(mutex_);
        deadline = wheel_.next_deadline();
        sleeping_until_ = deadline == timer_wheel::never ? timer_wheel::never - 1 : deadline;
        if (sleeping_until_ == 0) sleeping_until_ = 1;
    }
    epoll_event events[max_events];
    int n;
    const std::uint64_t now = driver_now_ns();
    if (deadline == timer_wheel::never) {
        n = ::epoll_wait(epoll_, events, max_events, -1);
    } else if (deadline <= now) {
        n = ::epoll_wait(epoll_, events, max_events, 0);
    } else if (have_pwait2_) {
        const std::uint64_t d = deadline - now;
        timespec ts{static_cast<time_t>(d / 1'000'000'000), static_cast<long>(d % 1'000'000'000)};
        n = ::epoll_pwait2(epoll_, events, max_events, &ts, nullptr);
        if (n < 0 && errno == ENOSYS) {
            have_pwait2_ = false;
            arm_timerfd(deadline);
            n = ::epoll_wait(epoll_, events, max_events, -1);
        }
    } else {
        arm_timerfd(deadline);
        n = ::epoll_wait(epoll_, events, max_events, -1);
    }
    {
        std::lock_guard lock(mutex_);
        sleeping_until_ = 0;
    }
    // Leave the lot first: the wakes below notify it, and must not pick this (awake) worker.
    const bool searching = lot.cancel_park_driver();
    if (n > 0) dispatch_events(events, n);
    if (timers_.load(std::memory_order_relaxed) != 0) expire_timers(driver_now_ns());
    return searching;
}

void io_driver::unpark() noexcept {
    if (forked_away()) [[unlikely]] return;  // the eventfd would wake the parent's driver
    const std::uint64_t one = 1;
    (void)!::write(event_, &one, sizeof one);
}

}  // namespace crew::detail
