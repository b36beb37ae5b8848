// crew/detail/registry.hpp -- the shared state of one pool: its workers, its injector, its parking
// lot, and its shutdown flag. crew::pool owns one; tasks reach it through their worker.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <mutex>
#include <vector>

#include "crew/errors.hpp"
#include "crew/async/detail/task_list.hpp"
#include "crew/detail/injector.hpp"
#include "crew/detail/io_driver.hpp"
#include "crew/detail/os.hpp"
#include "crew/detail/parking.hpp"
#include "crew/detail/task.hpp"
#include "crew/detail/trace.hpp"
#include "crew/detail/worker.hpp"
#include "crew/metrics.hpp"

namespace crew::detail {

using exception_handler = std::function<void(std::exception_ptr)>;
using thread_hook = std::function<void(std::size_t)>;

// How many fork()s separate this process from the one that started crew's first pool: bumped by
// the child fork handler (src/pool.cpp). A pool created in an earlier generation belongs to an
// ancestor process; its threads do not exist here.
std::uint32_t fork_generation() noexcept;
void note_fork_in_child() noexcept;

struct registry_config {
    unsigned threads;
    exception_handler on_unhandled_exception;  // empty: print to stderr
    std::size_t stack_size;
    std::string name;
    thread_hook on_thread_start;  // empty: none
    thread_hook on_thread_stop;   // empty: none
    bool pin_threads = false;
    std::string trace;                           // pool_options::trace
    std::size_t trace_events = std::size_t{1} << 16;  // pool_options::trace_events
};

class registry {
public:
    // Starts the worker threads. They wait at a start gate until every thread exists (so start-up
    // is linear in the number of workers), then begin asleep. Throws std::system_error when a
    // thread cannot be started (the ones already started are released, stopped and joined first).
    explicit registry(registry_config config);
    // Closes the injector, lets the workers finish every queued task, and joins them. In a forked
    // child (the threads belong to the parent) it only frees the memory.
    ~registry();
    registry(const registry&) = delete;
    registry& operator=(const registry&) = delete;

    unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()); }
    worker& worker_at(unsigned i) noexcept { return *workers_[i]; }
    parking& lot() noexcept { return lot_; }
    task_depot& task_blocks() noexcept { return task_blocks_; }
    // The pool's I/O and timer driver (io_driver.hpp): created with the pool, destroyed after the
    // shutdown drain destroyed the frames of suspended tasks (their timers and fds go first).
    io_driver& driver() noexcept { return *driver_; }
    basic_injector<task>& injector() noexcept { return injector_; }
    // acquire: pairs with the release store in ~registry(), read in the workers' re-check.
    bool stopping() const noexcept { return stopping_.load(std::memory_order_acquire); }

    // Is the calling thread one of this pool's workers?
    bool owns_current_thread() const noexcept {
        worker* w = current_worker;
        return w != nullptr && &w->owner() == this;
    }

    // Queue `t`: on the calling worker's deque when it is ours, else through the injector.
    // Returns false (and leaves `t` with the caller) when the pool is shutting down.
    bool schedule(task* t) {
        if (owns_current_thread()) {
            trace::spawn(current_worker->trace());
            current_worker->push(t);
            return true;
        }
        return inject(t);
    }

    // Returns false when the pool is shutting down or belongs to the parent of a forked process.
    bool inject(task* t) {
        if (forked_away()) [[unlikely]] return false;
        stamp_queued(t);  // metrics: the schedule latency of injected tasks
        // The wake runs under the injector's lock: once `t` is queued, a worker may run it and its
        // waiter destroy this pool; shutdown() closes the injector (that lock) before anything goes.
        return injector_.push(t, [this] {
            trace::wake(trace_.get());
            lot_.notify_one();
        });
    }

    // Was this pool created by an ancestor of this (forked) process?
    bool forked_away() const noexcept { return generation_ != fork_generation(); }

    // Throw what a refused submission means: crew::usage_error in a forked child (the pool's
    // threads stayed in the parent), else crew::pool_closed_error (the destructor has started).
    [[noreturn]] void throw_refused() const;

    // An exception escaped `source` (a fire-and-forget task, or a task_group child whose exception
    // nobody collected): the pool's handler, else a line on stderr naming the source.
    void report_unhandled(std::exception_ptr error, const char* source = "a spawned task") noexcept;

    pool_metrics metrics() const;

    // crew/async: this pool's live coroutine tasks; shutdown() drains it after the workers joined.
    async_task_list& async_tasks() noexcept { return async_tasks_; }
    // The trace (pool_options::trace): write it now; throws crew::usage_error when off.
    void dump_trace(const std::string& path) const;
    bool tracing() const noexcept { return trace_ != nullptr; }

private:
    void keep_monotonic(worker_metrics& m, std::size_t i) const;
    static void thread_entry(void* self) noexcept;
    void open_start_gate() noexcept;
    void shutdown() noexcept;
    void run_hook(const thread_hook& hook, unsigned index, const char* source) noexcept;

    registry_config config_;
    const std::uint32_t generation_ = fork_generation();
    const std::uint64_t started_ns_ = worker_counters::now_ns();  // metrics: a snapshot's interval
    // metrics(): the times last reported per worker, so that successive snapshots never go back
    // (a snapshot counts a worker's current state up to the reader's clock, which may run ahead of
    // the clock value the worker commits at its next state change). Guarded by metrics_mutex_.
    mutable std::mutex metrics_mutex_;
    mutable std::vector<worker_counters::times> reported_times_;
    // start_gate_: 0 while threads are being created, then 1 (written by the constructor, or by
    // shutdown() after a failed start); the workers futex-wait on it before their first look.
    std_atomics::atomic<std::uint32_t> start_gate_{0};
    parking lot_;
    std::unique_ptr<io_driver> driver_;
    basic_injector<task> injector_;
    // stopping_: written once by the destructor; read by workers before they park or exit.
    std_atomics::atomic<bool> stopping_{false};
    // task_blocks_: the workers' shared store of free task blocks (task.hpp); declared before
    // workers_, whose caches point into it.
    task_depot task_blocks_;
    // trace_: null unless tracing; declared before workers_, which point into it.
    std::unique_ptr<trace::session> trace_;
    std::vector<std::unique_ptr<worker>> workers_;
    std::vector<std::unique_ptr<os::thread>> threads_;
    // With pin_threads: the CPUs worker i picks from (i modulo their number); empty otherwise.
    std::vector<int> pin_cpus_;
    async_task_list async_tasks_;
};

}  // namespace crew::detail
