// crew/task_group.hpp -- a dynamic number of child tasks, waited for together.
#pragma once

#include <cstddef>
#include <exception>
#include <type_traits>
#include <utility>

#include "crew/errors.hpp"
#include "crew/pool.hpp"
#include "crew/detail/completion.hpp"
#include "crew/detail/task.hpp"
#include "crew/detail/worker.hpp"

namespace crew {

class task_group;

namespace detail {

// The chain of task groups whose tasks are running on this thread, innermost first; it lets
// wait() refuse to wait for the group of a task that is itself still running here.
struct group_frame {
    const task_group* group;
    group_frame* outer;
};
inline constinit thread_local group_frame* running_groups = nullptr;

template <class F>
struct group_task;

}  // namespace detail

// Children run on the pool that created the group (the caller's pool, or the default pool).
// run() may be called from any thread, including from the group's own tasks; wait() from one
// thread at a time, not from inside the group's own tasks (that throws crew::usage_error).
class task_group {
public:
    task_group() : owner_(&detail::current_registry()) {}
    explicit task_group(pool& p) noexcept : owner_(&detail::registry_of(p)) {}
    task_group(const task_group&) = delete;
    task_group& operator=(const task_group&) = delete;

    // Waits for unfinished children (never leaves a task dangling). An exception not collected by
    // wait() goes to the pool's unhandled-exception handler.
    ~task_group();

    // Starts f as a child. Throws crew::pool_closed_error when the pool is shutting down.
    template <class F>
    void run(F&& f) {
        using T = detail::group_task<std::decay_t<F>>;
        pending_.fetch_add(1, std::memory_order_relaxed);  // the caller holds a count: relaxed is enough
        T* t = nullptr;
        try {
            t = detail::new_task<T>(std::forward<F>(f), this);
        } catch (...) {
            child_done();
            throw;
        }
        if (!owner_->schedule(t)) {
            detail::delete_task(t);
            child_done();
            throw pool_closed_error();
        }
    }

    // Waits for every child (running other tasks meanwhile when called on a worker), then rethrows
    // the first exception a child threw, if any. The group can be used again afterwards.
    void wait();

private:
    template <class F>
    friend struct detail::group_task;

    void child_done() noexcept {
        // acq_rel: the last child's effects are visible to the waiter, who acquires via done_.
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.set();
    }
    void record(std::exception_ptr e) noexcept;

    detail::registry* owner_;
    // pending_: 1 (the group's own count, dropped by wait()) + unfinished children.
    detail::std_atomics::atomic<std::size_t> pending_{1};
    detail::completion done_;
    // failed_: set once by the first child that threw; error_ written only by that child.
    detail::std_atomics::atomic<bool> failed_{false};
    std::exception_ptr error_;
};

namespace detail {

template <class F>
struct group_task final : task {
    F fn;
    task_group* group;

    template <class G>
    group_task(G&& f, task_group* g) : task{&run}, fn(std::forward<G>(f)), group(g) {}

    static void run(task* t) noexcept {
        auto* self = static_cast<group_task*>(t);
        task_group* g = self->group;
        group_frame frame{g, running_groups};
        running_groups = &frame;
        try {
            self->fn();
        } catch (...) {
            g->record(std::current_exception());
        }
        running_groups = frame.outer;
        self->~group_task();  // captures die before the waiter resumes
        g->child_done();
        free_task_memory<group_task>(self);
    }
};

}  // namespace detail

}  // namespace crew
