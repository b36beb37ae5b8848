// bench/baselines/shared_queue_pool.hpp -- baseline 1: every worker shares one mutex-protected queue.
//
// The design seed 001 opens with. Idle workers take the oldest task (the front: the biggest pieces
// of a divide-and-conquer); a joiner that waits helps by taking the newest task (the back: most
// likely its own child, which keeps the recursion depth-first). Every push and pop takes the one
// lock, which is what this baseline is here to show.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "baselines/baseline_task.hpp"

namespace crew_bench::baseline {

class shared_queue_pool {
public:
    explicit shared_queue_pool(std::size_t threads);
    ~shared_queue_pool();
    shared_queue_pool(const shared_queue_pool&) = delete;
    shared_queue_pool& operator=(const shared_queue_pool&) = delete;

    // Runs f on a worker and waits (from outside the pool).
    template <class F>
    void run(F&& f) {
        std::promise<void> done;
        auto fut = done.get_future();
        push(make_heap_task([&f, &done] {
            f();
            done.set_value();
        }));
        fut.wait();
    }

    // Fire and forget, from anywhere.
    template <class F>
    void spawn(F&& f) {
        push(make_heap_task(std::forward<F>(f)));
    }

    // Fork-join; must be called on a worker of some shared_queue_pool.
    template <class F, class G>
    static void join(F&& f, G&& g) {
        shared_queue_pool& p = *current_;
        stack_job<std::remove_reference_t<G>> job(g);
        p.push(&job);
        f();
        p.help_until(job.done, &job);
    }

    // On a worker: runs queued tasks until flag becomes true. A helper nests the tasks it runs on
    // its own stack; past max_help_depth nested tasks it only takes back `own` (its own job, if
    // still queued) and otherwise yields, which bounds the stack and cannot deadlock (whoever took
    // `own` is running it, and the same rule applies to them).
    void help_until(const std::atomic<bool>& flag, const task* own = nullptr);
    static constexpr int max_help_depth = 64;
    // The pool whose worker runs the caller (nullptr outside).
    static shared_queue_pool* current() noexcept { return current_; }

private:
    void push(task* t);
    void worker_loop();

    static thread_local shared_queue_pool* current_;
    static thread_local int help_depth_;
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<task*> queue_;
    std::size_t sleepers_ = 0;
    bool stop_ = false;
    std::vector<worker_thread> threads_;
};

}  // namespace crew_bench::baseline
