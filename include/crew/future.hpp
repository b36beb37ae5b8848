// crew/future.hpp -- the result of crew::pool::submit.
#pragma once

#include <chrono>
#include <cstddef>
#include <future>
#include <memory>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "crew/detail/completion.hpp"
#include "crew/detail/task.hpp"
#include "crew/detail/worker.hpp"

namespace crew {

namespace detail {

// Something to run once a future's state is complete (when_all's arrival). Installed at most once
// per state, by whoever owns the future.
struct continuation {
    void (*fire)(continuation*) noexcept;
};

// The one-shot hand-off between complete() and then(): next_ holds nullptr (neither happened
// yet), an installed continuation, or fired() (complete() ran first).
class continuation_slot {
public:
    // The producer, after done.set(). acq_rel: release pairs with then()'s acquire CAS failure (the
    // result it reads); acquire pairs with then()'s release CAS (the continuation's fields).
    void fire() noexcept {
        continuation* c = next_.exchange(fired(), std::memory_order_acq_rel);
        if (c != nullptr) c->fire(c);
    }
    // The future's owner: runs c now when the state is already complete, else at complete().
    void then(continuation* c) noexcept {
        continuation* expected = nullptr;
        // acq_rel / acquire: see fire().
        if (!next_.compare_exchange_strong(expected, c, std::memory_order_acq_rel, std::memory_order_acquire))
            c->fire(c);
    }

private:
    static continuation* fired() noexcept {
        static continuation marker{nullptr};
        return &marker;
    }
    std_atomics::atomic<continuation*> next_{nullptr};
};

// The task and the future's shared state in one allocation, shared by two references: the task's
// (dropped after it ran) and the future's. (when_all's state is one too, without a task.)
template <class R>
struct future_state : task {
    result_cell<R> result;
    completion done;
    continuation_slot after;
    std_atomics::atomic<unsigned> refs{2};
    void (*destroy)(future_state*) noexcept;

    // The producer, once result holds the outcome: wake the waiter, then run a continuation. The
    // producer still holds its reference, so the state is alive throughout.
    void complete() noexcept {
        done.set();
        after.fire();
    }

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
        self->complete();
        self->release();
    }
    static void destroy_self(future_state<R>* s) noexcept { delete_task(static_cast<submit_task*>(s)); }
};

// pool::submit(f, args...): f and the arguments decay-copied (moved from rvalues), as std::async
// and std::thread bind them; called once as std::invoke(std::move(f), std::move(args)...), so
// move-only arguments work and std::ref/std::cref pass references.
template <class F, class... Args>
struct bound_call {
    F fn;
    std::tuple<Args...> args;
    decltype(auto) operator()() {
        return std::apply([this](Args&... a) -> decltype(auto) { return std::invoke(std::move(fn), std::move(a)...); },
                          args);
    }
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

    // Wait at most `timeout` / until `deadline`: std::future_status::ready or ::timeout (never
    // deferred). Throws std::future_error(no_state) when !valid(). Unlike wait(), these never run
    // other tasks, also on a pool worker: the thread sleeps (a timed futex wait) until the result is
    // ready or the time is up, so the deadline is kept however long other tasks are. On a worker
    // this holds the worker for up to the timeout; the awaited task runs meanwhile only if another
    // worker takes it (in a one-worker pool, a task queued behind the caller times out). A zero or
    // negative timeout only polls. A deadline of a clock other than steady_clock is re-checked
    // against that clock after each sleep, as std::future does.
    template <class Rep, class Period>
    std::future_status wait_for(const std::chrono::duration<Rep, Period>& timeout) const {
        using namespace std::chrono;
        constexpr hours forever{24 * 365 * 100};  // longer waits are capped (no overflow)
        const auto bounded = timeout > forever ? steady_clock::duration(forever) : ceil<steady_clock::duration>(timeout);
        return wait_until(steady_clock::now() + bounded);
    }

    template <class Clock, class Duration>
    std::future_status wait_until(const std::chrono::time_point<Clock, Duration>& deadline) const {
        using namespace std::chrono;
        check();
        for (;;) {
            if (state_->done.is_set()) return std::future_status::ready;
            const auto now = Clock::now();
            if (now >= deadline) return std::future_status::timeout;
            const auto left = deadline - now;  // positive: no overflow
            const nanoseconds slice = left > hours(1) ? nanoseconds(hours(1)) : ceil<nanoseconds>(left);
            if (state_->done.block_for(slice.count())) return std::future_status::ready;
        }
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

// crew-internal: lets pool::submit and when_all build a future, and when_all reach its state.
template <class T>
class future_access {
public:
    static future<T> make(detail::future_state<T>* s) noexcept { return future<T>(s); }
    static detail::future_state<T>* state(const future<T>& f) noexcept { return f.state_; }
};

namespace detail {

// when_all's shared state: a future_state with no task. References: the returned future's, and
// the arrivals' (dropped after the last input completed and the result was stored).
template <class R>
struct when_all_base : future_state<R> {
    std_atomics::atomic<std::size_t> remaining;

    explicit when_all_base(std::size_t inputs) : remaining(inputs + 1) {}  // +1: the installer's

    // An input completed (or the installer finished installing): the last arrival combines.
    void arrive() noexcept {
        // acq_rel: every arrival's result (read by combine) is visible to the last one.
        if (remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
        combine_fn(this);
        this->complete();
        this->release();
    }
    void (*combine_fn)(when_all_base*) noexcept = nullptr;
};

struct when_all_arrival : continuation {
    void (*arrive)(void*) noexcept;
    void* owner;
};

template <class R>
void when_all_arrive(void* owner) noexcept {
    static_cast<when_all_base<R>*>(owner)->arrive();
}

template <class R>
void init_arrival(when_all_arrival& a, when_all_base<R>* owner) noexcept {
    a.fire = [](continuation* c) noexcept {
        auto* self = static_cast<when_all_arrival*>(c);
        self->arrive(self->owner);
    };
    a.arrive = &when_all_arrive<R>;
    a.owner = owner;
}

template <class T>
void check_valid_input(const future<T>& f) {
    if (!f.valid()) throw std::future_error(std::future_errc::no_state);
}

template <class T>
stored_t<T> get_stored(future<T>& f) {
    if constexpr (std::is_void_v<T>) {
        f.get();
        return {};
    } else {
        return f.get();
    }
}

template <class... T>
struct when_all_tuple final : when_all_base<std::tuple<stored_t<T>...>> {
    using R = std::tuple<stored_t<T>...>;
    std::tuple<future<T>...> inputs;
    when_all_arrival arrivals[sizeof...(T) + 1];  // +1: no zero-length array for when_all()

    explicit when_all_tuple(future<T>&&... in) : when_all_base<R>(sizeof...(T)), inputs(std::move(in)...) {
        this->destroy = [](future_state<R>* s) noexcept { delete static_cast<when_all_tuple*>(s); };
        this->combine_fn = [](when_all_base<R>* b) noexcept {
            auto* self = static_cast<when_all_tuple*>(b);
            // Braced initialization runs left to right: the first failed input in argument order
            // throws, and its exception becomes the result's.
            self->result.run([self]() -> R {
                return std::apply([](future<T>&... f) { return R{get_stored(f)...}; }, self->inputs);
            });
        };
    }
    void start() noexcept {
        std::size_t i = 0;
        std::apply([&](future<T>&... f) { (install(f, i++), ...); }, inputs);
        this->arrive();  // the installer's own arrival: no combine before every input was installed
    }
    template <class U>
    void install(future<U>& f, std::size_t i) noexcept {
        init_arrival(arrivals[i], static_cast<when_all_base<R>*>(this));
        future_access<U>::state(f)->after.then(&arrivals[i]);
    }
};

template <class T>
struct when_all_vector final : when_all_base<std::vector<stored_t<T>>> {
    using R = std::vector<stored_t<T>>;
    std::vector<future<T>> inputs;
    std::unique_ptr<when_all_arrival[]> arrivals;

    explicit when_all_vector(std::vector<future<T>>&& in)
        : when_all_base<R>(in.size()), inputs(std::move(in)), arrivals(new when_all_arrival[inputs.size()]) {
        this->destroy = [](future_state<R>* s) noexcept { delete static_cast<when_all_vector*>(s); };
        this->combine_fn = [](when_all_base<R>* b) noexcept {
            auto* self = static_cast<when_all_vector*>(b);
            self->result.run([self] {
                R out;
                out.reserve(self->inputs.size());
                std::exception_ptr first;  // every input is taken (released), in order
                for (auto& f : self->inputs) {
                    try {
                        out.push_back(get_stored(f));
                    } catch (...) {
                        if (!first) first = std::current_exception();
                    }
                }
                if (first) std::rethrow_exception(first);
                return out;
            });
        };
    }
    void start() noexcept {
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            init_arrival(arrivals[i], static_cast<when_all_base<R>*>(this));
            future_access<T>::state(inputs[i])->after.then(&arrivals[i]);
        }
        this->arrive();
    }
};

}  // namespace detail

// A future that becomes ready when every input is, holding std::tuple of their results (void as
// std::monostate, as crew::join). The inputs are moved in (they must be valid: otherwise
// std::future_error(no_state), and none was taken). If inputs failed, get() rethrows the exception
// of the first failed one in argument order; the others are dropped. Nothing blocks or waits: the
// last input to finish builds the tuple on its own thread (or the caller, when all were ready).
// Any future may be an input, including another when_all's.
template <class... T>
future<std::tuple<detail::stored_t<T>...>> when_all(future<T>... inputs) {
    (detail::check_valid_input(inputs), ...);
    using S = detail::when_all_tuple<T...>;
    auto* s = new S(std::move(inputs)...);
    s->start();
    return future_access<typename S::R>::make(s);
}

// The same for a run-time number of futures: a future of std::vector of their results, in order
// (an empty vector is ready at once). An invalid input throws std::future_error(no_state) before
// any is taken; the first exception in vector order wins.
template <class T>
future<std::vector<detail::stored_t<T>>> when_all(std::vector<future<T>> inputs) {
    for (const auto& f : inputs) detail::check_valid_input(f);
    using S = detail::when_all_vector<T>;
    auto* s = new S(std::move(inputs));
    s->start();
    return future_access<typename S::R>::make(s);
}

}  // namespace crew
