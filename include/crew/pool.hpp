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

struct pool_options {
    // Number of worker threads; empty means one per CPU this process may use (affinity mask and
    // cgroup CPU quota). 0 is an error.
    std::optional<std::size_t> threads;
    // Called with the exception that escaped a spawn()ed task, on the worker that ran it. Empty:
    // the exception's what() is printed to stderr. The worker always survives.
    std::function<void(std::exception_ptr)> on_unhandled_exception;
    // Stack size of each worker thread (virtual memory; pages are committed as used).
    std::size_t stack_size = std::size_t{64} << 20;
    // Prefix of the worker threads' names (as shown by top -H, gdb).
    std::string name = "crew";
};

// The number of CPUs this process may use (the default pool size).
std::size_t default_concurrency() noexcept;

class pool;

namespace detail {

// crew-internal: the shared state behind a pool.
registry& registry_of(const pool& p) noexcept;

// The pool whose worker is running the caller, else the default pool.
registry& current_registry();

// Throws std::invalid_argument, as default_pool() would, when CREW_NUM_THREADS is invalid; does
// not create the default pool.
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

// Queue a heap task on `r`, or destroy it and throw when `r` is shutting down.
template <class T>
void schedule_or_throw(registry& r, T* t) {
    if (!r.schedule(t)) {
        delete_task(t);
        throw pool_closed_error();
    }
}

template <class F>
void spawn_on(registry& r, F&& f) {
    using T = spawn_task<std::decay_t<F>>;
    schedule_or_throw(r, new_task<T>(std::forward<F>(f), &r));
}

}  // namespace detail

class pool {
public:
    // One worker per usable CPU.
    pool();
    // `threads` workers; throws std::invalid_argument for 0 or for more than crew supports.
    explicit pool(std::size_t threads);
    explicit pool(pool_options options);
    // Runs every task already queued (and everything those spawn), then joins the workers.
    // Submitting from outside after destruction began throws crew::pool_closed_error.
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
        if (!registry_->inject(&job)) throw pool_closed_error();
        detail::wait_for(job.done);
        return job.result.take();
    }

    // Fire and forget. An exception escaping `f` goes to pool_options::on_unhandled_exception.
    template <class F>
    void spawn(F&& f) {
        detail::spawn_on(*registry_, std::forward<F>(f));
    }

    // Run `f` asynchronously; the future yields its result or rethrows its exception.
    template <class F>
    future<std::invoke_result_t<std::decay_t<F>>> submit(F&& f) {
        using R = std::invoke_result_t<std::decay_t<F>>;
        using T = detail::submit_task<R, std::decay_t<F>>;
        T* t = detail::new_task<T>(std::decay_t<F>(std::forward<F>(f)));
        detail::schedule_or_throw(*registry_, t);
        return future_access<R>::make(t);
    }

    // Per-worker counters (cheap, always on).
    pool_metrics metrics() const { return registry_->metrics(); }

private:
    friend detail::registry& detail::registry_of(const pool&) noexcept;
    std::unique_ptr<detail::registry> registry_;
};

// The pool used by crew::join and friends when called outside every pool. Created on first use
// with default_concurrency() workers, or CREW_NUM_THREADS if set (a whole number >= 1; anything
// else makes this throw std::invalid_argument). Destroyed at exit after finishing its work.
pool& default_pool();

// The index of the worker running the caller in its pool, or -1 outside every pool.
inline int this_worker_index() noexcept {
    detail::worker* w = detail::current_worker;
    return w != nullptr ? static_cast<int>(w->index()) : -1;
}

// Fire-and-forget on the current pool (or the default pool).
template <class F>
void spawn(F&& f) {
    detail::spawn_on(detail::current_registry(), std::forward<F>(f));
}

}  // namespace crew
