// bench/count_probe.cpp -- where a 2-worker count_if call spends its time (issue 9, session 12):
// crew::parallel_count_if's split (partition.hpp's parallel_fold with count_kernel leaves, exactly
// as search.hpp calls it) against tbb::parallel_reduce with std::count_if, over crew-bench's input
// (20M ints, mix64(i) % 10^6), one call after another as crew-bench runs them. Per call it records,
// with one clock read per leaf: the time until each thread's first leaf starts, the number of
// leaves and threads, and how long each thread sat idle at the end (last leaf of the call minus
// this thread's last leaf); for crew also the pool's parks, unparks and steals per call.
// Standalone (not part of the CMake build), from the repository root after building crew in DIR:
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude bench/count_probe.cpp DIR/libcrew.a -ltbb -lpthread -o cp
//   ./cp crew|onetbb|halves|mix|serial THREADS CALLS [GAP_US=0]
// (halves: THREADS spinning std::threads, one contiguous slice each, no scheduler: the floor;
// mix: crew, onetbb and halves in one process, in rotating blocks of 10 calls, paired ratios.)
// GAP_US > 0 sleeps that long between calls (a caller that does other work between calls).
// PROBE_CALLS=1 prints every call (with each worker's metrics delta), PROBE_DUMP=1 the last call's
// leaves. On a loaded machine, `chrt -f 10 ./cp ...` (root) keeps other processes off both CPUs
// while it runs (the kernel's real-time throttling still leaves them 5 %).
#include <crew/algorithms.hpp>
#include <crew/crew.hpp>
#include <crew/metrics.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using clk = std::chrono::steady_clock;

struct even_t {
    bool operator()(int x) const { return x % 2 == 0; }
};

std::uint64_t mix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// One leaf's record: which thread, when it started and ended (ns since the call began).
struct leaf_rec {
    int thread;
    std::int64_t begin, end;
    std::size_t b, e;
};

thread_local int tl_thread = -1;
std::atomic<int> next_thread{0};
int thread_no() {
    if (tl_thread < 0) tl_thread = next_thread.fetch_add(1);
    return tl_thread;
}

struct recorder {
    clk::time_point t0;
    std::atomic<std::size_t> used{0};
    std::vector<leaf_rec> recs = std::vector<leaf_rec>(4096);
    std::int64_t ns() const { return std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - t0).count(); }
    void add(const leaf_rec& r) {
        std::size_t k = used.fetch_add(1, std::memory_order_relaxed);
        if (k < recs.size()) recs[k] = r;
    }
};

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct setup {
    std::string impl;
    std::size_t threads = 1;
    int calls = 0, gap_us = 0;
    std::size_t n = 20000000;
    std::vector<int> v;
};

// `halves` (session 18): no scheduler at all. THREADS - 1 helper threads spin on a generation
// word between calls; each call cuts the range into THREADS equal contiguous slices, the caller
// taking slice 0 and every slice counted by crew's own leaf loop (count_kernel). Nothing is split,
// stolen, woken or joined, and the helpers never sleep: the time of a call is what the memory and
// the leaf loop allow on this machine, the floor crew and oneTBB are read against.
class halves {
public:
    halves(const std::vector<int>& v, std::size_t threads) : v_(v), parts_(threads) {
        for (std::size_t i = 1; i < threads; ++i) helpers_.emplace_back([this, i] { helper(i); });
    }
    ~halves() {
        stop_.store(true, std::memory_order_relaxed);
        gen_.fetch_add(1, std::memory_order_release);
        for (std::thread& t : helpers_) t.join();
    }
    std::ptrdiff_t call(recorder& rec) {
        rec_ = &rec;
        gen_.fetch_add(1, std::memory_order_release);  // release: rec_ to the helpers (acquire below)
        parts_[0] = slice(0);
        while (done_.load(std::memory_order_acquire) != helpers_.size()) {  // acquire: their parts_
        }
        done_.store(0, std::memory_order_relaxed);  // no helper reads it before the next generation
        std::ptrdiff_t sum = 0;
        for (std::ptrdiff_t x : parts_) sum += x;
        return sum;
    }

    // mix mode: while inactive the helpers poll every 100 us instead of spinning, so they take no
    // CPU from the crew and oneTBB calls in between (the first halves call after activating is
    // not recorded).
    void set_active(bool on) { active_.store(on, std::memory_order_relaxed); }

private:
    std::ptrdiff_t slice(std::size_t i) {
        const std::size_t n = v_.size(), t = parts_.size();
        const std::size_t b = n * i / t, e = n * (i + 1) / t;
        const std::int64_t t0 = rec_->ns();
        const even_t pred;
        const auto r = crew::detail::count_kernel<std::ptrdiff_t>(v_.data() + b, e - b, pred);
        rec_->add({thread_no(), t0, rec_->ns(), b, e});
        return r;
    }
    void helper(std::size_t i) {
        std::uint64_t seen = 0;
        for (;;) {
            std::uint64_t g;
            while ((g = gen_.load(std::memory_order_acquire)) == seen) {  // acquire: the caller's rec_
                if (!active_.load(std::memory_order_relaxed)) std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
            seen = g;
            if (stop_.load(std::memory_order_relaxed)) return;
            parts_[i] = slice(i);
            done_.fetch_add(1, std::memory_order_release);  // release: parts_[i] to the caller
        }
    }
    const std::vector<int>& v_;
    std::vector<std::ptrdiff_t> parts_;
    recorder* rec_ = nullptr;
    std::atomic<std::uint64_t> gen_{0};
    std::atomic<std::size_t> done_{0};
    std::atomic<bool> stop_{false};
    std::atomic<bool> active_{true};
    std::vector<std::thread> helpers_;
};

// One call of the chosen implementation; every leaf goes to `rec`.
std::ptrdiff_t run_call(const setup& su, crew::pool& pool, tbb::task_arena& arena, recorder& rec, halves* h) {
    if (h != nullptr) return h->call(rec);
    const even_t pred;
    const std::vector<int>& v = su.v;
    if (su.impl == "crew") {
        return pool.run([&] {
            auto leaf = [&](std::size_t b, std::size_t e) -> std::ptrdiff_t {
                std::int64_t t = rec.ns();
                auto r = crew::detail::count_kernel<std::ptrdiff_t>(v.data() + b, e - b, pred);
                rec.add({thread_no(), t, rec.ns(), b, e});
                return r;
            };
            return crew::detail::parallel_fold<std::ptrdiff_t>(crew::auto_partition, su.n, leaf, std::plus<std::ptrdiff_t>());
        });
    }
    std::ptrdiff_t got = 0;
    if (su.impl == "onetbb") {
        arena.execute([&] {
            got = tbb::parallel_reduce(
                tbb::blocked_range<std::size_t>(0, su.n), std::ptrdiff_t{0},
                [&](const tbb::blocked_range<std::size_t>& r, std::ptrdiff_t acc) {
                    std::int64_t t = rec.ns();
                    acc += std::count_if(v.data() + r.begin(), v.data() + r.end(), pred);
                    rec.add({thread_no(), t, rec.ns(), r.begin(), r.end()});
                    return acc;
                },
                std::plus<>{});
        });
        return got;
    }
    got = std::count_if(v.begin(), v.end(), pred);
    rec.add({thread_no(), 0, rec.ns(), 0, su.n});
    return got;
}

// The per-call figures, one vector per figure (a value per call).
struct series {
    std::vector<double> wall, head, first_other, tail, idle_end, leaves, nthreads;
};

// Folds one call's leaves (`k` of them, the call took `w` ms) into `out`; returns the sorted
// first-leaf times (ns) of the threads that ran any.
std::vector<std::int64_t> add_call(const recorder& rec, std::size_t k, double w, series& out) {
    std::int64_t first[64], last[64], end_all = 0;
    std::fill(first, first + 64, -1);
    std::fill(last, last + 64, -1);
    for (std::size_t i = 0; i < k; ++i) {
        const leaf_rec& r = rec.recs[i];
        const int t = r.thread & 63;
        if (first[t] < 0 || r.begin < first[t]) first[t] = r.begin;
        last[t] = std::max(last[t], r.end);
        end_all = std::max(end_all, r.end);
    }
    std::vector<std::int64_t> firsts;
    double idle = 0;
    for (int t = 0; t < 64; ++t)
        if (first[t] >= 0) {
            firsts.push_back(first[t]);
            idle += static_cast<double>(end_all - last[t]);
        }
    std::sort(firsts.begin(), firsts.end());
    out.wall.push_back(w);
    out.head.push_back(static_cast<double>(firsts.front()) / 1e3);
    out.tail.push_back(w * 1e3 - static_cast<double>(end_all) / 1e3);
    out.first_other.push_back(firsts.size() > 1 ? static_cast<double>(firsts[1]) / 1e3 : -1);
    out.idle_end.push_back(idle / 1e3);
    out.leaves.push_back(static_cast<double>(k));
    out.nthreads.push_back(static_cast<double>(firsts.size()));
    return firsts;
}

// PROBE_CALLS: one line per call, with each worker's metrics over the call (crew).
void print_call(const setup& su, int c, double w, const std::vector<std::int64_t>& firsts, std::size_t k,
                crew::pool& pool, crew::pool_metrics& before_call) {
    std::printf("  call %d: %.3f ms, %zu threads, 2nd thread's first leaf %.1f us, %zu leaves", c, w, firsts.size(),
                firsts.size() > 1 ? static_cast<double>(firsts[1]) / 1e3 : -1.0, k);
    if (su.impl == "crew") {
        crew::pool_metrics now = pool.metrics();
        crew::pool_metrics dc = now - before_call;
        before_call = now;
        for (std::size_t i = 0; i < dc.workers.size(); ++i) {
            const crew::worker_metrics& x = dc.workers[i];
            std::printf(" | w%zu run %llu steals %llu fail %llu parks %llu busy %.0f search %.0f park %.0f us", i,
                        static_cast<unsigned long long>(x.tasks_run), static_cast<unsigned long long>(x.steals),
                        static_cast<unsigned long long>(x.failed_steals), static_cast<unsigned long long>(x.parks),
                        x.busy_time.count() / 1e3, x.search_time.count() / 1e3, x.park_time.count() / 1e3);
        }
    }
    std::printf("\n");
}

void print_summary(const setup& su, const series& s, const crew::worker_metrics& tot) {
    std::printf("%s threads=%zu calls=%d gap_us=%d: wall %.3f ms; first leaf %.1f us, of the 2nd thread %.1f us; "
                "after the last leaf %.1f us; end idle (sum over threads) %.1f us; leaves %.0f; threads used %.0f",
                su.impl.c_str(), su.threads, su.calls, su.gap_us, median(s.wall), median(s.head), median(s.first_other),
                median(s.tail), median(s.idle_end), median(s.leaves), median(s.nthreads));
    const double calls = su.calls;
    if (su.impl == "crew")
        std::printf("; per call: parks %.2f unparks %.2f steals %.2f searches %.2f", static_cast<double>(tot.parks) / calls,
                    static_cast<double>(tot.unparks) / calls, static_cast<double>(tot.steals) / calls,
                    static_cast<double>(tot.searches) / calls);
    std::printf("\n");
}

}  // namespace

// `mix` (session 18): crew, oneTBB and halves in one process over the same vector (the same
// pages), in blocks of 10 calls each, rotating, each block after one unrecorded call. Prints each
// one's median call and the median over rounds of the paired ratios (a round = one block of each).
int run_mix(setup& su, crew::pool& pool, tbb::task_arena& arena, std::ptrdiff_t expect) {
    const char* names[3] = {"crew", "onetbb", "halves"};
    halves h(su.v, su.threads);
    h.set_active(false);
    std::vector<double> all[3], ratio_ch, ratio_th, ratio_ct;
    recorder rec;
    const int rounds = std::max(1, su.calls / 10);
    for (int r = 0; r < rounds; ++r) {
        double block[3];
        for (int k = 0; k < 3; ++k) {
            su.impl = names[k];
            h.set_active(k == 2);
            std::vector<double> wall;
            for (int c = 0; c <= 10; ++c) {
                rec.used = 0;
                rec.t0 = clk::now();
                const std::ptrdiff_t got = run_call(su, pool, arena, rec, k == 2 ? &h : nullptr);
                const double w = static_cast<double>(rec.ns()) / 1e6;
                if (got != expect) {
                    std::fprintf(stderr, "%s: wrong answer %td (expected %td)\n", names[k], got, expect);
                    return 1;
                }
                if (c > 0) wall.push_back(w);
            }
            block[k] = median(wall);
            all[k].insert(all[k].end(), wall.begin(), wall.end());
        }
        ratio_ch.push_back(block[0] / block[2]);
        ratio_th.push_back(block[1] / block[2]);
        ratio_ct.push_back(block[0] / block[1]);
    }
    h.set_active(true);
    std::printf("mix threads=%zu rounds=%d: median call crew %.3f ms, onetbb %.3f ms, halves %.3f ms; per round: "
                "crew/halves %.3f, onetbb/halves %.3f, crew/onetbb %.3f\n",
                su.threads, rounds, median(all[0]), median(all[1]), median(all[2]), median(ratio_ch), median(ratio_th),
                median(ratio_ct));
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s crew|onetbb|halves|mix|serial THREADS CALLS [GAP_US]\n", argv[0]);
        return 2;
    }
    setup su;
    su.impl = argv[1];
    su.threads = std::strtoul(argv[2], nullptr, 10);
    su.calls = std::atoi(argv[3]);
    su.gap_us = argc > 4 ? std::atoi(argv[4]) : 0;
    su.v.resize(su.n);
    for (std::size_t i = 0; i < su.n; ++i) su.v[i] = static_cast<int>(mix64(i) % 1000000u);
    const std::ptrdiff_t expect = std::count_if(su.v.begin(), su.v.end(), even_t{});
    crew::pool pool(su.threads);
    tbb::task_arena arena(static_cast<int>(su.threads));
    arena.initialize();
    if (su.impl == "mix") return run_mix(su, pool, arena, expect);
    std::unique_ptr<halves> h;
    if (su.impl == "halves") h = std::make_unique<halves>(su.v, su.threads);
    series s;
    recorder rec;
    crew::pool_metrics m0 = pool.metrics(), before_call = m0;
    for (int c = 0; c <= su.calls; ++c) {  // call 0 warms up
        rec.used = 0;
        rec.t0 = clk::now();
        const std::ptrdiff_t got = run_call(su, pool, arena, rec, h.get());
        const double w = static_cast<double>(rec.ns()) / 1e6;
        if (got != expect) {
            std::fprintf(stderr, "wrong answer %td (expected %td)\n", got, expect);
            return 1;
        }
        if (c == 0) {
            m0 = before_call = pool.metrics();
            continue;
        }
        const std::size_t k = std::min(rec.used.load(), rec.recs.size());
        const std::vector<std::int64_t> firsts = add_call(rec, k, w, s);
        if (std::getenv("PROBE_CALLS") != nullptr) print_call(su, c, w, firsts, k, pool, before_call);
        if (su.gap_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(su.gap_us));
        if (std::getenv("PROBE_DUMP") != nullptr && c == su.calls)
            for (std::size_t i = 0; i < k; ++i)
                std::printf("  leaf t%d [%zu, %zu) %.1f-%.1f us\n", rec.recs[i].thread, rec.recs[i].b, rec.recs[i].e,
                            static_cast<double>(rec.recs[i].begin) / 1e3, static_cast<double>(rec.recs[i].end) / 1e3);
    }
    print_summary(su, s, (pool.metrics() - m0).total());
    return 0;
}
