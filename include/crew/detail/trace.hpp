// crew/detail/trace.hpp -- the event trace: per-worker rings of fixed-size events, off by default.
//
// Each worker holds a `trace::ring*` that is null unless the pool was built with
// pool_options::trace (or CREW_TRACE). Every hook below is an inline test of that pointer, marked
// unlikely, that calls an out-of-line recorder only when tracing is on: with tracing off a hook
// costs one predictable branch on a field of the worker already in cache.
//
// A ring has a power-of-two number of slots and is written only by its worker; the oldest events
// are overwritten (and counted as dropped) when it is full. Any thread may copy a ring while its
// worker runs (pool::dump_trace): each slot is a small seqlock of relaxed atomics, so a copy
// never sees a half-written event (it skips slots rewritten meanwhile). The session (one per
// pool) owns the rings, the clock calibration and the output path, and writes Chrome
// trace-event JSON (src/trace.cpp, docs/OBSERVABILITY.md, "Trace").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "crew/detail/atomics.hpp"

namespace crew::detail::trace {

// What happened. The numeric values are internal (the JSON uses names).
enum class event_type : std::uint8_t {
    task_begin = 1,  // kind: where the task came from; arg unused
    task_end,
    spawn,           // a task was queued on this worker's deque by spawn/submit
    steal,           // arg: the victim's index; the next task_begin is the stolen task
    injector_pop,    // the next task_begin is the injected task
    park,            // kind: park_kind
    unpark,          // kind: park_kind; arg: ticks since the last wake request (0: unknown)
};

// Where a task came from (task_begin's kind).
enum class task_kind : std::uint8_t { local = 0, stolen = 1, injected = 2 };

// What a worker slept on (park/unpark kind).
enum class park_kind : std::uint8_t { idle = 0, join_wait = 1 };

std::uint64_t steady_ticks() noexcept;  // steady_clock in nanoseconds

// The cheap clock: the time-stamp counter on x86 (calibrated against steady_clock when the trace
// is written), steady_clock's nanoseconds elsewhere.
inline std::uint64_t now_ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();  // no <x86intrin.h> in every user's translation unit
#else
    return steady_ticks();
#endif
}

// One event as read back: time in ticks, what, a kind and an argument.
struct event {
    std::uint64_t ticks;
    event_type type;
    std::uint8_t kind;
    std::uint64_t arg;  // 48 bits
};

class session;
// Writes every session not written yet (registered with std::atexit by the first session).
void write_live_sessions() noexcept;

class ring {
public:
    ring(session& owner, unsigned worker_index, std::size_t capacity);
    ring(const ring&) = delete;
    ring& operator=(const ring&) = delete;

    // The owning worker only.
    void record(event_type type, std::uint8_t kind = 0, std::uint64_t arg = 0) noexcept;
    // The owning worker only: the source of the next task it begins (steal / injector pop).
    void set_next_kind(task_kind k) noexcept { next_kind_ = k; }
    task_kind take_next_kind() noexcept {
        task_kind k = next_kind_;
        next_kind_ = task_kind::local;
        return k;
    }
    std::uint64_t park_start() const noexcept { return park_start_; }
    void set_park_start(std::uint64_t t) noexcept { park_start_ = t; }

    // Any thread: the retained events, oldest first, and how many were overwritten.
    std::vector<event> snapshot(std::uint64_t& dropped) const;
    session& owner() const noexcept { return owner_; }
    std::size_t capacity() const noexcept { return static_cast<std::size_t>(mask_ + 1); }
    unsigned worker_index() const noexcept { return index_; }

private:
    std::vector<event> copy_newest_first(std::uint64_t& head, bool& lapped) const;

    struct slot {
        // seq: 2*(i+1) once event i is complete in this slot, odd while it is being written.
        std_atomics::atomic<std::uint64_t> seq{0};
        std_atomics::atomic<std::uint64_t> ticks{0};
        std_atomics::atomic<std::uint64_t> data{0};
    };
    session& owner_;
    const unsigned index_;
    const std::uint64_t mask_;
    std::unique_ptr<slot[]> slots_;
    // head_: events recorded so far; written by the worker, read by snapshot() (relaxed: the slot
    // seqs, not head_, decide which copies are valid).
    std_atomics::atomic<std::uint64_t> head_{0};
    task_kind next_kind_ = task_kind::local;
    std::uint64_t park_start_ = 0;
};

// The smallest and largest number of events a worker's ring may hold (pool_options::trace_events).
inline constexpr std::size_t min_ring_events = 16;
inline constexpr std::size_t max_ring_events = std::size_t{1} << 24;

class session {
public:
    // Throws std::invalid_argument for a bad capacity, std::system_error when `path` cannot be
    // created for writing (it is created, empty, at once).
    session(std::string path, unsigned workers, std::size_t events_per_worker, std::string name);
    ~session();
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    ring& ring_of(unsigned worker_index) noexcept { return *rings_[worker_index]; }
    const std::string& path() const noexcept { return path_; }

    // Any thread: remember when work was last made visible to sleepers (for wake latency).
    void note_wake() noexcept { last_wake_.store(now_ticks(), std::memory_order_relaxed); }
    std::uint64_t last_wake() const noexcept { return last_wake_.load(std::memory_order_relaxed); }

    // Write the Chrome trace-event JSON of everything retained so far to `path`. Throws
    // std::system_error when the file cannot be written.
    void write(const std::string& path) const;
    // write(path()) for the destructor and process exit: reports a failure on stderr, never throws.
    void write_final() noexcept;
    // The JSON text (write() writes this).
    std::string to_json() const;

private:
    std::string path_;
    std::string name_;
    std::vector<std::unique_ptr<ring>> rings_;
    std::uint64_t start_ticks_;
    std::uint64_t start_ns_;
    std_atomics::atomic<std::uint64_t> last_wake_{0};
    long pid_;              // the process that records; a forked child never writes the copy
    bool written_ = false;  // under the live-session list's lock (src/trace.cpp)
    friend void write_live_sessions() noexcept;
};

// The session for a pool of `workers` workers, or null when tracing is off (resolve_path).
std::unique_ptr<session> open_session(const std::string& option_path, unsigned workers,
                                      std::size_t events_per_worker, const std::string& name);
inline ring* ring_for(session* s, unsigned worker_index) noexcept {
    return s != nullptr ? &s->ring_of(worker_index) : nullptr;
}

// Where a pool's trace goes: `explicit_path` when not empty, else CREW_TRACE (the first pool that
// uses it gets the path as is, the n-th later one "<stem>.<n><ext>"), else "" (tracing off).
std::string resolve_path(const std::string& explicit_path);

// Cold recorders (src/trace.cpp), called only when the ring pointer is set.
void task_begin_cold(ring& r) noexcept;
void park_cold(ring& r, park_kind k) noexcept;
void unpark_cold(ring& r, park_kind k) noexcept;

// ---- hooks: one line each at the call sites in worker.hpp/worker.cpp/registry.hpp ----

inline void task_begin(ring* r) noexcept {
    if (r != nullptr) [[unlikely]] task_begin_cold(*r);
}
inline void task_end(ring* r) noexcept {
    if (r != nullptr) [[unlikely]] r->record(event_type::task_end);
}
inline void spawn(ring* r) noexcept {
    if (r != nullptr) [[unlikely]] r->record(event_type::spawn);
}
inline void steal(ring* r, unsigned victim) noexcept {
    if (r != nullptr) [[unlikely]] {
        r->record(event_type::steal, 0, victim);
        r->set_next_kind(task_kind::stolen);
    }
}
inline void injector_pop(ring* r) noexcept {
    if (r != nullptr) [[unlikely]] {
        r->record(event_type::injector_pop);
        r->set_next_kind(task_kind::injected);
    }
}
inline void park(ring* r, park_kind k = park_kind::idle) noexcept {
    if (r != nullptr) [[unlikely]] park_cold(*r, k);
}
inline void unpark(ring* r, park_kind k = park_kind::idle) noexcept {
    if (r != nullptr) [[unlikely]] unpark_cold(*r, k);
}
inline void wake(ring* r) noexcept {
    if (r != nullptr) [[unlikely]] r->owner().note_wake();
}
inline void wake(session* s) noexcept {
    if (s != nullptr) [[unlikely]] s->note_wake();
}

}  // namespace crew::detail::trace
