// The worker's idle half: spinning as a searcher, lingering, parking (on the futex or in the I/O
// driver), and the wakes a worker asks for before it sleeps or after it found work. The busy half
// (finding, stealing, waiting while helping) is src/worker.cpp; the constants are worker_tuning.hpp.
#include "crew/detail/worker.hpp"

#include "crew/detail/registry.hpp"
#include "worker_tuning.hpp"

namespace crew::detail {

namespace {

using namespace tuning;

void backoff(std::uint32_t round) noexcept {
    if (round < pause_rounds) {
        for (std::uint32_t i = 0; i < (1u << round); ++i) std_atomics::pause();
    } else {
        std_atomics::yield();
    }
}

// Past the spin rounds (at once for a worker the half rule kept from searching): true while the
// linger lasts, i.e. until linger_ns after its first round (idle_cold then yields the core). A
// lingering non-searcher is neither a searcher nor a sleeper in the lot, as a busy worker is: a
// notify that finds no searcher and no sleeper wakes no one, and this worker's next look (one yield
// away) finds the work; before it sleeps it announces itself and re-checks as every sleeper does.
bool linger_round(std::uint32_t& spins, std::int64_t& since_ns) noexcept {
    const std::int64_t now = now_ns();
    if (spins <= spin_rounds) {
        spins = spin_rounds + 1;
        since_ns = now;
        return true;
    }
    return now - since_ns < linger_ns;
}

}  // namespace

// Nothing was found. Spin (as a searcher, if the half rule allows), then park. Returns false when
// the worker should leave its loop: the pool is stopping and no work is in sight.
bool worker::idle_cold(completion* done) {
    if (done == nullptr && owner_.stopping()) {
        if (work_visible()) return true;
        if (searching_) {
            searching_ = false;
            lot_.end_search();
        }
        return false;
    }
    if (metrics_enabled && counters_.state() != worker_state::search) note_search_begin();
    if (spins_ == 0 && !searching_) searching_ = lot_.try_begin_search();
    if (searching_ && spins_ < spin_rounds) {
        backoff(spins_++);
        return true;
    }
    if (linger_round(spins_, linger_since_ns_)) {
        // The I/O driver is polled (without blocking) every round, as a parked worker would sleep
        // in it: a lingering pool sees a ready socket or a due timer within a round.
        poll_driver_cold();
        std_atomics::yield();
        return true;
    }
    if (searching_) {
        searching_ = false;
        lot_.end_search();
    }
    park_cold(done);
    spins_ = 0;
    return true;
}

// A busy worker's look at the I/O driver every driver_poll_ticks find_task calls (Tokio's
// event_interval): due timers and ready fds are not starved by a pool that never parks.
void worker::poll_driver_cold() {
    driver_countdown_ = driver_poll_ticks;
    io_driver& d = owner_.driver();
    if (!d.poll_wanted() || !d.try_acquire()) return;
    (void)d.poll();
    d.release(lot_);
}

// Park in the I/O driver when its try-lock is free: poll it first (what it wakes is work), then
// announce as the driver sleeper, re-check, and sleep in epoll until an event, the nearest timer,
// or a notify (the eventfd). False: another worker holds the driver.
bool worker::park_in_driver_cold() {
    io_driver& d = owner_.driver();
    if (!d.try_acquire()) return false;
    if (d.poll()) {  // woke tasks: they are queued here already
        d.release(lot_);
        return true;
    }
    lot_.prepare_park_driver();
    request_wakes_cold();
    if (owner_.stopping() || work_visible()) {
        searching_ = lot_.cancel_park_driver();
        lifo_pass_ = true;
        d.release(lot_);
        return true;
    }
    note_park_begin();
    window_start_ns_ = 0;
    trace::park(trace_);
    searching_ = d.sleep(lot_);
    trace::unpark(trace_);
    note_park_end();
    d.release(lot_);
    return true;
}

// Announce, re-check every queue (and the awaited flag or the stop flag), then sleep: in the I/O
// driver when this worker can take it (and waits for no flag), else on the futex.
void worker::park_cold(completion* done) {
    if (done == nullptr && park_in_driver_cold()) return;
    if (done != nullptr && !done->announce_parked(&lot_)) return;
    std::uint32_t key = lot_.prepare_park();
    request_wakes_cold();
    bool wake_reason = done != nullptr ? done->set_started() : owner_.stopping();
    // The driver is taken: ask its holder to wake a sleeper when it lets go (after announcing, so
    // that wake finds this worker); if it was let go meanwhile, come back and take it.
    if (done == nullptr && !wake_reason) wake_reason = owner_.driver().want();
    if (wake_reason || work_visible()) {
        searching_ = lot_.cancel_park();
        lifo_pass_ = true;  // what is visible may be a LIFO slot: the next steal round looks there
        return;
    }
    note_park_begin();
    window_start_ns_ = 0;  // the sleep is no task time (retune_interval_cold)
    trace::park(trace_);
    searching_ = lot_.park(key);
    trace::unpark(trace_);
    note_park_end();
}

// Every queue a task can wait in: the injector, every deque, every ring and LIFO slot.
bool worker::work_visible() const noexcept {
    if (!owner_.injector().empty_hint()) return true;
    for (unsigned i = 0; i < owner_.size(); ++i) {
        const worker& w = owner_.worker_at(i);
        if (w.queued_hint() > 0 || w.async_queued_hint()) return true;
    }
    return false;
}

// A searcher found work. If it was the last searcher and more work is in sight, wake another
// worker so that someone keeps looking. (Waking unconditionally puts a futex call between finding
// a lone task and running it, which doubled the wake latency of a two-worker pool.)
void worker::found_work_cold() noexcept {
    searching_ = false;
    if (!lot_.end_search()) return;
    if (work_visible()) {
        trace::wake(trace_);
        lot_.notify_one();
    } else if (lot_.wake_wanted()) {
        request_wakes_cold();  // the work in reach may be private forks: their owners wake one
    }
}

// This worker announced itself asleep (or left a sleeper with no searcher): every other worker's
// next fork promotes its oldest private fork, and that push wakes a sleeper (fork_stack.hpp,
// "Wake requests"). A worker with no private fork answers at its next fork or not at all.
void worker::request_wakes_cold() noexcept {
    for (unsigned i = 0; i < owner_.size(); ++i)
        if (i != index_) owner_.worker_at(i).request_wake();
}

}  // namespace crew::detail
