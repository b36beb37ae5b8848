// bench/baselines/stealing_pool.hpp -- baseline 2: per-worker mutex-protected deques with stealing.
//
// The design of seed 003, with the ends the right way round: the owner pushes and pops at the back
// (LIFO, depth-first, cache-warm), thieves take from the front (FIFO, the oldest and biggest
// pieces). Each deque has its own mutex, so the owner's push and pop cost an uncontended lock each;
// thieves pick a random victim first. Outside submissions go to a separate injector queue. Idle
// workers sleep on one condition variable; a pusher notifies only when a sleeper exists (the
// sleeper re-checks every queue while holding the sleep mutex, so no wake-up is lost).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "baselines/baseline_task.hpp"

namespace crew_bench::baseline {

class stealing_pool {
public:
    explicit stealing_pool(std::size_t threads);
    ~stealing_pool();
    stealing_pool(const stealing_pool&) = delete;
    stealing_pool& operator=(const stealing_pool&) = delete;

    template <class F>
    void run(F&& f) {
        std::promise<void> done;
        auto fut = done.get_future();
        submit(make_heap_task([&f, &done] {
            f();
            done.set_value();
        }));
        fut.wait();
    }

    // Fire and forget: onto the caller's deque on a worker, else into the injector.
    template <class F>
    void spawn(F&& f) {
        submit(make_heap_task(std::forward<F>(f)));
    }

    // Fork-join; must be called on a worker of some stealing_pool.
    template <class F, class G>
    static void join(F&& f, G&& g) {
        worker& w = *current_;
        stack_job<std::remove_reference_t<G>> job(g);
        w.pool->push_local(w, &job);
        f();
        w.pool->help_until(job.done);
    }

    // On a worker: runs its own, then stolen, tasks until flag becomes true. Past max_help_depth
    // nested tasks it stops stealing (its own deque holds only its descendants), which bounds the
    // stack without risking deadlock.
    void help_until(const std::atomic<bool>& flag);
    static constexpr int max_help_depth = 64;
    static bool on_worker() noexcept { return current_ != nullptr; }

private:
    struct alignas(64) worker {
        std::mutex m;
        std::deque<task*> deque;
        stealing_pool* pool = nullptr;
        std::size_t index = 0;
        std::uint64_t rng = 0;
    };

    void submit(task* t);
    void push_local(worker& w, task* t);
    task* pop_local(worker& w);
    task* steal(worker& thief);
    task* take_injected();
    bool any_work();
    void wake_one();
    void worker_loop(worker& w);

    static thread_local worker* current_;
    static thread_local int help_depth_;
    std::vector<std::unique_ptr<worker>> workers_;
    std::mutex inject_m_;
    std::deque<task*> injected_;
    std::mutex sleep_m_;
    std::condition_variable sleep_cv_;
    std::atomic<std::size_t> sleepers_{0};
    std::atomic<bool> stop_{false};
    std::vector<worker_thread> threads_;
};

}  // namespace crew_bench::baseline
