// crew/pool.hpp -- a work-stealing thread pool.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "crew/errors.hpp"
#include "crew/future.hpp"
#include "crew/metrics.hpp"
#include "crew/detail/registry.hpp"

namespace crew {

// The largest number of worker threads a pool may have (more throws std::invalid_argument).
// Every idle worker may look at every other worker's deque, so a pool far larger than the machine
// only adds sweeps and threads; 1024 is above the hardware threads of all but the largest
// machines, and 1024 default stacks are 64 GiB of address space (not of memory).
inline constexpr std::size_t max_threads = 1024;

struct pool_options {
    // Number of worker threads, 1 to max_threads; empty means default_concurrency(). 0 or more
    // than max_threads throws std::invalid_argument.
    std::optional<std::size_t> threads;
    // Called with the exception that escaped a spawn()ed task, on the worker that ran it. Empty:
    // the exception's what() is printed to stderr. The worker always survives.
    std::function<void(std::exception_ptr)> on_unhandled_exception;
    // Stack size of each worker thread in bytes (address space; pages are committed only as they
    // are used). Tasks, and everything a waiting worker runs meanwhile, share it: deep recursion
    // through crew::join needs about 250 bytes per level plus the task's own frames (docs/API.md).
    // A size the system cannot map makes the constructor throw std::system_error.
    std::size_t stack_size = std::size_t{64} << 20;
    // Prefix of the worker threads' names: worker i is "<name>-<i>", cut to 15 characters (as
    // shown by top -H, ps -L, gdb, /proc/<pid>/task/<tid>/comm).
    std::string name = "crew";
    // Called on each worker thread with its index (0 to threads-1): on_thread_start once when the
    // thread starts, before it runs any task (this_worker_index() already works there);
    // on_thread_stop once when it stops, after its last task, as the pool's destructor drains (it
    // has left the pool by then: this_worker_index() is -1, and work submitted to this pool from
    // it is refused). The destructor returns after every on_thread_stop returned; the default
    // pool is never destroyed, so its workers never stop. Hooks of different workers run
    // concurrently. An exception escaping a hook goes to on_unhandled_exception (else stderr) and
    // the worker carries on as if the hook had returned.
    std::function<void(std::size_t worker_index)> on_thread_start;
    std::function<void(std::size_t worker_index)> on_thread_stop;
    // Pin worker i to the i-th CPU of the process's affinity mask (modulo the number of CPUs in
    // it, when there are more workers than CPUs), before its start hook. A CPU the system refuses
    // (e.g. taken away by a cpuset meanwhile) leaves that worker unpinned: pinning is a hint, never
    // an error.
    bool pin_threads = false;
    // Trace every worker's events (docs/OBSERVABILITY.md, "Trace"): the path of the Chrome
    // trace-event JSON written when the pool is destroyed (and by dump_trace()). Empty: the
    // CREW_TRACE environment variable decides (also for the default pool); unset or empty there
    // too, tracing is off and costs one untaken branch per task. The file is created at once: a
    // path that cannot be created makes the constructor throw std::system_error.
    std::string trace;
    // With tracing on, each worker keeps its last trace_events events (16 to 2^24, rounded up to
    // a power of two; 24 bytes each); older ones are overwritten and counted as dropped. Out of
    // range throws std::invalid_argument (checked even when tracing is off).
    std::size_t trace_events = std::size_t{1} << 16;
};

// Configure the default pool before its first use (the first crew::join, spawn, task_group,
// algorithm or default_pool() call outside an explicit pool creates it). `options` are checked at
// once: a bad size throws std::invalid_argument and keeps the previous configuration. Once the
// default pool exists, this throws crew::usage_error and changes nothing. Called again before the
// first use, the last call wins. options.threads, when set, wins over CREW_NUM_THREADS (which is
// then not read); when empty, CREW_NUM_THREADS still applies, else default_concurrency(). After
// fork(), the child's fresh default pool uses the same configuration (the child may configure
// again before its first use). Safe to call concurrently with a first use: one of the two comes
// first.
void configure_default_pool(pool_options options);

// The number of CPUs this process may use: its affinity mask, capped by a cgroup (v1 or v2) CPU
// quota, at least 1. A pool built without a size gets this many workers, at most max_threads.
std::size_t default_concurrency() noexcept;

class pool;
template <class T>
class task;  // crew/async/task.hpp
template <class T>
class join_handle;  // crew/async/join_handle.hpp

namespace detail {

// crew-internal: the shared state behind a pool.
registry& registry_of(const pool& p) noexcept;

// The pool whose worker is running the caller, else the default pool.
registry& current_registry();

// Throws std::invalid_argument, as default_pool() would, when CREW_NUM_THREADS is invalid and
// configure_default_pool() did not set the size; does not create the default pool.
void check_default_pool_environment();

template <class F>
struct spawn_task final : task {
    union {
        F fn;  // alive from construction until the task ran (or was discarded unrun)
    };
    registry* owner;
    bool fn_alive = true;

    template <class G>
    spawn_task(G&& g, registry* r) : task{&run}, fn(std::forward<G>(g)), owner(r) {}
    ~spawn_task() {
        if (fn_alive) (void)destroy_closure(fn);  // discarded unrun: the pool was closed
    }

    static void run(task* t) noexcept {
        auto* self = static_cast<spawn_task*>(t);
        try {
            std::invoke(std::move(self->fn));  // called once: rvalue-only callables work
        } catch (...) {
            self->owner->report_unhandled(std::current_exception());
        }
        self->fn_alive = false;
        if (std::exception_ptr e = destroy_closure(self->fn)) self->owner->report_unhandled(std::move(e));
        delete_task(self);
    }
};

// A task on the caller's stack whose caller blocks (or helps) until it ran: pool::run. F is the
// callable's type as passed (G& for an lvalue, G for an rvalue, which is then invoked as one).
template <class F, class R>
struct run_job final : task {
    std::remove_reference_t<F>& fn;
    result_cell<R> result;
    completion done;

    explicit run_job(std::remove_reference_t<F>& f) : task{&run}, fn(f) {}
    static void run(task* t) noexcept {
        auto* self = static_cast<run_job*>(t);
        self->result.run(std::forward<F>(self->fn));
        self->done.set();
    }
};

// Queue a heap task on `r`, or destroy it and throw when `r` refuses it (shutting down:
// pool_closed_error; created before a fork(): usage_error).
template <class T>
void schedule_or_throw(registry& r, T* t) {
    if (!r.schedule(t)) {
        delete_task(t);
        r.throw_refused();
    }
}

template <class F>
void spawn_on(registry& r, F&& f) {
    using T = spawn_task<std::decay_t<F>>;
    // An outside spawner takes its blocks from the pool's depot (worker.hpp, task_memory).
    schedule_or_throw(r, new_task_in<T>(&r.task_blocks(), std::forward<F>(f), &r));
}

}  // namespace detail

class pool {
public:
    // One worker per usable CPU (default_concurrency(), at most max_threads).
    pool();
    // `threads` workers; throws std::invalid_argument for 0 or for more than max_threads.
    explicit pool(std::size_t threads);
    // Throws std::invalid_argument for a bad size, std::system_error when the system refuses to
    // start a thread (the threads already started are stopped and joined first).
    explicit pool(pool_options options);
    // Closes the pool to outside submissions, runs every task already queued (and everything
    // those spawn), then joins the workers.
    //
    // Lifetime rule: as for any C++ object, a pool must outlive every call made on it; calling
    // spawn/submit/run on a pool whose destructor may have returned is undefined behaviour (a
    // use-after-free), and crew cannot detect it. The one case where a submission may race with
    // the destructor is work the drain itself waits for: a task of this pool (or code that such a
    // task waits for, e.g. on another pool's worker) submitting from outside this pool's workers
    // after the destructor has started gets crew::pool_closed_error, and nothing is queued.
    // Submissions from this pool's own workers are still accepted and run before it returns.
    //
    // After fork(), a pool created in the parent is unusable in the child (its threads were not
    // copied): submitting throws crew::usage_error, and destroying it frees memory without joining.
    ~pool();

    pool(const pool&) = delete;
    pool& operator=(const pool&) = delete;

    std::size_t size() const noexcept { return registry_->size(); }

    // Run `f` on a worker of this pool and return its result (or rethrow its exception). Called on
    // one of this pool's workers it simply calls f; elsewhere the caller waits (helping its own
    // pool if it is a worker of another pool).
    template <class F>
    std::invoke_result_t<F> run(F&& f) {
        using R = std::invoke_result_t<F>;
        if (registry_->owns_current_thread()) return std::invoke(std::forward<F>(f));
        detail::run_job<F, R> job(f);
        if (!registry_->inject(&job)) registry_->throw_refused();
        detail::wait_for(job.done);
        return job.result.take();
    }

    // Fire and forget. An exception escaping `f` goes to pool_options::on_unhandled_exception.
    template <class F>
    void spawn(F&& f) {
        detail::spawn_on(*registry_, std::forward<F>(f));
    }

    // Run `f` asynchronously; the future yields its result or rethrows its exception. With
    // arguments it runs std::invoke(f, args...) on copies, as std::async does: f and each argument
    // are decay-copied (moved from rvalues) when submit is called, so move-only arguments work;
    // pass std::ref(x)/std::cref(x) for a reference, a member function pointer with an object (or a
    // pointer to one) as its first argument.
    template <class F, class... Args>
    future<std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>> submit(F&& f, Args&&... args) {
        using R = std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>;
        if constexpr (sizeof...(Args) == 0) {
            using T = detail::submit_task<R, std::decay_t<F>>;
            T* t = detail::new_task<T>(std::decay_t<F>(std::forward<F>(f)));
            detail::schedule_or_throw(*registry_, t);
            return future_access<R>::make(t);
        } else {
            using B = detail::bound_call<std::decay_t<F>, std::decay_t<Args>...>;
            using T = detail::submit_task<R, B>;
            T* t = detail::new_task<T>(B{std::forward<F>(f), std::tuple<std::decay_t<Args>...>(std::forward<Args>(args)...)});
            detail::schedule_or_throw(*registry_, t);
            return future_access<R>::make(t);
        }
    }

    // Coroutine tasks (crew/async.hpp, which defines these): spawn `t` here and get its handle; run
    // `t` here and wait for its result (an outside thread blocks, a worker helps meanwhile).
    template <class T>
    join_handle<T> spawn(task<T>&& t);
    template <class T>
    T block_on(task<T>&& t);

    // Per-worker counters (cheap, always on).
    pool_metrics metrics() const { return registry_->metrics(); }

    // With tracing on: write the events retained so far as Chrome trace-event JSON to `path`
    // (empty: the pool's trace path), while the workers keep running. Throws std::system_error
    // when the file cannot be written, crew::usage_error when this pool does not trace.
    void dump_trace(const std::string& path = {}) const { registry_->dump_trace(path); }
    // Does this pool record a trace?
    bool tracing() const noexcept { return registry_->tracing(); }

private:
    friend detail::registry& detail::registry_of(const pool&) noexcept;
    std::unique_ptr<detail::registry> registry_;
};

// The pool used by crew::join, crew::spawn, task_group and the algorithms when called outside
// every pool. Created on first use with the options given to configure_default_pool(), if any;
// its size is their `threads`, else CREW_NUM_THREADS if set: a whole number from 1 to
// max_threads, surrounding whitespace ignored; empty or blank means unset; anything else makes
// every call throw std::invalid_argument; else default_concurrency() (at most max_threads).
//
// It is never destroyed (as Rayon's global pool): static objects may use crew in their
// destructors, and std::exit() may be called from a task. Process exit does not wait for it:
// work spawned on it and not waited for (crew::spawn, pool::spawn) may be abandoned mid-way when
// main returns or exit() is called, as detached threads are. To make sure work finished, wait for
// it: a task_group's wait(), a future's get(), or join/run. After fork(), the child's first use
// starts a fresh default pool; the parent's is abandoned there (never joined or freed).
pool& default_pool();

// The number of workers of the pool running the caller, else of the default pool (which this
// creates, as any use does; Rayon's current_num_threads()).
std::size_t current_pool_size();

// The index of the worker running the caller in its pool (0 to size()-1), or -1 outside every
// pool. Stable for the duration of a task; handy for per-worker scratch data.
inline int this_worker_index() noexcept {
    detail::worker* w = detail::current_worker;
    return w != nullptr ? static_cast<int>(w->index()) : -1;
}

// Fire-and-forget on the current pool (or the default pool). Nothing waits for it: on the default
// pool it may be abandoned at process exit; use a task_group or pool::submit to wait.
template <class F>
void spawn(F&& f) {
    detail::spawn_on(detail::current_registry(), std::forward<F>(f));
}

}  // namespace crew
