// tcp_echo_*: TCP echo over loopback, client and server in one runtime (the public io_socket_st
// shape), on crew::net, on Tokio (bench/peers/tokio/src/io.rs) and on Asio
// (bench/peers/asio/io_shapes.hpp). 64-byte messages; each connection makes its share of the
// requests one round trip after the other:
//   tcp_echo_pingpong    20 connections, 100,000 requests in all
//   tcp_echo_throughput  100 connections, 100,000 requests in all
// A time is one run of the shape (connections set up, all requests, connections closed); the rows
// carry round trips per second and the round-trip latency p50/p99. add_net_ratios() adds the
// peer/crew ratios and the target (crew's round trips/s >= the faster peer's, p99 no worse).
//
// The peers run as subprocesses as for the async_* problems, with the protocol
//   <peer> <problem> <threads> <reps> <n> <iters>  ->  one JSON line per rep with "ns", "check",
//   "p50_ns", "p99_ns", "spread_ns"
// add_io_peers() (harness.hpp) is shared with the timer_* problems (bench/problems/timer_peers.cpp).
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "peers.hpp"

#if __has_include(<crew/net.hpp>) && __has_include(<crew/async/detail/io_registration.hpp>)
#include <crew/net.hpp>
#define CREW_BENCH_HAVE_NET 1
#else
#define CREW_BENCH_HAVE_NET 0
#endif

namespace crew_bench {

namespace {

using u64 = std::uint64_t;

struct net_shape {
    const char* name;
    const char* what;
    u64 conns;
    u64 n_full, n_quick;
};

const net_shape net_shapes[] = {
    {"tcp_echo_pingpong", "20 loopback connections, 100,000 echo round trips of 64 bytes in all, client and server "
     "in one runtime (io_socket_st)", 20, 100000, 10000},
    {"tcp_echo_throughput", "100 loopback connections, 100,000 echo round trips of 64 bytes in all, client and "
     "server in one runtime", 100, 100000, 10000},
};

// ---- the peers, as subprocesses ----

std::vector<sample> run_io_peer(const std::string& path, const io_peer_shape& sh, std::size_t threads, int reps) {
    const std::string cmd = shell_quote(path) + " " + sh.name + " " + std::to_string(threads) + " " + std::to_string(reps) +
                            " " + std::to_string(sh.n) + " " + std::to_string(sh.iters);
    FILE* f = popen(cmd.c_str(), "r");
    if (f == nullptr) throw std::runtime_error("cannot run " + cmd);
    std::vector<sample> out;
    std::string line, error;
    char buf[512];
    while (std::fgets(buf, sizeof buf, f) != nullptr) {
        line += buf;
        if (line.back() != '\n') continue;
        double ns = 0, check = 0;
        if (json_number(line, "ns", ns) && json_number(line, "check", check)) {
            if (static_cast<u64>(check) != sh.check && error.empty())
                error = "WRONG ANSWER: got " + std::to_string(static_cast<u64>(check)) + ", want " + std::to_string(sh.check);
            sample s;
            s.seconds = ns * 1e-9;
            for (const auto& [key, label, scale] : sh.figures) {
                double v = 0;
                if (json_number(line, key.c_str(), v)) s.extras.emplace_back(label, v * scale);
            }
            double t = 0;
            if (!sh.time_key.empty() && json_number(line, sh.time_key.c_str(), t)) s.seconds = t * 1e-9;
            if (sh.per_second_label != nullptr) s.extras.emplace_back(sh.per_second_label, static_cast<double>(sh.check) / s.seconds);
            out.push_back(std::move(s));
        }
        line.clear();
    }
    const int status = pclose(f);
    if (!error.empty()) throw std::runtime_error(error);
    if (status != 0 || static_cast<int>(out.size()) != reps)
        throw std::runtime_error("peer failed (exit status " + std::to_string(status) + ", " + std::to_string(out.size()) +
                                 " of " + std::to_string(reps) + " lines): " + cmd);
    return out;
}

impl io_peer_impl(const std::string& name, const std::string& path, const io_peer_shape& sh, int reps) {
    return {name, [=](std::size_t threads) -> run_fn {
                struct state {
                    std::vector<sample> samples;
                    std::size_t next = 0;
                };
                auto st = std::make_shared<state>();
                return [=] {
                    if (st->next == st->samples.size()) {
                        st->samples = run_io_peer(path, sh, threads, reps);
                        st->next = 0;
                    }
                    return st->samples[st->next++];
                };
            }};
}

void add_one_io_peer(problem& p, std::vector<std::string>& notes, const char* name, const char* env, const char* built,
                     const io_peer_shape& sh, int reps) {
    const char* e = std::getenv(env);
    const std::string path = e != nullptr && *e != '\0' ? e : built;
    if (!path.empty() && access(path.c_str(), X_OK) == 0) {
        p.impls.push_back(io_peer_impl(name, path, sh, reps));
        return;
    }
    add_note(notes, std::string(sh.name) + ": the " + name + " peer " + (path.empty() ? "was not built" : path + " is not executable") +
                        " (set " + env + "); its row is skipped.");
}

#if CREW_BENCH_HAVE_NET
// ---- crew's rows ----
using crew::net::tcp_stream;
constexpr std::size_t message = 64;

double percentile(std::vector<u64>& v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return static_cast<double>(v[static_cast<std::size_t>(static_cast<double>(v.size() - 1) * p)]);
}


crew::task<void> echo(tcp_stream s) {
    std::vector<std::byte> buf(4096);
    try {
        for (;;) {
            const std::size_t n = co_await s.read_some(buf);
            if (n == 0) break;
            co_await s.write_all(std::span(buf).first(n));
        }
    } catch (const std::system_error&) {
    }
}

crew::task<std::vector<u64>> client(crew::net::endpoint at, u64 id, u64 rounds) {
    tcp_stream s = co_await tcp_stream::connect(at);
    std::vector<u64> lat;
    lat.reserve(rounds);
    std::byte msg[message], back[message];
    for (u64 r = 0; r < rounds; ++r) {
        for (std::size_t i = 0; i < message; ++i) msg[i] = static_cast<std::byte>(id * 31 + r + i);
        const auto t0 = clock::now();
        co_await s.write_all(msg);
        std::size_t have = 0;
        while (have < message) {
            const std::size_t k = co_await s.read_some(std::span(back).subspan(have));
            if (k == 0) throw std::runtime_error("tcp_echo: end of stream before the echo");
            have += k;
        }
        lat.push_back(static_cast<u64>(std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - t0).count()));
        if (!std::equal(msg, msg + message, back)) throw std::runtime_error("tcp_echo: echo mismatch");
    }
    co_return lat;
}

crew::task<std::vector<u64>> tcp_echo(u64 n, u64 conns) {
    auto l = crew::net::tcp_listener::bind(crew::net::endpoint::loopback(0));
    const auto at = l.local_endpoint();
    auto server = crew::spawn([](crew::net::tcp_listener& l, u64 conns) -> crew::task<void> {
        std::vector<crew::join_handle<void>> hs;
        for (u64 i = 0; i < conns; ++i) hs.push_back(crew::spawn(echo(co_await l.accept())));
        for (auto& h : hs) co_await h;
    }(l, conns));
    std::vector<crew::join_handle<std::vector<u64>>> clients;
    for (u64 c = 0; c < conns; ++c) clients.push_back(crew::spawn(client(at, c, n / conns + (c < n % conns ? 1 : 0))));
    std::vector<u64> all;
    all.reserve(n);
    for (auto& h : clients) {
        auto v = co_await h;
        all.insert(all.end(), v.begin(), v.end());
    }
    co_await server;
    co_return all;
}

// CREW_BENCH_NET_METRICS=1: after each crew run, one line on stderr with the tail without each
// connection's first round trip (connection set-up) and the pool's counters for the run (the
// session-5 p99 investigation in docs/BENCHMARKS.md).
void print_net_diagnostics(const std::vector<u64>& lat, u64 n, u64 conns, const crew::pool_metrics& m) {
    std::vector<u64> later, all = lat;
    std::size_t at = 0;
    for (u64 c = 0; c < conns; ++c) {
        const u64 rounds = n / conns + (c < n % conns ? 1 : 0);
        for (u64 r = 1; r < rounds; ++r) later.push_back(lat[at + r]);
        at += rounds;
    }
    const crew::worker_metrics t = m.total();
    std::fprintf(stderr,
                 "net-diag: p50 %.0f p99 %.0f p99.9 %.0f max %.0f us; without first rt p99 %.0f us; runs %llu "
                 "lifo %llu steals %llu parks %llu budget_yields %llu overflows %llu\n",
                 percentile(all, 0.5) / 1e3, percentile(all, 0.99) / 1e3, percentile(all, 0.999) / 1e3,
                 percentile(all, 1.0) / 1e3, percentile(later, 0.99) / 1e3, (unsigned long long)t.async_tasks_run,
                 (unsigned long long)t.lifo_hits, (unsigned long long)t.steals, (unsigned long long)t.parks,
                 (unsigned long long)t.budget_yields, (unsigned long long)t.ring_overflows);
    std::fprintf(stderr, "net-diag: per worker (coroutine runs, steals, schedule-latency p50/p99 <= us):");
    for (const auto& w : m.workers)
        std::fprintf(stderr, " [%llu, %llu, %.0f/%.0f]", (unsigned long long)w.async_tasks_run, (unsigned long long)w.steals,
                     static_cast<double>(w.schedule_latency.quantile_upper_bound(0.5).count()) / 1e3,
                     static_cast<double>(w.schedule_latency.quantile_upper_bound(0.99).count()) / 1e3);
    std::fprintf(stderr, "\n");
}

void add_crew_net(problem& p, const net_shape& sh, u64 n) {
    p.impls.push_back({"crew", [=, &sh](std::size_t threads) -> run_fn {
                           auto pool = std::make_shared<crew::pool>(threads);
                           return [=, &sh] {
                               static const bool diag = std::getenv("CREW_BENCH_NET_METRICS") != nullptr;
                               crew::pool_metrics before;
                               if (diag) before = pool->metrics();
                               const auto t0 = clock::now();
                               auto lat = pool->block_on(tcp_echo(n, sh.conns));
                               sample s;
                               s.seconds = seconds_since(t0);
                               if (diag && lat.size() == n) print_net_diagnostics(lat, n, sh.conns, pool->metrics() - before);
                               if (lat.size() != n)
                                   throw std::runtime_error("WRONG ANSWER: " + std::to_string(lat.size()) + " round trips, want " + std::to_string(n));
                               s.extras.emplace_back("rt/s", static_cast<double>(n) / s.seconds);
                               s.extras.emplace_back("p50 us", percentile(lat, 0.50) / 1000.0);
                               s.extras.emplace_back("p99 us", percentile(lat, 0.99) / 1000.0);
                               return s;
                           };
                       }});
}
#endif

}  // namespace

void add_io_peers(problem& p, std::vector<std::string>& notes, const config& cfg, const io_peer_shape& sh) {
    const int reps = cfg.reps + 1;  // the peer's first rep is the warm-up crew-bench drops
#ifdef CREW_BENCH_TOKIO_PEER
    add_one_io_peer(p, notes, "tokio", "CREW_BENCH_TOKIO_PEER", CREW_BENCH_TOKIO_PEER, sh, reps);
#else
    add_one_io_peer(p, notes, "tokio", "CREW_BENCH_TOKIO_PEER", "", sh, reps);
#endif
#ifdef CREW_BENCH_ASIO_PEER
    add_one_io_peer(p, notes, "asio", "CREW_BENCH_ASIO_PEER", CREW_BENCH_ASIO_PEER, sh, reps);
#else
    add_one_io_peer(p, notes, "asio", "CREW_BENCH_ASIO_PEER", "", sh, reps);
#endif
}

problem make_net(const config& cfg, std::vector<std::string>& notes, const std::string& name) {
    const net_shape* sh = nullptr;
    for (auto& s : net_shapes)
        if (name == s.name) sh = &s;
    if (sh == nullptr) throw std::invalid_argument("crew-bench: no net problem '" + name + "'");
    const u64 n = cfg.quick ? sh->n_quick : sh->n_full;
    problem p;
    p.name = sh->name;
    p.title = p.name + " (" + std::to_string(sh->conns) + " connections, " + std::to_string(n) + " round trips)";
    if (n != sh->n_full) p.size_note = "quick mode: " + std::to_string(n) + " round trips (full: " + std::to_string(sh->n_full) + ")";
    p.what = sh->what;
#if CREW_BENCH_HAVE_NET
    add_crew_net(p, *sh, n);
#else
    add_note(notes, std::string(sh->name) + ": crew::net was not available when crew-bench was built: crew's row is skipped.");
#endif
    io_peer_shape ps;
    ps.name = sh->name;
    ps.n = n;
    ps.iters = sh->conns;
    ps.check = n;
    ps.figures = {{"p50_ns", "p50 us", 1e-3}, {"p99_ns", "p99 us", 1e-3}};
    ps.per_second_label = "rt/s";
    add_io_peers(p, notes, cfg, ps);
    return p;
}

namespace {

cell* net_cell(results& r, const std::string& problem, const std::string& impl, std::size_t threads) {
    for (auto& c : r.cells)
        if (c.problem == problem && c.impl == impl && c.threads == threads && c.error.empty() && c.median > 0) return &c;
    return nullptr;
}

double extra(const cell& c, const char* key) {
    for (auto& [k, v] : c.extras)
        if (k == key) return v;
    return 0;
}

}  // namespace

void add_net_ratios(results& r) {
    bool any = false;
    for (auto& c : r.cells) {
        if (c.problem.rfind("tcp_echo_", 0) != 0 || c.impl != "crew" || !c.error.empty() || c.median <= 0) continue;
        any = true;
        for (const char* peer : {"tokio", "asio"})
            if (cell* o = net_cell(r, c.problem, peer, c.threads)) c.extras.emplace_back(std::string(peer) + "/crew", o->median / c.median);
    }
    if (!any) return;
    // Issue 11: crew at least as fast as the faster peer in round trips per second, p99 no worse.
    for (const char* prob : {"tcp_echo_pingpong", "tcp_echo_throughput"}) {
        for (std::size_t t : r.cfg.threads) {
            target_check tc;
            tc.name = std::string(prob) + " at " + std::to_string(t) + " thread" + (t == 1 ? "" : "s") +
                      ": crew's round trips/s >= the faster peer's, p99 no worse";
            cell* c = net_cell(r, prob, "crew", t);
            cell* best = nullptr;
            for (const char* peer : {"tokio", "asio"})
                if (cell* o = net_cell(r, prob, peer, t); o != nullptr && (best == nullptr || extra(*o, "rt/s") > extra(*best, "rt/s")))
                    best = o;
            if (c != nullptr && best != nullptr) {
                tc.evaluated = true;
                tc.met = extra(*c, "rt/s") >= extra(*best, "rt/s") && extra(*c, "p99 us") <= extra(*best, "p99 us");
                tc.detail = "crew " + format_num(extra(*c, "rt/s"), 0) + " rt/s p99 " + format_num(extra(*c, "p99 us"), 1) +
                            " us; " + best->impl + " " + format_num(extra(*best, "rt/s"), 0) + " rt/s p99 " +
                            format_num(extra(*best, "p99 us"), 1) + " us";
            }
            r.targets.push_back(tc);
        }
    }
}

}  // namespace crew_bench
