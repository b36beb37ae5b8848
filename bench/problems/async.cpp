// async_*: Tokio's rt_multi_threaded benchmark shapes (plus spawn+await, a channel round trip,
// skynet over coroutines and fork-join inside tasks), each written for crew's coroutine tasks, for
// Tokio (bench/peers/tokio) and for Asio (bench/peers/asio). The peers are separate programs:
// crew-bench runs them as subprocesses (one per cell, <reps + 1> reps, the first is the warm-up
// crew-bench drops as it does for every cell), parses their JSON lines and checks their answers.
// A time is one iteration of the shape (e.g. 10,000 spawns and their awaits); "ns/op" divides it by
// the shape's operations. add_async_ratios() puts the side-by-side ratios on the rows afterwards.
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "peers.hpp"

// crew's coroutine API is arriving in pieces (issue 10): each shape's row needs its pieces.
#if __has_include(<crew/async/join_handle.hpp>)
#include <crew/async/join_handle.hpp>
#include <crew/async/task.hpp>
#define CREW_BENCH_HAVE_ASYNC 1
#else
#define CREW_BENCH_HAVE_ASYNC 0
#endif
#if CREW_BENCH_HAVE_ASYNC && __has_include(<crew/async/channel.hpp>)
#include <crew/async/channel.hpp>
#define CREW_BENCH_HAVE_CHANNEL 1
#else
#define CREW_BENCH_HAVE_CHANNEL 0
#endif
// Tokio's ping_pong and chained_spawn use oneshot channels: so does crew's row where crew has them
// (crew::make_oneshot, session 23); a tree without them runs the capacity-1 crew::channel version.
#if CREW_BENCH_HAVE_CHANNEL && __has_include(<crew/async/oneshot.hpp>)
#include <crew/async/oneshot.hpp>
#define CREW_BENCH_HAVE_ONESHOT 1
#else
#define CREW_BENCH_HAVE_ONESHOT 0
#endif
#if CREW_BENCH_HAVE_ASYNC && __has_include(<crew/async/yield.hpp>)
#include <crew/async/yield.hpp>
#define CREW_BENCH_HAVE_YIELD 1
#else
#define CREW_BENCH_HAVE_YIELD 0
#endif
#if CREW_BENCH_HAVE_ASYNC && __has_include(<crew/async/when_all.hpp>)
#include <crew/async/when_all.hpp>
#define CREW_BENCH_HAVE_WHEN_ALL 1
#else
#define CREW_BENCH_HAVE_WHEN_ALL 0
#endif

namespace crew_bench {

namespace {

using u64 = std::uint64_t;

constexpr u64 yields_per_task = 1000;  // yield_many: n tasks x 1,000 yields
constexpr u64 fork_join_tasks = 100;   // fork_join_in_tasks: 100 tasks x fib(n)

u64 fib_serial(u64 n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

// One shape: its size n, how many times one rep runs it, what one iteration counts and answers.
struct shape {
    const char* name;  // problem "async_<name>", and the peers' problem name
    const char* what;
    u64 n_full, n_quick;
    u64 iters_full, iters_quick;
    u64 (*ops)(u64 n);     // operations per iteration (for ns/op)
    u64 (*answer)(u64 n);  // the check value of one iteration
    const char* unit;      // what n counts, for the title
};

u64 same(u64 n) { return n; }

const shape shapes[] = {
    {"spawn_many_local", "n tasks spawned from inside a task, each bumps a counter, all awaited", 10000, 10000, 20, 5,
     same, same, "spawns"},
    {"spawn_many_remote_idle", "n tasks spawned from an outside thread onto an idle runtime, all awaited", 10000,
     10000, 20, 5, same, same, "spawns"},
    {"yield_many", "n tasks, each yields 1,000 times", 200, 200, 5, 1,
     [](u64 n) { return n * yields_per_task; }, [](u64 n) { return n * yields_per_task; }, "tasks x 1000 yields"},
    {"ping_pong", "n concurrent rounds: a task spawns a partner, pings it and awaits the pong (oneshot channels)",
     1000, 1000, 20, 5, same, same, "rounds"},
    {"chained_spawn", "a chain n deep, each task spawns the next (detached); the last one reports (oneshot)", 1000, 1000, 50, 10,
     same, same, "deep"},
    {"spawn_await", "n times: spawn one empty task and await its handle", 10000, 10000, 10, 3, same, same, "ops"},
    {"channel_round_trip", "n round trips between two tasks over capacity-1 channels", 10000, 10000, 5, 2, same, same,
     "round trips"},
    {"coro_skynet", "skynet over tasks: every node is a task, an inner node awaits its 10 children (when_all)",
     1000000, 100000, 1, 1, [](u64 n) { return n + (n - 1) / 9; }, [](u64 n) { return n * (n - 1) / 2; }, "leaves"},
    {"fork_join_in_tasks", "100 concurrent tasks each compute fib(n): crew forks inside the task, Tokio and Asio "
     "run fib serially (no fork-join inside their tasks)", 30, 24, 1, 1, [](u64) { return fork_join_tasks; },
     [](u64 n) { return fork_join_tasks * fib_serial(n); }, "fib"},
};

const shape& find_shape(const std::string& name) {
    for (auto& s : shapes)
        if (name == s.name) return s;
    throw std::invalid_argument("crew-bench: no async shape '" + name + "'");
}

// One measured iteration: verify the answer, turn a rep's total into per-iteration figures.
sample make_sample(const shape& sh, u64 n, u64 iters, double total_ns, u64 check) {
    u64 want = sh.answer(n) * iters;
    if (check != want)
        throw std::runtime_error("WRONG ANSWER: got " + std::to_string(check) + ", want " + std::to_string(want));
    sample s;
    s.seconds = total_ns * 1e-9 / static_cast<double>(iters);
    s.check = 0;  // verified here: the async problems have no serial reference
    s.extras.emplace_back("ns/op", total_ns / static_cast<double>(iters * sh.ops(n)));
    return s;
}

// ---- the peers, as subprocesses ----

std::string peer_path(const char* env, const char* built) {
    const char* e = std::getenv(env);
    return e != nullptr && *e != '\0' ? e : built;
}

bool runnable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

// Runs `path shape threads reps n iters` and returns its reps as samples.
std::vector<sample> run_peer(const std::string& path, const shape& sh, std::size_t threads, int reps, u64 n, u64 iters) {
    std::string cmd = shell_quote(path) + " " + sh.name + " " + std::to_string(threads) + " " + std::to_string(reps) +
                      " " + std::to_string(n) + " " + std::to_string(iters);
    FILE* f = popen(cmd.c_str(), "r");
    if (f == nullptr) throw std::runtime_error("cannot run " + cmd);
    std::vector<sample> out;
    std::string line, error;
    char buf[512];
    while (std::fgets(buf, sizeof buf, f) != nullptr) {
        line += buf;
        if (line.empty() || line.back() != '\n') continue;
        double ns = 0, check = 0;
        if (json_number(line, "ns", ns) && json_number(line, "check", check)) {
            try {
                out.push_back(make_sample(sh, n, iters, ns, static_cast<u64>(check)));
            } catch (const std::exception& e) {
                if (error.empty()) error = e.what();
            }
        }
        line.clear();
    }
    int status = pclose(f);
    if (!error.empty()) throw std::runtime_error(error);
    if (status != 0 || static_cast<int>(out.size()) != reps)
        throw std::runtime_error("peer failed (exit status " + std::to_string(status) + ", " +
                                 std::to_string(out.size()) + " of " + std::to_string(reps) + " lines): " + cmd);
    return out;
}

impl peer_impl(const std::string& name, const std::string& path, const shape& sh, u64 n, u64 iters, int reps) {
    return {name, [=, &sh](std::size_t threads) -> run_fn {
                struct state {
                    std::vector<sample> samples;
                    std::size_t next = 0;
                };
                auto st = std::make_shared<state>();
                return [=, &sh] {
                    if (st->next == st->samples.size()) {
                        st->samples = run_peer(path, sh, threads, reps, n, iters);
                        st->next = 0;
                    }
                    return st->samples[st->next++];
                };
            }};
}

void add_peer(problem& p, std::vector<std::string>& notes, const char* name, const char* env, const char* built,
              const char* absent, const shape& sh, u64 n, u64 iters, int reps) {
    std::string path = peer_path(env, built);
    if (runnable(path)) {
        p.impls.push_back(peer_impl(name, path, sh, n, iters, reps));
        return;
    }
    add_note(notes, path.empty() ? std::string(absent)
                                 : std::string("async_*: the ") + name + " peer " + path +
                                       " is not built or not executable (set " + env + "); its rows are skipped.");
}


// ---- crew's rows: the same shapes on crew's coroutine tasks ----
#if CREW_BENCH_HAVE_ASYNC
namespace crew_async {

using crew::task;

task<void> bump(std::atomic<u64>* counter) {
    counter->fetch_add(1, std::memory_order_relaxed);
    co_return;
}

task<u64> spawn_many_local(u64 n) {
    std::atomic<u64> counter{0};
    std::vector<crew::join_handle<void>> handles;
    handles.reserve(n);
    for (u64 i = 0; i < n; ++i) handles.push_back(crew::spawn(bump(&counter)));
    for (auto& h : handles) co_await std::move(h);
    co_return counter.load();
}

task<void> await_all(std::vector<crew::join_handle<void>> handles) {
    for (auto& h : handles) co_await std::move(h);
}

// From this outside thread, like the peers: n spawns, then block until all finished.
u64 spawn_many_remote_idle(crew::pool& pool, u64 n) {
    std::atomic<u64> counter{0};
    std::vector<crew::join_handle<void>> handles;
    handles.reserve(n);
    for (u64 i = 0; i < n; ++i) handles.push_back(pool.spawn(bump(&counter)));
    pool.block_on(await_all(std::move(handles)));
    return counter.load();
}

template <class T>
task<u64> sum_of(std::vector<crew::join_handle<T>> handles) {
    u64 sum = 0;
    for (auto& h : handles) sum += co_await std::move(h);
    co_return sum;
}

#if CREW_BENCH_HAVE_YIELD
task<u64> yielder() {
    for (u64 i = 0; i < yields_per_task; ++i) co_await crew::yield_now();
    co_return yields_per_task;
}

task<u64> yield_many(u64 n) {
    std::vector<crew::join_handle<u64>> handles;
    handles.reserve(n);
    for (u64 i = 0; i < n; ++i) handles.push_back(crew::spawn(yielder()));
    co_return co_await sum_of(std::move(handles));
}
#endif

#if CREW_BENCH_HAVE_ONESHOT
task<void> pong(crew::oneshot_receiver<u64> in, crew::oneshot_sender<u64> out) {
    std::optional<u64> v = co_await std::move(in);
    out.send(*v);
}

task<u64> ping_round() {
    auto [ping_tx, ping_rx] = crew::make_oneshot<u64>();
    auto [pong_tx, pong_rx] = crew::make_oneshot<u64>();
    auto partner = crew::spawn(pong(std::move(ping_rx), std::move(pong_tx)));
    ping_tx.send(1);
    std::optional<u64> v = co_await std::move(pong_rx);
    co_await std::move(partner);
    co_return *v;
}
#elif CREW_BENCH_HAVE_CHANNEL
task<void> pong(crew::channel<u64>* in, crew::channel<u64>* out) {
    auto v = co_await in->receive();
    co_await out->send(*v);
}

task<u64> ping_round() {
    crew::channel<u64> ping{1}, back{1};
    auto partner = crew::spawn(pong(&ping, &back));
    co_await ping.send(1);
    auto v = co_await back.receive();
    co_await std::move(partner);
    co_return *v;
}

#endif

#if CREW_BENCH_HAVE_CHANNEL
task<u64> ping_pong(u64 n) {
    std::vector<crew::join_handle<u64>> handles;
    handles.reserve(n);
    for (u64 i = 0; i < n; ++i) handles.push_back(crew::spawn(ping_round()));
    co_return co_await sum_of(std::move(handles));
}

#if CREW_BENCH_HAVE_ONESHOT
task<void> chain(crew::oneshot_sender<u64> done, u64 left, u64 depth) {
    if (left == 0)
        done.send(depth);
    else
        (void)crew::spawn(chain(std::move(done), left - 1, depth));  // dropping the handle detaches
    co_return;
}

task<u64> chained_spawn(u64 n) {
    auto [done, result] = crew::make_oneshot<u64>();
    (void)crew::spawn(chain(std::move(done), n, n));
    auto v = co_await std::move(result);
    co_return *v;
}
#else
task<void> chain(std::shared_ptr<crew::channel<u64>> done, u64 left, u64 depth) {
    if (left == 0)
        co_await done->send(depth);
    else
        (void)crew::spawn(chain(std::move(done), left - 1, depth));  // dropping the handle detaches
}

task<u64> chained_spawn(u64 n) {
    auto done = std::make_shared<crew::channel<u64>>(1);
    (void)crew::spawn(chain(done, n, n));
    auto v = co_await done->receive();
    co_return *v;
}
#endif

task<void> echo(crew::channel<u64>* in, crew::channel<u64>* out) {
    while (auto v = co_await in->receive()) co_await out->send(*v);
}

task<u64> channel_round_trip(u64 n) {
    crew::channel<u64> to_echo{1}, from_echo{1};
    auto partner = crew::spawn(echo(&to_echo, &from_echo));
    u64 sum = 0;
    for (u64 i = 0; i < n; ++i) {
        co_await to_echo.send(1);
        sum += *co_await from_echo.receive();
    }
    to_echo.close();
    co_await std::move(partner);
    co_return sum;
}
#endif

task<u64> one() { co_return 1; }

task<u64> spawn_await(u64 n) {
    u64 sum = 0;
    for (u64 i = 0; i < n; ++i) sum += co_await crew::spawn(one());
    co_return sum;
}

#if CREW_BENCH_HAVE_WHEN_ALL
task<u64> skynet(u64 num, u64 size) {
    if (size == 1) co_return num;
    u64 sub = size / 10;
    std::vector<task<u64>> children;
    children.reserve(10);
    for (u64 i = 0; i < 10; ++i) children.push_back(skynet(num + i * sub, sub));
    u64 sum = 0;
    for (u64 v : co_await crew::when_all(std::move(children))) sum += v;
    co_return sum;
}

task<u64> coro_skynet(u64 n) { co_return co_await skynet(0, n); }
#endif

u64 fib_join(u64 n) {  // one fork per call, no cutoff (as the fib problem)
    if (n < 2) return n;
    u64 a = 0, b = 0;
    crew::join([&] { a = fib_join(n - 1); }, [&] { b = fib_join(n - 2); });
    return a + b;
}

task<u64> fib_task(u64 n) { co_return fib_join(n); }

task<u64> fork_join_in_tasks(u64 n) {
    std::vector<crew::join_handle<u64>> handles;
    handles.reserve(fork_join_tasks);
    for (u64 i = 0; i < fork_join_tasks; ++i) handles.push_back(crew::spawn(fib_task(n)));
    co_return co_await sum_of(std::move(handles));
}

using body_fn = task<u64> (*)(u64);

body_fn body_of(const std::string& name) {
    if (name == "spawn_many_local") return spawn_many_local;
    if (name == "spawn_await") return spawn_await;
#if CREW_BENCH_HAVE_YIELD
    if (name == "yield_many") return yield_many;
#endif
#if CREW_BENCH_HAVE_WHEN_ALL
    if (name == "coro_skynet") return coro_skynet;
#endif
    if (name == "fork_join_in_tasks") return fork_join_in_tasks;
#if CREW_BENCH_HAVE_CHANNEL
    if (name == "ping_pong") return ping_pong;
    if (name == "chained_spawn") return chained_spawn;
    if (name == "channel_round_trip") return channel_round_trip;
#endif
    return nullptr;
}

}  // namespace crew_async

// crew's row for a shape, or a note when the shape needs something crew does not have yet.
void add_crew(problem& p, std::vector<std::string>& notes, const shape& sh, u64 n, u64 iters) {
    bool remote = std::string(sh.name) == "spawn_many_remote_idle";
    crew_async::body_fn body = crew_async::body_of(sh.name);
    if (!remote && body == nullptr) {
        add_note(notes, std::string("async_") + sh.name + ": crew's row needs a piece of crew's async API (channel, yield_now "
                        "or when_all) not available when crew-bench was built: skipped.");
        return;
    }
    p.impls.push_back({"crew", [=, &sh](std::size_t threads) -> run_fn {
                           auto pool = std::make_shared<crew::pool>(threads);
                           return [=, &sh] {
                               auto t0 = clock::now();
                               u64 check = 0;
                               for (u64 i = 0; i < iters; ++i)
                                   check += remote ? crew_async::spawn_many_remote_idle(*pool, n)
                                                   : pool->block_on(body(n));
                               return make_sample(sh, n, iters, seconds_since(t0) * 1e9, check);
                           };
                       }});
}
#endif

}  // namespace

problem make_async(const config& cfg, std::vector<std::string>& notes, const std::string& name) {
    const shape& sh = find_shape(name);
    u64 n = cfg.quick ? sh.n_quick : sh.n_full;
    u64 iters = cfg.quick ? sh.iters_quick : sh.iters_full;
    problem p;
    p.name = std::string("async_") + sh.name;
    p.title = p.name + " (" + std::to_string(n) + " " + sh.unit + ")";
    if (n != sh.n_full)
        p.size_note = "quick mode: n = " + std::to_string(n) + " (full: " + std::to_string(sh.n_full) + ")";
    p.what = sh.what;
    int reps = cfg.reps + 1;  // the peer's first rep is the warm-up crew-bench drops
#if CREW_BENCH_HAVE_ASYNC
    add_crew(p, notes, sh, n, iters);
#else
    add_note(notes, "async_*: <crew/async/join_handle.hpp> was not available when crew-bench was built: crew's rows are skipped.");
#endif
#ifdef CREW_BENCH_TOKIO_PEER
    add_peer(p, notes, "tokio", "CREW_BENCH_TOKIO_PEER", CREW_BENCH_TOKIO_PEER, "", sh, n, iters, reps);
#else
    add_peer(p, notes, "tokio", "CREW_BENCH_TOKIO_PEER", "",
             "async_*: the Tokio peer was not built (needs cargo and librust-tokio-dev, and CREW_BENCH_PEERS_RUST=ON; "
             "or set CREW_BENCH_TOKIO_PEER to a built crew-tokio-peer): its rows are skipped.",
             sh, n, iters, reps);
#endif
#ifdef CREW_BENCH_ASIO_PEER
    add_peer(p, notes, "asio", "CREW_BENCH_ASIO_PEER", CREW_BENCH_ASIO_PEER, "", sh, n, iters, reps);
#else
    add_peer(p, notes, "asio", "CREW_BENCH_ASIO_PEER", "",
             "async_*: the Asio peer was not built (needs libasio-dev): its rows are skipped.", sh, n, iters, reps);
#endif
    return p;
}

}  // namespace crew_bench

// ---- ratios and the targets, once every cell ran ----
namespace crew_bench {

namespace {

cell* async_cell(results& r, const std::string& problem, const std::string& impl, std::size_t threads) {
    for (auto& c : r.cells)
        if (c.problem == problem && c.impl == impl && c.threads == threads && c.error.empty() && c.median > 0) return &c;
    return nullptr;
}

double ns_per_op(const cell& c) {
    for (auto& [k, v] : c.extras)
        if (k == "ns/op") return v;
    return 0;
}

// Issue 10's target: crew at least `need` times faster than `peer` (and at most max_ns per op).
void async_target(results& r, const char* shape_name, const char* peer, double need, double max_ns, std::size_t t) {
    std::string p = std::string("async_") + shape_name;
    target_check tc;
    tc.name = p + " at " + std::to_string(t) + " thread" + (t == 1 ? "" : "s") + ": crew >= " + format_num(need, 1) +
              "x faster than " + peer + (max_ns > 0 ? " and <= " + format_num(max_ns, 0) + " ns/op" : "");
    cell* c = async_cell(r, p, "crew", t);
    cell* o = async_cell(r, p, peer, t);
    if (c != nullptr && o != nullptr) {
        tc.evaluated = true;
        double ratio = o->median / c->median;
        tc.met = ratio >= need && (max_ns <= 0 || ns_per_op(*c) <= max_ns);
        tc.detail = "crew " + format_num(ns_per_op(*c), 1) + " ns/op, " + peer + " " + format_num(ns_per_op(*o), 1) +
                    " ns/op: " + format_num(ratio, 2) + "x";
    }
    r.targets.push_back(tc);
}

}  // namespace

void add_async_ratios(results& r) {
    bool any = false;
    for (auto& c : r.cells) {
        if (c.problem.rfind("async_", 0) != 0 || !c.error.empty() || c.median <= 0) continue;
        any = true;
        if (c.impl == "crew") {
            for (const char* peer : {"tokio", "asio"})
                if (cell* o = async_cell(r, c.problem, peer, c.threads))
                    c.extras.emplace_back(std::string(peer) + "/crew", o->median / c.median);
        } else if (c.impl == "asio") {
            if (cell* o = async_cell(r, c.problem, "tokio", c.threads))
                c.extras.emplace_back("asio/tokio", c.median / o->median);
        }
    }
    if (!any) return;
    for (std::size_t t : r.cfg.threads) {
        if (t > 2) continue;
        async_target(r, "spawn_await", "tokio", 2.5, 100, t);
        async_target(r, "spawn_await", "asio", 2.5, 100, t);
        async_target(r, "spawn_many_local", "tokio", 2.5, 0, t);
        async_target(r, "yield_many", "tokio", 2.0, 30, t);
        async_target(r, "ping_pong", "tokio", 2.5, 0, t);
        async_target(r, "chained_spawn", "tokio", 2.5, 0, t);
        async_target(r, "channel_round_trip", "asio", 2.5, 0, t);
    }
}

}  // namespace crew_bench
