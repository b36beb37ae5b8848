// crew/task_group.hpp -- a dynamic number of child tasks, waited for together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <type_traits>
#include <utility>

#include "crew/errors.hpp"
#include "crew/pool.hpp"
#include "crew/detail/cold.hpp"
#include "crew/detail/completion.hpp"
#include "crew/detail/group_count.hpp"
#include "crew/detail/task.hpp"
#include "crew/detail/worker.hpp"
#include "crew/detail/workspan_hooks.hpp"

namespace crew {

class task_group;

// What task_group::wait() and run_and_wait() report (as oneTBB's tbb::task_group_status).
// crew's wait() never returns not_complete (it always waits for the children); the name exists
// so that ported code comparing against it compiles.
enum class task_group_status { not_complete, complete, canceled };

// True when the task running on the calling thread is a child of a canceled task_group, directly
// or through nesting (a group created inside a child of a canceled group); false outside every
// group child. As tbb::is_current_task_group_canceling(). Cheap: one thread-local read and one
// relaxed load.
inline bool is_canceling() noexcept { return detail::cancellation_requested(); }

namespace detail {

// The chain of task groups whose tasks are running on this thread, innermost first; it lets
// wait() refuse to wait for the group of a task that is itself still running here.
struct group_frame {
    const task_group* group;
    group_frame* outer;
    // worker::helped_nesting() when the task started: equal to the current value when the task is
    // the one running the caller, smaller when the caller was started on top of it by a wait.
    unsigned nesting;
};
// initial-exec: one %fs-relative load (as current_worker); every child reads and writes it.
inline constinit thread_local group_frame* running_groups __attribute__((tls_model("initial-exec"))) = nullptr;

// The drain of a wait() running on this thread (innermost): the children of `group` that finish
// on this thread meanwhile count here and are folded into the group's count in one RMW
// (detail/group_count.hpp, "The drain"). Everything this thread runs during the drain is nested on
// its stack inside it, so all of them have counted before the fold.
struct group_drain {
    const task_group* group;
    std::uint64_t finished;
    group_drain* outer;
};
inline constinit thread_local group_drain* current_drain __attribute__((tls_model("initial-exec"))) = nullptr;

template <class F>
struct group_task;

}  // namespace detail

// Where children run: a group built with task_group(pool& p) sends every child to p. A
// default-constructed group sends each child to the pool of the thread that calls run(): that
// worker's own deque when the caller is a pool worker, else the default pool. (So a group created
// outside every pool and used inside p.run() runs its children on p.) The counting does not depend
// on the pool, so one group may have children on several pools.
//
// Threads: run() may be called from any thread, including from the group's own tasks, also while
// another thread waits. wait() from one thread at a time: a second thread calling wait() while one
// waits gets crew::usage_error, and so does wait() from inside one of the group's own tasks. A
// wait() returns once every child whose run() happened before the wait() began has finished
// (children added concurrently may or may not be waited for).
//
// Memory-model review (C++20: release sequences continue only through RMWs). The count is
// detail/group_count.hpp: every write of its word is an RMW, and no reset exists (the old
// `pending_.store(1)` and `done_.reset()` were plain stores over concurrently changing words: they
// lost increments and raced the last child's set()). failed_ changes by CAS (a child claims the
// slot) and two release stores (error_ready after storing error_; no_error after wait() took it);
// each reader acquires from the store that wrote the value it acts on (record()'s CAS reads
// wait()'s no_error; wait()/~task_group read error_ready), so no release sequence has to reach
// across a plain store. error_ is touched only by the claiming child and then by the one waiter.
//
// Exceptions: the first exception of a child (thrown by it, or by the destructor of its captured
// state) is rethrown by wait(); the rest are dropped. One never collected by wait() goes, when the
// group is destroyed, to the unhandled-exception handler of the pool that ran that child. The first
// exception also cancels the group (as in oneTBB), so children that have not started are dropped.
//
// Cancellation (cancel(), or a child's first exception): children that have not started yet are
// dropped -- counted as finished, their callable destroyed, never called; children already running
// see it through crew::is_canceling() and may stop early. It reaches every group nested in this
// one (a group constructed while one of this group's children runs on the constructing thread),
// at any depth, as oneTBB's bound task_group_context does. wait() still waits for every child,
// then returns task_group_status::canceled and resets the flag: the group is reusable. (A nested
// group whose enclosing group is still canceled stays canceled after its own wait().)
class task_group {
public:
    // Outside every pool it checks CREW_NUM_THREADS (std::invalid_argument if invalid, as
    // default_pool()), since its children may need the default pool; it does not create it.
    task_group() : pool_(nullptr) {
        if (detail::current_worker == nullptr) detail::check_default_pool_environment();
        if (detail::current_context != nullptr) nest_cold();
    }
    explicit task_group(pool& p) : pool_(&detail::registry_of(p)) {
        if (detail::current_context != nullptr) nest_cold();
    }
    task_group(const task_group&) = delete;
    task_group& operator=(const task_group&) = delete;

    // Waits for unfinished children (never leaves a task dangling). An exception not collected by
    // wait() goes to the pool's unhandled-exception handler.
    ~task_group();

    // Starts f as a child. Throws crew::pool_closed_error when the pool is shutting down.
    template <class F>
    void run(F&& f) {
        // On a worker of the group's pool (every child of a recursive task_group program): push
        // on its own deque directly. fork_worker is that worker unless a crew::workspan strand is
        // measured here (detail/thread_state.hpp): one thread-local load on this path.
        detail::worker* w = detail::fork_worker;
        if (w != nullptr && (pool_ == nullptr || pool_ == &w->owner())) [[likely]]
            return run_here(*w, std::forward<F>(f));
        if constexpr (detail::ws_hookable<F>)  // crew::workspan measuring (detail/workspan_hooks.hpp)
            if (detail::workspan_active()) [[unlikely]]
                return detail::cold_call([&] { detail::workspan_group_run(*this, std::forward<F>(f)); });
        // Elsewhere (another pool's worker, no pool): the pool's schedule(), which may inject.
        run_elsewhere(std::forward<F>(f));
    }

    // Waits for every child (running other tasks meanwhile when called on a worker), then rethrows
    // the first exception a child threw, if any. Returns task_group_status::canceled when the group
    // was canceled, else complete. The group can be used again afterwards (cancellation reset).
    task_group_status wait();

    // Runs f on the calling thread as a child of this group (it sees is_canceling(); it is dropped
    // when the group is already canceled; its exception is the group's), then wait(). As oneTBB.
    template <class F>
    task_group_status run_and_wait(F&& f) {
        count_.add();
        run_child(std::forward<F>(f), *this);
        child_done();
        return wait();
    }

    // Cancels the group and every group nested in it: see "Cancellation" above. Any thread, any
    // time; idempotent until the next wait() returns.
    void cancel() noexcept;

    // Has cancel() (or a child's exception, or an enclosing group's cancel()) happened since the
    // last wait() returned?
    bool is_canceling() const noexcept { return ctx_.canceled.load(std::memory_order_relaxed); }

private:
    template <class F>
    friend struct detail::group_task;

    // failed_ values: no exception, a child is storing error_, error_ holds one for wait().
    enum : std::uint8_t { no_error, storing_error, error_ready };

    // The child must not touch *this afterwards. On the thread draining this group (its wait() on
    // a worker), a plain increment instead of the shared RMW: see detail::group_drain.
    void child_done() noexcept {
        detail::group_drain* d = detail::current_drain;
        if (d != nullptr && d->group == this) [[likely]] {
            ++d->finished;
            return;
        }
        count_.finish();
    }
    void record(std::exception_ptr e) noexcept;
    void wait_for_children();
    void drain(detail::worker& w) noexcept;
    void check_not_below_own_task() const;
    void nest_cold();
    task_group_status finish_wait() noexcept;

    // Calls one child's callable on this thread, as what it was passed as, or drops it when the
    // group is canceled; the caller then destroys it and finishes the child. For children and
    // run_and_wait. always_inline: clang otherwise keeps it out of line (its try/catch), one more
    // call per child (docs/DESIGN.md, "Task groups", session 11).
    template <class F>
    [[gnu::always_inline]] static void run_child(F&& fn, task_group& g) noexcept;

    // A new child: counted, then allocated by make() (returns the task); the count is undone when
    // the allocation (or the copy/move of the callable into it) throws. Counting comes first: the
    // child calls finish() once it runs, and it can run as soon as it is pushed. always_inline:
    // clang otherwise keeps it out of line (its try/catch), one more call per run().
    template <class Make>
    [[gnu::always_inline]] auto* new_child(Make&& make) {
        count_.add();
        try {
            return make();
        } catch (...) {
            count_.finish();
            throw;
        }
    }

    // run() on a worker `w` of the target pool: counted, then pushed on w's deque (a worker's
    // own push never refuses, as registry::schedule). always_inline: clang otherwise calls it out
    // of line from every run() (see run_child).
    template <class F>
    [[gnu::always_inline]] void run_here(detail::worker& w, F&& f) {
        using T = detail::group_task<std::decay_t<F>>;
        T* t = new_child([&] { return detail::new_task_on<T>(w, std::forward<F>(f), this); });
        detail::trace::spawn(w.trace());
        w.push(t);
    }

    // run() from outside the target pool (another pool's worker, or no pool): through schedule().
    template <class F>
    void run_elsewhere(F&& f) {
        using T = detail::group_task<std::decay_t<F>>;
        detail::registry& target = pool_ != nullptr ? *pool_ : detail::current_registry();
        T* t = new_child([&] { return detail::new_task<T>(std::forward<F>(f), this); });
        if (!target.schedule(t)) {
            detail::delete_task(t);
            count_.finish();
            target.throw_refused();  // pool_closed_error, or usage_error in a forked child
        }
    }

    // pool_: the pool of task_group(pool&), nullptr for "the caller's pool".
    detail::registry* pool_;
    // count_: unfinished children and the waiter hand-off (detail/group_count.hpp).
    detail::basic_group_count<detail::std_atomics, detail::completion> count_;
    // failed_: no_error -> storing_error by the first child that throws (CAS), -> error_ready once it
    // stored error_ and error_pool_; back to no_error by wait() after taking error_.
    detail::std_atomics::atomic<std::uint8_t> failed_{no_error};
    std::exception_ptr error_;
    detail::registry* error_pool_ = nullptr;  // the pool that ran the child that stored error_
    // ctx_: the cancellation flag and the nesting links (detail/task.hpp).
    detail::cancel_context ctx_;
};

namespace detail {

template <class F>
struct group_task final : task {
    union {
        F fn;  // alive from construction until the task ran (or was discarded unrun)
    };
    task_group* group;
    bool fn_alive = true;

    template <class G>
    group_task(G&& f, task_group* g) : task{&run}, fn(std::forward<G>(f)), group(g) {}
    // A child that never ran (its pool refused it): a throwing destructor is dropped, since the
    // caller is about to throw pool_closed_error.
    ~group_task() {
        if (fn_alive) (void)destroy_closure(fn);
    }

    static void run(task* t) noexcept {
        auto* self = static_cast<group_task*>(t);
        task_group* g = self->group;
        task_group::run_child(std::move(self->fn), *g);
        // Captures die before the waiter resumes. A throwing destructor counts as the child's own
        // exception (never std::terminate); the child still finishes exactly once below.
        self->fn_alive = false;
        if (std::exception_ptr e = destroy_closure(self->fn)) g->record(std::move(e));
        delete_task(self);
        g->child_done();
    }
};

}  // namespace detail

template <class F>
[[gnu::always_inline]] inline void task_group::run_child(F&& fn, task_group& g) noexcept {
    // relaxed: the flag carries no data (see detail::cancellation_requested); a child that misses a
    // concurrent cancel() runs as one that started just before it.
    if (g.ctx_.canceled.load(std::memory_order_relaxed)) return;  // dropped: never called
    detail::worker* w = detail::current_worker;
    detail::group_frame frame{&g, detail::running_groups, w != nullptr ? w->helped_nesting() : 0};
    detail::running_groups = &frame;
    detail::cancel_context* const outer = std::exchange(detail::current_context, &g.ctx_);
    try {
        std::invoke(std::forward<F>(fn));  // called once: rvalue-only callables work
    } catch (...) {
        g.record(std::current_exception());
    }
    detail::current_context = outer;
    detail::running_groups = frame.outer;
}

}  // namespace crew
