// bench/peers.hpp -- the optional peers of the loop and algorithm problems, and small helpers.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <crew/crew.hpp>

#if __has_include(<crew/algorithms.hpp>)
#include <crew/algorithms.hpp>
#define CREW_BENCH_HAVE_ALGORITHMS 1
#else
#define CREW_BENCH_HAVE_ALGORITHMS 0
#endif

#if CREW_BENCH_HAVE_TBB
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#endif
#if CREW_BENCH_HAVE_OPENMP
#include <omp.h>
#endif

#include "harness.hpp"
#include "report_util.hpp"

namespace crew_bench {

// The peer programs (bench/peers/tokio, bench/peers/asio) print one JSON line per rep: reads the
// number after `"key":` in `line`.
inline bool json_number(const std::string& line, const char* key, double& out) {
    const std::string k = std::string("\"") + key + "\":";
    const auto at = line.find(k);
    if (at == std::string::npos) return false;
    char* end = nullptr;
    const char* begin = line.c_str() + at + k.size();
    out = std::strtod(begin, &end);
    return end != begin;
}

// `s` as one word for popen's shell.
inline std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// A static equal split on plain threads: chunk k of `threads` runs body(lo, hi, k); the calling
// thread runs chunk 0. This is what "one contiguous chunk per thread" costs at best.
template <class Body>
void static_split(std::size_t threads, std::size_t n, Body&& body) {
    std::vector<std::thread> helpers;
    helpers.reserve(threads - 1);
    for (std::size_t k = 1; k < threads; ++k)
        helpers.emplace_back([&, k] { body(n * k / threads, n * (k + 1) / threads, k); });
    body(0, n / threads, 0);
    for (auto& t : helpers) t.join();
}

// Builds an implementation from: make_env(threads) -> shared_ptr<Env> (a pool, an arena; untimed),
// body(Env&, threads) -> check value (timed), prepare() (untimed, before every run).
struct no_env {};
inline std::shared_ptr<no_env> make_no_env(std::size_t) { return std::make_shared<no_env>(); }
inline std::shared_ptr<crew::pool> make_crew_env(std::size_t t) { return std::make_shared<crew::pool>(t); }
#if CREW_BENCH_HAVE_TBB
inline std::shared_ptr<tbb::task_arena> make_tbb_env(std::size_t t) {
    auto a = std::make_shared<tbb::task_arena>(static_cast<int>(t));
    a->initialize();
    return a;
}
#endif

template <class MakeEnv, class Body, class Prepare>
impl loop_impl(const std::string& name, MakeEnv make_env, Body body, Prepare prepare, bool serial = false) {
    return {name,
            [=](std::size_t t) -> run_fn {
                auto env = make_env(t);
                return [=] {
                    prepare();
                    return timed([&] { return body(*env, t); });
                };
            },
            serial};
}

template <class MakeEnv, class Body>
impl loop_impl(const std::string& name, MakeEnv make_env, Body body, bool serial = false) {
    return loop_impl(name, make_env, body, [] {}, serial);
}

// As loop_impl, but body(Env&, threads) returns nothing and check() runs after the clock stopped.
template <class MakeEnv, class Body, class Prepare, class Check>
impl checked_impl(const std::string& name, MakeEnv make_env, Body body, Prepare prepare, Check check,
                  bool serial = false) {
    return {name,
            [=](std::size_t t) -> run_fn {
                auto env = make_env(t);
                return [=] {
                    prepare();
                    auto t0 = clock::now();
                    body(*env, t);
                    sample s;
                    s.seconds = seconds_since(t0);
                    s.check = check();
                    return s;
                };
            },
            serial};
}

inline void note_missing_peers(std::vector<std::string>& notes) {
#if !CREW_BENCH_HAVE_TBB
    add_note(notes, "oneTBB (libtbb-dev) was not found when crew-bench was built: its columns are skipped.");
#endif
#if !CREW_BENCH_HAVE_OPENMP
    add_note(notes, "OpenMP was not found when crew-bench was built: its columns are skipped.");
#endif
#if !CREW_BENCH_HAVE_ALGORITHMS
    add_note(notes, "<crew/algorithms.hpp> was not available when crew-bench was built: crew's algorithm columns are skipped.");
#endif
    (void)notes;
}

}  // namespace crew_bench
