// crew/future.hpp -- the result of crew::pool::submit.
#pragma once

#include <future>
#include <new>
#include <utility>

#include "crew/detail/completion.hpp"
#include "crew/detail/task.hpp"
#include "crew/detail/worker.hpp"

namespace crew {

namespace detail {

// The task and the future's shared state in one allocation, shared by two references: the task's
// (dropped after it ran) and the future's.
template <class R>
struct future_state : task {
    result_cell<R> result;
    completion done;
    std_atomics::atomic<unsigned> refs{2};
    void (*destroy)(future_state*) noexcept;

    void release() noexcept {
        // acq_rel: whoever drops the last reference sees everything the other side wrote.
        if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(this);
    }
};

template <class R, class F>
struct submit_task final : future_state<R> {
    union {
        F fn;  // alive from construction until the task ran (or was discarded unrun)
    };
    bool fn_alive = true;

    explicit submit_task(F&& f) : fn(std::move(f)) {
        this->execute = &run;
        this->destroy = &destroy_self;
    }
    ~submit_task() {
        if (fn_alive) (void)destroy_closure(fn);  // discarded unrun: the pool was closed
    }

    static void run(task* t) noexcept {
        auto* self = static_cast<submit_task*>(t);
        self->result.run(std::move(self->fn));  // called once: rvalue-only callables work
        self->fn_alive = false;
        // The closure's captures die before the waiter resumes; a throwing destructor is the
        // task's exception unless the call itself threw.
        if (std::exception_ptr e = destroy_closure(self->fn)) self->result.fail_after(std::move(e));
        self->done.set();
        self->release();
    }
    static void destroy_self(future_state<R>* s) noexcept { delete_task(static_cast<submit_task*>(s)); }
};

}  // namespace detail

// Move-only handle to a submitted task's result. get() returns the value or rethrows the task's
// exception; called on a pool worker it runs other tasks while it waits instead of blocking the
// thread. An exception in a task whose future is destroyed unread is dropped, as with std::future.
template <class T>
class future {
public:
    future() noexcept = default;
    future(future&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
    future& operator=(future&& other) noexcept {
        if (this != &other) {
            reset();
            state_ = std::exchange(other.state_, nullptr);
        }
        return *this;
    }
    future(const future&) = delete;
    future& operator=(const future&) = delete;
    ~future() { reset(); }

    // False for a default-constructed or moved-from future, and after get().
    bool valid() const noexcept { return state_ != nullptr; }

    // Has the task finished? Throws std::future_error(no_state) when !valid().
    bool is_ready() const {
        check();
        return state_->done.is_set();
    }

    // Wait for the task to finish. Throws std::future_error(no_state) when !valid().
    void wait() const {
        check();
        detail::wait_for(state_->done);
    }

    // Wait, then return the value or rethrow the exception. Leaves the future invalid.
    T get() {
        wait();
        struct releaser {
            detail::future_state<T>* s;
            ~releaser() { s->release(); }
        } guard{std::exchange(state_, nullptr)};
        return guard.s->result.take();
    }

private:
    template <class>
    friend class future_access;
    explicit future(detail::future_state<T>* s) noexcept : state_(s) {}

    void check() const {
        if (state_ == nullptr) throw std::future_error(std::future_errc::no_state);
    }
    void reset() noexcept {
        if (state_ != nullptr) std::exchange(state_, nullptr)->release();
    }

    detail::future_state<T>* state_ = nullptr;
};

// crew-internal: lets pool::submit build a future.
template <class T>
class future_access {
public:
    static future<T> make(detail::future_state<T>* s) noexcept { return future<T>(s); }
};

}  // namespace crew
