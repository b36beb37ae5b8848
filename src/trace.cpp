// The event trace: recording into the per-worker rings, copying them out, and writing Chrome
// trace-event JSON (docs/OBSERVABILITY.md, "Trace" describes the output).
#include "crew/detail/trace.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace crew::detail::trace {

namespace {

constexpr std::uint64_t arg_mask = (std::uint64_t{1} << 48) - 1;

// Sessions whose trace has not been written yet; written by the atexit handler for pools that are
// never destroyed (the default pool). Leaked on purpose: usable during static destruction.
std::mutex& live_mutex() {
    static auto* m = new std::mutex;
    return *m;
}
std::vector<session*>& live_sessions() {
    static auto* v = new std::vector<session*>;
    return *v;
}

std::size_t round_capacity(std::size_t events) {
    if (events < min_ring_events || events > max_ring_events)
        throw std::invalid_argument("crew::pool: pool_options::trace_events must be from " +
                                    std::to_string(min_ring_events) + " to " + std::to_string(max_ring_events) +
                                    ", got " + std::to_string(events));
    std::size_t c = min_ring_events;
    while (c < events) c <<= 1;
    return c;
}

void append_escaped(std::string& out, const std::string& text) {
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
            out += buf;
        } else {
            out += c;
        }
    }
}

void appendf(std::string& out, const char* format, auto... args) {
    char buf[256];
    int n = std::snprintf(buf, sizeof buf, format, args...);
    if (n > 0) out.append(buf, static_cast<std::size_t>(n) < sizeof buf ? static_cast<std::size_t>(n) : sizeof buf - 1);
}

const char* task_name(std::uint8_t kind) {
    switch (static_cast<task_kind>(kind)) {
    case task_kind::stolen: return "stolen task";
    case task_kind::injected: return "injected task";
    default: return "local task";
    }
}

const char* park_name(std::uint8_t kind) {
    return static_cast<park_kind>(kind) == park_kind::join_wait ? "join wait" : "idle";
}

// Ticks to microseconds since the session start.
struct timebase {
    std::uint64_t start_ticks;
    double ns_per_tick;
    double us(std::uint64_t t) const {
        return t >= start_ticks ? static_cast<double>(t - start_ticks) * ns_per_tick / 1000.0 : 0.0;
    }
};

struct open_slice {
    std::uint64_t ticks;
    std::uint8_t kind;
    std::uint64_t arg;
};

// One worker's events as JSON: tasks and parks as complete ("X") slices (open ones as "B"),
// steals as flow arrows from the victim's lane to this one, pops and spawns as instants.
void append_worker(std::string& out, unsigned index, const std::vector<event>& events, const timebase& tb,
                   std::uint64_t& next_flow) {
    const unsigned tid = index + 1;
    std::vector<open_slice> tasks, parks;
    auto slice = [&](const char* name, const char* cat, const open_slice& b, std::uint64_t end, const char* extra) {
        appendf(out, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"name\":\"%s\",\"cat\":\"%s\",\"ts\":%.3f,\"dur\":%.3f",
                tid, name, cat, tb.us(b.ticks), tb.us(end) - tb.us(b.ticks));
        out += extra;
        out += '}';
    };
    for (const event& e : events) {
        const double ts = tb.us(e.ticks);
        switch (e.type) {
        case event_type::task_begin: tasks.push_back({e.ticks, e.kind, 0}); break;
        case event_type::task_end:
            if (tasks.empty()) break;  // its begin was overwritten
            slice(task_name(tasks.back().kind), "task", tasks.back(), e.ticks, "");
            tasks.pop_back();
            break;
        case event_type::park: parks.push_back({e.ticks, e.kind, 0}); break;
        case event_type::unpark: {
            if (parks.empty()) break;
            char extra[96];
            std::snprintf(extra, sizeof extra, ",\"args\":{\"on\":\"%s\",\"wake_latency_ns\":%.0f}",
                          park_name(parks.back().kind), static_cast<double>(e.arg) * tb.ns_per_tick);
            slice("parked", "park", parks.back(), e.ticks, extra);
            parks.pop_back();
            break;
        }
        case event_type::steal: {
            const std::uint64_t id = next_flow++;
            appendf(out, ",\n{\"ph\":\"s\",\"pid\":1,\"tid\":%u,\"name\":\"steal\",\"cat\":\"steal\",\"id\":%" PRIu64
                         ",\"ts\":%.3f}",
                    static_cast<unsigned>(e.arg) + 1, id, ts);
            appendf(out, ",\n{\"ph\":\"f\",\"pid\":1,\"tid\":%u,\"name\":\"steal\",\"cat\":\"steal\",\"id\":%" PRIu64
                         ",\"ts\":%.3f,\"args\":{\"victim\":%u}}",
                    tid, id, ts, static_cast<unsigned>(e.arg));
            break;
        }
        case event_type::injector_pop:
        case event_type::spawn:
            appendf(out, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%u,\"name\":\"%s\",\"cat\":\"queue\",\"ts\":%.3f}",
                    tid, e.type == event_type::spawn ? "spawn" : "injector pop", ts);
            break;
        }
    }
    // Still running (or still asleep) when the trace was taken: begin events without an end.
    for (const open_slice& b : tasks)
        appendf(out, ",\n{\"ph\":\"B\",\"pid\":1,\"tid\":%u,\"name\":\"%s\",\"cat\":\"task\",\"ts\":%.3f}", tid,
                task_name(b.kind), tb.us(b.ticks));
    for (const open_slice& b : parks)
        appendf(out, ",\n{\"ph\":\"B\",\"pid\":1,\"tid\":%u,\"name\":\"parked\",\"cat\":\"park\",\"ts\":%.3f,"
                     "\"args\":{\"on\":\"%s\"}}",
                tid, tb.us(b.ticks), park_name(b.kind));
}

}  // namespace

std::uint64_t steady_ticks() noexcept {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

// ---- ring ----

ring::ring(session& owner, unsigned worker_index, std::size_t capacity)
    : owner_(owner), index_(worker_index), mask_(capacity - 1), slots_(new slot[capacity]) {}

void ring::record(event_type type, std::uint8_t kind, std::uint64_t arg) noexcept {
    const std::uint64_t i = head_.load(std::memory_order_relaxed);  // only this thread writes it
    slot& s = slots_[i & mask_];
    s.seq.store(2 * i + 1, std::memory_order_relaxed);
    // release fence: partner of snapshot()'s acquire fence; a copy that reads the data stored below
    // then re-reads seq and sees this odd value (or later), so it drops the torn copy.
    std_atomics::fence(std::memory_order_release);
    s.ticks.store(now_ticks(), std::memory_order_relaxed);
    s.data.store(static_cast<std::uint64_t>(type) | std::uint64_t{kind} << 8 | (arg & arg_mask) << 16,
                 std::memory_order_relaxed);
    // release: pairs with snapshot()'s acquire load of seq; a copy that sees 2i+2 sees this event's data.
    s.seq.store(2 * i + 2, std::memory_order_release);
    // release: pairs with snapshot()'s acquire load of head_; events below it are complete.
    head_.store(i + 1, std::memory_order_release);
}

std::vector<event> ring::snapshot(std::uint64_t& dropped) const {
    // A copy racing a fast worker may be lapped (the worker rewrites the slots not yet copied, e.g.
    // while this thread is preempted): try again a few times and keep the fullest copy.
    std::vector<event> best;
    std::uint64_t best_head = 0;
    for (int attempt = 0; attempt < 8; ++attempt) {
        std::uint64_t head = 0;
        bool lapped = false;
        std::vector<event> out = copy_newest_first(head, lapped);
        if (attempt == 0 || out.size() >= best.size()) {
            best = std::move(out);
            best_head = head;
        }
        if (!lapped) break;
    }
    dropped = best_head - best.size();
    return best;
}

std::vector<event> ring::copy_newest_first(std::uint64_t& head_out, bool& lapped) const {
    const std::uint64_t capacity = mask_ + 1;
    std::vector<event> out;
    out.reserve(static_cast<std::size_t>(capacity));  // before reading head_: the copy must be quick
    const std::uint64_t head = head_.load(std::memory_order_acquire);  // partner: record()'s last store
    const std::uint64_t first = head > capacity ? head - capacity : 0;
    head_out = head;
    lapped = false;
    // Newest first: the worker overwrites the oldest slots next, so a copy racing it loses only
    // the oldest events (from the first overwritten slot down, all are newer events' slots).
    for (std::uint64_t j = head; j-- > first;) {
        const slot& s = slots_[j & mask_];
        const std::uint64_t seq = s.seq.load(std::memory_order_acquire);  // partner: record()'s seq release
        const std::uint64_t ticks = s.ticks.load(std::memory_order_relaxed);
        const std::uint64_t data = s.data.load(std::memory_order_relaxed);
        std_atomics::fence(std::memory_order_acquire);  // partner: record()'s release fence
        // Overwritten by a newer event (or being overwritten, or rewritten while copied).
        if (seq != 2 * j + 2 || s.seq.load(std::memory_order_relaxed) != seq) {
            lapped = true;
            break;
        }
        out.push_back({ticks, static_cast<event_type>(data & 0xff), static_cast<std::uint8_t>(data >> 8), data >> 16});
    }
    std::reverse(out.begin(), out.end());
    return out;
}

// ---- cold recorders ----

void task_begin_cold(ring& r) noexcept { r.record(event_type::task_begin, static_cast<std::uint8_t>(r.take_next_kind())); }

void park_cold(ring& r, park_kind k) noexcept {
    r.record(event_type::park, static_cast<std::uint8_t>(k));
    r.set_park_start(now_ticks());
}

void unpark_cold(ring& r, park_kind k) noexcept {
    const std::uint64_t now = now_ticks();
    const std::uint64_t wake = r.owner().last_wake();
    // Wake latency: from the last wake request made while this worker slept to now. Unknown (0)
    // when the worker slept on a join (woken by the thief's completion, which is not recorded).
    const std::uint64_t latency = k == park_kind::idle && wake >= r.park_start() && now >= wake ? now - wake : 0;
    r.record(event_type::unpark, static_cast<std::uint8_t>(k), latency);
}

// ---- session ----

session::session(std::string path, unsigned workers, std::size_t events_per_worker, std::string name)
    : path_(std::move(path)), name_(std::move(name)), pid_(static_cast<long>(::getpid())) {
    const std::size_t capacity = round_capacity(events_per_worker);
    if (std::FILE* f = std::fopen(path_.c_str(), "w")) {
        std::fclose(f);
    } else {
        throw std::system_error(errno, std::generic_category(), "crew::pool: cannot create the trace file " + path_);
    }
    rings_.reserve(workers);
    for (unsigned i = 0; i < workers; ++i) rings_.push_back(std::make_unique<ring>(*this, i, capacity));
    start_ns_ = steady_ticks();
    start_ticks_ = now_ticks();
    static std::once_flag at_exit_registered;
    std::call_once(at_exit_registered, [] { std::atexit([] { write_live_sessions(); }); });
    std::lock_guard lock(live_mutex());
    live_sessions().push_back(this);
}

session::~session() {
    bool write_now = false;
    {
        std::lock_guard lock(live_mutex());
        auto& v = live_sessions();
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (*it == this) {
                v.erase(it);
                break;
            }
        }
        write_now = !written_;
        written_ = true;
    }
    if (write_now) write_final();
}

void write_live_sessions() noexcept {
    std::lock_guard lock(live_mutex());
    for (session* s : live_sessions()) {
        if (s->written_) continue;
        s->written_ = true;
        s->write_final();
    }
}

std::string session::to_json() const {
    // Calibrate the tick clock against steady_clock over the session's life so far.
    const std::uint64_t end_ticks = now_ticks(), end_ns = steady_ticks();
    timebase tb{start_ticks_, 1.0};
    if (end_ticks > start_ticks_ && end_ns > start_ns_)
        tb.ns_per_tick = static_cast<double>(end_ns - start_ns_) / static_cast<double>(end_ticks - start_ticks_);
    std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"crew pool ";
    append_escaped(out, name_);
    out += "\"}}";
    std::vector<std::uint64_t> dropped(rings_.size());
    std::vector<std::size_t> retained(rings_.size());
    std::uint64_t next_flow = 1;
    for (unsigned i = 0; i < rings_.size(); ++i) {
        appendf(out, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"", i + 1);
        append_escaped(out, name_ + "-" + std::to_string(i));
        appendf(out, "\"}},\n{\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%u}}",
                i + 1, i);
        std::vector<event> events = rings_[i]->snapshot(dropped[i]);
        retained[i] = events.size();
        append_worker(out, i, events, tb, next_flow);
    }
    appendf(out, "\n],\n\"otherData\":{\"crew_trace_version\":1,\"workers\":%zu,\"ns_per_tick\":%.6f,\"duration_us\":%.3f,"
                 "\"ring_events\":%zu,\"dropped_events\":[",
            rings_.size(), tb.ns_per_tick, tb.us(end_ticks), rings_.empty() ? std::size_t{0} : rings_[0]->capacity());
    for (std::size_t i = 0; i < dropped.size(); ++i) appendf(out, "%s%" PRIu64, i ? "," : "", dropped[i]);
    out += "],\"retained_events\":[";
    for (std::size_t i = 0; i < retained.size(); ++i) appendf(out, "%s%zu", i ? "," : "", retained[i]);
    out += "]}}\n";
    return out;
}

void session::write(const std::string& path) const {
    const std::string text = to_json();
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) throw std::system_error(errno, std::generic_category(), "crew: cannot write the trace to " + path);
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const int saved = errno;
    if (std::fclose(f) != 0 || !ok)
        throw std::system_error(ok ? errno : saved, std::generic_category(), "crew: cannot write the trace to " + path);
}

void session::write_final() noexcept {
    if (static_cast<long>(::getpid()) != pid_) return;  // a forked child's copy: the parent writes it
    try {
        write(path_);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "crew: %s\n", e.what());
    } catch (...) {
        std::fputs("crew: the trace could not be written\n", stderr);
    }
}

// ---- configuration ----

std::string resolve_path(const std::string& explicit_path) {
    if (!explicit_path.empty()) return explicit_path;
    const char* env = std::getenv("CREW_TRACE");
    if (env == nullptr || *env == '\0') return {};
    std::string path(env);
    // How many pools took this path so far (per path: a program that changes CREW_TRACE starts over).
    static auto* taken = new std::map<std::string, unsigned>;  // leaked: pools may outlive statics
    unsigned n;
    {
        std::lock_guard lock(live_mutex());
        n = (*taken)[path]++;
    }
    if (n == 0) return path;
    const std::size_t slash = path.find_last_of('/');
    std::size_t dot = path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) dot = path.size();
    return path.substr(0, dot) + "." + std::to_string(n) + path.substr(dot);
}

std::unique_ptr<session> open_session(const std::string& option_path, unsigned workers,
                                      std::size_t events_per_worker, const std::string& name) {
    (void)round_capacity(events_per_worker);  // checked even when tracing is off
    std::string path = resolve_path(option_path);
    if (path.empty()) return nullptr;
    return std::make_unique<session>(std::move(path), workers, events_per_worker, name);
}

}  // namespace crew::detail::trace
