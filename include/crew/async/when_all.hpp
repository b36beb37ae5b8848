// crew/async/when_all.hpp -- crew::when_all and crew::when_any: run tasks in parallel.
//
// Both spawn their children on the pool running the awaiting task, forward the awaiting task's
// cancellation to every child (children inherit it), and return only after every child finished,
// so nothing they reference can dangle. when_all runs its last child inline on the awaiting task
// (as crew::join runs its last callable): it sees the awaiting task's cancellation directly.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "crew/async/detail/oneshot_event.hpp"
#include "crew/async/join_handle.hpp"
#include "crew/async/task.hpp"

namespace crew {

namespace detail {

// Registered on the awaiting task while it waits for its children: its cancellation cancels them.
class cancel_forwarder : public cancel_hook {
public:
    cancel_forwarder() { on_cancel = &forward; }
    cancel_forwarder(const cancel_forwarder&) = delete;
    cancel_forwarder& operator=(const cancel_forwarder&) = delete;
    ~cancel_forwarder() {
        if (owner_ != nullptr) owner_->remove_cancel_hook(this);  // also when a shutdown destroys the frame
        for (async_task* c : children_) c->release();
    }

    // The children are complete in `children` (their handles keep them alive longer than this).
    void arm(std::vector<async_task*> children) {
        children_ = std::move(children);
        // Our own references: awaiting a handle consumes it (and its reference) while a
        // concurrent cancel may still be forwarding to that child.
        for (async_task* c : children_) c->state.ref_inc();
        async_task* self = current_async_task;
        if (self->add_cancel_hook(this)) owner_ = self;
        else forward(this);  // cancelled already
    }

private:
    static void forward(cancel_hook* h) noexcept {
        for (async_task* c : static_cast<cancel_forwarder*>(h)->children_) c->request_cancel();
    }
    std::vector<async_task*> children_;
    async_task* owner_ = nullptr;  // where the hook is registered (a frame may outlive a migration)
};

// Wait for `h` (not a cancellation point) and store its outcome.
template <class T>
crew::task<void> settle(join_handle<T>& h, std::optional<stored_t<T>>& out, std::exception_ptr& error) {
    try {
        if constexpr (std::is_void_v<T>) {
            co_await handle_access::await_uncancellable(h);
            out.emplace();
        } else {
            out.emplace(co_await handle_access::await_uncancellable(h));
        }
    } catch (...) {
        if (!error) error = std::current_exception();
    }
}

// settle() for every child but the last (which ran inline: its handle is empty).
template <std::size_t I, std::size_t N, class T>
crew::task<void> settle_spawned(join_handle<T>& h, std::optional<stored_t<T>>& out, std::exception_ptr& error) {
    if constexpr (I + 1 < N) co_await settle(h, out, error);
    else co_return;
}

template <class T>
stored_t<T> unwrap(std::optional<stored_t<T>>& v) {
    return std::move(*v);
}

// Run `t` here, on the awaiting task (the last child of a when_all: as join runs its last
// callable inline, one spawn, one wake and one join fewer), and store its outcome.
template <class T>
crew::task<void> settle_inline(crew::task<T>& t, std::optional<stored_t<T>>& out, std::exception_ptr& error) {
    try {
        if constexpr (std::is_void_v<T>) {
            co_await std::move(t);
            out.emplace();
        } else {
            out.emplace(co_await std::move(t));
        }
    } catch (...) {
        error = std::current_exception();
    }
}

// Spawn child I, except the last (it runs inline: an empty handle).
template <std::size_t I, std::size_t N, class T>
join_handle<T> spawn_unless_last(crew::task<T>& t) {
    if constexpr (I + 1 == N) return {};
    else return crew::spawn(std::move(t));
}

template <class... Ts, std::size_t... I>
crew::task<std::tuple<stored_t<Ts>...>> co_when_all_tuple(std::index_sequence<I...>, crew::task<Ts>... ts) {
    constexpr std::size_t n = sizeof...(Ts);
    std::tuple<crew::task<Ts>...> tasks{std::move(ts)...};
    std::tuple<join_handle<Ts>...> handles{spawn_unless_last<I, n>(std::get<I>(tasks))...};
    std::vector<async_task*> children;
    children.reserve(n - 1);
    (((I + 1 < n) ? children.push_back(handle_access::task_of(std::get<I>(handles))) : void()), ...);
    cancel_forwarder forwarder;
    forwarder.arm(std::move(children));
    std::tuple<std::optional<stored_t<Ts>>...> results;
    std::exception_ptr error, last_error;
    co_await settle_inline(std::get<n - 1>(tasks), std::get<n - 1>(results), last_error);
    ((co_await settle_spawned<I, n>(std::get<I>(handles), std::get<I>(results), error)), ...);
    if (!error) error = last_error;  // the last child is the last in argument order
    if (error) std::rethrow_exception(error);
    co_return std::tuple<stored_t<Ts>...>{unwrap<Ts>(std::get<I>(results))...};
}

template <class T>
crew::task<std::vector<stored_t<T>>> co_when_all_vector(std::vector<crew::task<T>> ts) {
    std::vector<std::optional<stored_t<T>>> results(ts.size());
    if (ts.empty()) co_return std::vector<stored_t<T>>{};
    const std::size_t last = ts.size() - 1;
    std::vector<join_handle<T>> handles;
    handles.reserve(last);
    for (std::size_t i = 0; i < last; ++i) handles.push_back(crew::spawn(std::move(ts[i])));
    std::vector<async_task*> children;
    children.reserve(last);
    for (auto& h : handles) children.push_back(handle_access::task_of(h));
    cancel_forwarder forwarder;
    forwarder.arm(std::move(children));
    std::exception_ptr error, last_error;
    co_await settle_inline(ts[last], results[last], last_error);  // the last child, here
    for (std::size_t i = 0; i < last; ++i) co_await settle(handles[i], results[i], error);
    if (!error) error = last_error;  // the last child is the last in argument order
    if (error) std::rethrow_exception(error);
    std::vector<stored_t<T>> out;
    out.reserve(results.size());
    for (auto& r : results) out.push_back(std::move(*r));
    co_return out;
}

// The shared state of one when_any: the first child to finish claims it.
template <class T>
struct any_state {
    std::atomic<bool> claimed{false};
    std::size_t index = 0;
    std::optional<stored_t<T>> value;
    std::exception_ptr error;
    oneshot_event first;
};

template <class T>
crew::task<void> any_child(crew::task<T> t, any_state<T>& s, std::size_t index) {
    std::optional<stored_t<T>> v;
    std::exception_ptr e;
    try {
        if constexpr (std::is_void_v<T>) {
            co_await std::move(t);
            v.emplace();
        } else {
            v.emplace(co_await std::move(t));
        }
    } catch (...) {
        e = std::current_exception();
    }
    // acq_rel: the winner's writes below are published by first.set() (its lock); the exchange
    // only decides the winner.
    if (!s.claimed.exchange(true, std::memory_order_acq_rel)) {
        s.index = index;
        s.value = std::move(v);
        s.error = std::move(e);
        s.first.set();
    }
}

template <class T>
crew::task<std::pair<std::size_t, stored_t<T>>> co_when_any_vector(std::vector<crew::task<T>> ts) {
    if (ts.empty()) throw std::invalid_argument("crew::when_any: no tasks");
    any_state<T> state;
    std::vector<join_handle<void>> handles;
    handles.reserve(ts.size());
    for (std::size_t i = 0; i < ts.size(); ++i) handles.push_back(crew::spawn(any_child(std::move(ts[i]), state, i)));
    std::vector<async_task*> children;
    for (auto& h : handles) children.push_back(handle_access::task_of(h));
    {
        cancel_forwarder forwarder;
        forwarder.arm(children);
        co_await state.first.wait(cancellable::no);
    }
    for (async_task* c : children) c->request_cancel();  // the losers
    std::optional<std::monostate> ignored;
    std::exception_ptr ignored_error;
    for (auto& h : handles) co_await settle(h, ignored, ignored_error);
    if (state.error) std::rethrow_exception(state.error);
    co_return std::pair<std::size_t, stored_t<T>>{state.index, std::move(*state.value)};
}

}  // namespace detail

// Run every task in parallel (on the pool of the awaiting task) and give all their results, in
// order (void as std::monostate). After every child finished, the first exception (in argument
// order) is rethrown. Cancelling the awaiting task cancels the children.
// At least one task: an empty crew::when_all() is the futures' form (crew/future.hpp).
//   auto [a, b] = co_await crew::when_all(fetch(1), fetch(2));
template <class T0, class... Ts>
task<std::tuple<detail::stored_t<T0>, detail::stored_t<Ts>...>> when_all(task<T0> t0, task<Ts>... ts) {
    return detail::co_when_all_tuple<T0, Ts...>(std::index_sequence_for<T0, Ts...>{}, std::move(t0),
                                                 std::move(ts)...);
}

template <class T>
task<std::vector<detail::stored_t<T>>> when_all(std::vector<task<T>> ts) {
    return detail::co_when_all_vector<T>(std::move(ts));
}

// Run every task in parallel; the first to finish wins: its index and value (or its exception,
// rethrown). The others are cancelled, and when_any returns once all of them finished. Throws
// std::invalid_argument for an empty vector.
template <class T>
task<std::pair<std::size_t, detail::stored_t<T>>> when_any(std::vector<task<T>> ts) {
    return detail::co_when_any_vector<T>(std::move(ts));
}

}  // namespace crew
