// wake_latency: the time from a submission into a fully idle pool to the task starting. Before each
// sample the submitter sleeps a few ms so every worker has parked. The floor rows measure the same
// thing between two bare threads in this run: a raw futex ping-pong and a condition variable one.
// "time" is the median (p50) over the samples of a rep; p99 is reported alongside.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "baselines/shared_queue_pool.hpp"
#include "baselines/stealing_pool.hpp"
#include "peers.hpp"

namespace crew_bench {

namespace {

constexpr auto idle_gap = std::chrono::milliseconds(3);

struct flag {
    std::atomic<int> word{0};
    clock::time_point started;
};

void futex_wait(std::atomic<int>& w, int expected) {
    syscall(SYS_futex, reinterpret_cast<int*>(&w), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futex_wake(std::atomic<int>& w) {
    syscall(SYS_futex, reinterpret_cast<int*>(&w), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

sample summarize(std::vector<double>& lat) {
    std::sort(lat.begin(), lat.end());
    sample s;
    s.seconds = lat[lat.size() / 2];
    s.extras.emplace_back("p99_us", lat[lat.size() * 99 / 100] * 1e6);
    return s;
}

// submit(fn) hands fn to the runtime; fn records when it starts.
template <class Submit>
sample measure(std::size_t samples, Submit submit) {
    std::vector<double> lat;
    auto f = std::make_shared<flag>();  // the task may still be inside notify_one when we return
    for (std::size_t i = 0; i < samples; ++i) {
        std::this_thread::sleep_for(idle_gap);
        f->word.store(0);
        auto t0 = clock::now();
        submit([f] {
            f->started = clock::now();
            f->word.store(1, std::memory_order_release);  // acquire-loaded by the wait below
            f->word.notify_one();
        });
        f->word.wait(0, std::memory_order_acquire);
        lat.push_back(std::chrono::duration<double>(f->started - t0).count());
    }
    return summarize(lat);
}

sample futex_floor(std::size_t samples) {
    std::atomic<int> go{0}, ack{0};
    clock::time_point t0, t1;
    std::thread b([&] {
        for (std::size_t i = 0; i < samples; ++i) {
            while (go.load(std::memory_order_acquire) == 0) futex_wait(go, 0);
            t1 = clock::now();
            go.store(0);
            ack.store(1, std::memory_order_release);
            futex_wake(ack);
        }
    });
    std::vector<double> lat;
    for (std::size_t i = 0; i < samples; ++i) {
        std::this_thread::sleep_for(idle_gap);
        ack.store(0);
        t0 = clock::now();
        go.store(1, std::memory_order_release);
        futex_wake(go);
        while (ack.load(std::memory_order_acquire) == 0) futex_wait(ack, 0);
        lat.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
    b.join();
    return summarize(lat);
}

sample condvar_floor(std::size_t samples) {
    std::mutex m;
    std::condition_variable cv_go, cv_ack;
    bool go = false, ack = false;
    clock::time_point t0, t1;
    std::thread b([&] {
        for (std::size_t i = 0; i < samples; ++i) {
            std::unique_lock<std::mutex> lk(m);
            cv_go.wait(lk, [&] { return go; });
            t1 = clock::now();
            go = false;
            ack = true;
            cv_ack.notify_one();
        }
    });
    std::vector<double> lat;
    for (std::size_t i = 0; i < samples; ++i) {
        std::this_thread::sleep_for(idle_gap);
        std::unique_lock<std::mutex> lk(m);
        ack = false;
        t0 = clock::now();
        go = true;
        cv_go.notify_one();
        cv_ack.wait(lk, [&] { return ack; });
        lat.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
    b.join();
    return summarize(lat);
}

}  // namespace

problem make_wake_latency(const config& cfg, std::vector<std::string>& notes) {
    std::size_t samples = cfg.quick ? 150 : 500;
    problem p;
    p.name = "wake_latency";
    p.title = "wake latency";
    p.size_note = cfg.quick ? "quick mode: 150 samples per rep (full: 500)" : "";
    p.what = "submit into a fully parked pool -> task starts (p50; p99 in the notes); floors: raw futex and "
             "condition-variable ping-pong between two threads";
    p.time_label = "p50 wake latency";
    p.max_reps = 3;
    note_missing_peers(notes);
    p.impls.push_back({"floor-futex", [samples](std::size_t) -> run_fn { return [samples] { return futex_floor(samples); }; },
                       false, true});
    p.impls.push_back({"floor-condvar",
                       [samples](std::size_t) -> run_fn { return [samples] { return condvar_floor(samples); }; }, false,
                       true});
    p.impls.push_back({"crew", [samples](std::size_t t) -> run_fn {
                           auto pool = std::make_shared<crew::pool>(t);
                           return [=] { return measure(samples, [&](auto fn) { pool->spawn(std::move(fn)); }); };
                       }});
#if CREW_BENCH_HAVE_TBB
    p.impls.push_back({"onetbb", [samples](std::size_t t) -> run_fn {
                           auto arena = make_tbb_env(t);
                           return [=] { return measure(samples, [&](auto fn) { arena->enqueue(std::move(fn)); }); };
                       }});
#endif
    p.impls.push_back({"shared-queue", [samples](std::size_t t) -> run_fn {
                           auto pool = std::make_shared<baseline::shared_queue_pool>(t);
                           return [=] { return measure(samples, [&](auto fn) { pool->spawn(std::move(fn)); }); };
                       }});
    p.impls.push_back({"mutex-deques", [samples](std::size_t t) -> run_fn {
                           auto pool = std::make_shared<baseline::stealing_pool>(t);
                           return [=] { return measure(samples, [&](auto fn) { pool->spawn(std::move(fn)); }); };
                       }});
    return p;
}

}  // namespace crew_bench
