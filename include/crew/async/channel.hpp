// crew/async/channel.hpp -- crew::channel<T>: a bounded multi-producer multi-consumer queue for
// coroutine tasks. A full channel suspends the sender, an empty one the receiver; neither blocks a
// worker.
//
//   crew::channel<int> ch{16};
//   bool ok = co_await ch.send(42);              // false once the channel is closed
//   std::optional<int> v = co_await ch.receive(); // std::nullopt once closed AND drained
//   ch.close();
//
// Semantics (docs/ASYNC.md, "Primitives"):
//   * capacity >= 1 (0 throws std::invalid_argument; there is no rendezvous mode). A capacity whose
//     buffer cannot be allocated throws std::bad_alloc (std::bad_array_new_length when its size
//     overflows). The buffer is allocated with the channel, in one block: sends never allocate.
//   * send(v) takes v by value into the awaitable. If the channel is closed (before the send, or
//     while the sender waits), the co_await returns false and the value is destroyed with the
//     awaitable -- it is dropped, never delivered. try_send(v) moves from v only when it returns
//     true, so a caller that must keep an undeliverable value uses try_send.
//   * FIFO: values from one sender are received in the order sent; suspended senders and
//     receivers are served in arrival order.
//   * Cancellation: a sender or receiver suspended here when its task is cancelled leaves the list
//     and its co_await throws crew::cancelled_error. A value is never lost to a cancelled task: a
//     value being handed to a receiver that was cancelled at that moment goes to the next receiver
//     or into the buffer, and a cancelled sender's value was never taken (it is destroyed with its
//     awaitable, as the task unwinds).
//   * Budget: a send or receive that completes without suspending spends one unit of the task's
//     cooperative budget; when it is exhausted the operation still completes, and the task then
//     yields (it goes to the back of its worker's queue) before the co_await returns.
//   * Destroying a channel while tasks are suspended on it acts as close() for them: suspended
//     receivers get std::nullopt, suspended senders false. (They never touch the channel again.)
//     Buffered values are destroyed.
//   * T must be nothrow move constructible (a value handed to a receiver that was cancelled at
//     that moment is moved back). All member functions may be called from any thread; send and
//     receive only from a crew coroutine task.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "crew/async/detail/wait_list.hpp"

namespace crew {

namespace detail {

// A fixed-capacity FIFO of values in storage it does not own (the channel's buffer, in the same
// block as the channel's state; guarded by the channel's lock). Only live values are constructed:
// a slot holds a T between push and pop. No division: the indices wrap by comparison.
template <class T>
class value_ring {
public:
    value_ring(void* storage, std::size_t capacity) noexcept : slots_(static_cast<unsigned char*>(storage)), cap_(capacity) {}
    ~value_ring() {
        while (!empty()) (void)pop_front();
    }
    value_ring(const value_ring&) = delete;
    value_ring& operator=(const value_ring&) = delete;

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    void push_back(T&& v) noexcept { ::new (static_cast<void*>(raw(wrap(head_ + size_++)))) T(std::move(v)); }
    T pop_front() noexcept {
        T v = take(head_);
        head_ = wrap(head_ + 1);
        --size_;
        return v;
    }
    T pop_back() noexcept { return take(wrap(head_ + --size_)); }

private:
    std::size_t wrap(std::size_t i) const noexcept { return i >= cap_ ? i - cap_ : i; }  // i < 2 * cap_
    unsigned char* raw(std::size_t i) const noexcept { return slots_ + i * sizeof(T); }
    T take(std::size_t i) noexcept {
        T* p = std::launder(reinterpret_cast<T*>(raw(i)));
        T v(std::move(*p));
        p->~T();
        return v;
    }
    unsigned char* slots_;
    std::size_t cap_;
    std::size_t head_ = 0;
    std::size_t size_ = 0;
};

}  // namespace detail

template <class T>
class channel {
    static_assert(std::is_nothrow_move_constructible_v<T>, "crew::channel<T> needs a nothrow move constructor");
    static_assert(std::is_object_v<T> && !std::is_const_v<T>, "crew::channel<T> needs a non-const object type");

    struct send_node : detail::wait_node {
        std::optional<T> value;  // engaged until a receiver or the buffer takes it
        bool ok = false;         // the value was taken (set by the releaser before waking)
    };
    struct recv_node : detail::wait_node {
        std::optional<T> value;  // set by the releaser; stays empty when the channel closed
    };

    struct state final : detail::wait_state {
        // Where the buffer's slots begin: after the state, aligned for T (new_wait_state's block is
        // 16-byte aligned; an over-aligned T gets alignof(T) bytes more, see make_state).
        static constexpr std::size_t pad = alignof(T) > alignof(detail::wait_state) ? alignof(T) : 0;
        void* slots() noexcept {
            const auto end = reinterpret_cast<std::uintptr_t>(this) + sizeof(state);
            return reinterpret_cast<void*>((end + alignof(T) - 1) & ~std::uintptr_t{alignof(T) - 1});
        }

        explicit state(std::size_t cap) noexcept : capacity(cap), buffer(slots(), cap) {}
        std::size_t capacity;
        detail::value_ring<T> buffer;  // in the state's block: delivering never allocates
        bool closed = false;
        detail::wait_list senders;    // non-empty only while the buffer is full
        detail::wait_list receivers;  // non-empty only while the buffer is empty

        // Whether a value would be taken now (a receiver waits, or the buffer has room).
        bool can_accept_locked() const noexcept { return !receivers.empty() || buffer.size() < capacity; }

        // Hand the value in v (engaged) to the oldest waiting receiver, else into the buffer; v is
        // left empty. False: full (v untouched).
        bool deliver_locked(std::optional<T>& v, detail::wake_batch& wakes) noexcept {
            while (!receivers.empty()) {
                auto& r = static_cast<recv_node&>(*receivers.pop_front());
                r.value.emplace(take_back(v));
                if (wakes.claim(r)) return true;
                v.emplace(take_back(r.value));  // that receiver was cancelled: try the next one
            }
            if (buffer.size() >= capacity) return false;
            buffer.push_back(take_back(v));
            return true;
        }

        // The oldest value, refilling the buffer from the oldest waiting sender.
        std::optional<T> take_locked(detail::wake_batch& wakes) noexcept {
            if (buffer.empty()) return std::nullopt;
            std::optional<T> out(buffer.pop_front());
            while (!senders.empty()) {
                auto& s = static_cast<send_node&>(*senders.pop_front());
                buffer.push_back(take_back(s.value));
                s.ok = true;
                if (wakes.claim(s)) break;
                s.ok = false;  // that sender was cancelled: its value stays its own
                s.value.emplace(buffer.pop_back());
            }
            return out;
        }

        // Wake every waiter with the closed outcome.
        void close_locked(detail::wake_batch& wakes) noexcept {
            closed = true;
            while (!receivers.empty()) (void)wakes.claim(*receivers.pop_front());
            while (!senders.empty()) (void)wakes.claim(*senders.pop_front());
        }

        static T take_back(std::optional<T>& o) noexcept {
            T v(std::move(*o));
            o.reset();
            return v;
        }
    };

public:
    // Throws std::invalid_argument when capacity is 0.
    explicit channel(std::size_t capacity) : s_(make_state(capacity)) {}
    ~channel() {
        if (s_->lock.idle()) {  // nobody waits on it or may come back: no close, no lock, no RMW
            const std::size_t size = s_->block_size;
            s_->~state();  // `final`: a direct call (destroy_wait_state's is virtual)
            detail::free_frame(s_, size);
            return;
        }
        bool last;
        {
            detail::wake_batch wakes(*s_);  // queued after the unlock (wait_list.hpp)
            std::lock_guard g(s_->lock);
            s_->close_locked(wakes);
            last = detail::orphan_locked(*s_);  // else the last cancelled awaiter frees it
        }
        if (last) detail::destroy_wait_state(s_);
    }
    channel(const channel&) = delete;
    channel& operator=(const channel&) = delete;

    std::size_t capacity() const noexcept { return s_->capacity; }
    // A snapshot: the number of buffered values.
    std::size_t size() const {
        std::lock_guard g(s_->lock);
        return s_->buffer.size();
    }
    // Snapshots: how many tasks are suspended in send() / receive().
    std::size_t waiting_senders() const {
        std::lock_guard g(s_->lock);
        return s_->senders.size();
    }
    std::size_t waiting_receivers() const {
        std::lock_guard g(s_->lock);
        return s_->receivers.size();
    }
    bool is_closed() const {
        std::lock_guard g(s_->lock);
        return s_->closed;
    }

    // Close: later sends return false; receivers drain the buffer, then get std::nullopt. Wakes
    // every suspended task (through the scheduler). Idempotent.
    void close() noexcept {
        detail::wake_batch wakes(*s_);  // queued after the unlock (wait_list.hpp)
        std::lock_guard g(s_->lock);
        s_->close_locked(wakes);
    }

    // Without suspending: true when v was taken (moved from); false when the channel is full or
    // closed (v untouched).
    bool try_send(T&& v) {
        detail::wake_batch wakes(*s_);  // queued after the unlock (wait_list.hpp)
        std::lock_guard g(s_->lock);
        if (s_->closed || !s_->can_accept_locked()) return false;
        std::optional<T> o(std::move(v));
        return s_->deliver_locked(o, wakes);  // true: a receiver or the buffer takes it (see can_accept_locked)
    }
    bool try_send(const T& v)
        requires std::is_copy_constructible_v<T>
    {
        T copy(v);
        return try_send(std::move(copy));
    }

    // Without suspending: the oldest value, or std::nullopt when none is buffered.
    std::optional<T> try_receive() {
        detail::wake_batch wakes(*s_);  // queued after the unlock (wait_list.hpp)
        std::lock_guard g(s_->lock);
        return s_->take_locked(wakes);
    }

    class [[nodiscard]] send_awaiter {
    public:
        bool await_ready() const noexcept { return false; }
        bool await_suspend(std::coroutine_handle<> h) {
            detail::wake_batch wakes(*s_);  // queued after the unlock (wait_list.hpp)
            std::unique_lock g(s_->lock);
            if (s_->closed) return finish_ready(g, h, false);
            if (s_->deliver_locked(node_.value, wakes)) return finish_ready(g, h, true);
            return detail::suspend_on(*s_, s_->senders, node_, h, mode_);
        }
        bool await_resume() {
            if (mode_ == detail::wait_mode::cancelled_early) detail::throw_cancelled();
            if (mode_ != detail::wait_mode::suspended) return ready_result_;
            if (detail::finish_suspension(s_, s_->senders, node_, mode_, detail::resumed_by_cancel()))
                detail::throw_cancelled();
            return node_.ok;
        }
        // A pool shutdown destroys a suspended frame: leave the list (waiter.hpp, "Lifetime").
        ~send_awaiter() {
            if (mode_ == detail::wait_mode::suspended) [[unlikely]]
                detail::finish_destroyed_cold(s_, s_->senders, node_, mode_);
        }
        send_awaiter(const send_awaiter&) = delete;
        send_awaiter& operator=(const send_awaiter&) = delete;

    private:
        friend class channel;
        send_awaiter(state* s, T&& v) : s_(s) { node_.value.emplace(std::move(v)); }
        bool finish_ready(std::unique_lock<detail::wait_lock>& g, std::coroutine_handle<> h, bool result) {
            g.unlock();
            ready_result_ = result;
            return detail::complete_ready(h, mode_);
        }
        state* s_;
        send_node node_;
        detail::wait_mode mode_ = detail::wait_mode::ready;
        bool ready_result_ = false;
    };

    class [[nodiscard]] receive_awaiter {
    public:
        bool await_ready() const noexcept { return false; }
        bool await_suspend(std::coroutine_handle<> h) {
            detail::wake_batch wakes(*s_);  // queued after the unlock (wait_list.hpp)
            std::unique_lock g(s_->lock);
            std::optional<T> v = s_->take_locked(wakes);
            if (v || s_->closed) {
                node_.value = std::move(v);
                g.unlock();
                return detail::complete_ready(h, mode_);
            }
            return detail::suspend_on(*s_, s_->receivers, node_, h, mode_);
        }
        std::optional<T> await_resume() {
            if (mode_ == detail::wait_mode::cancelled_early) detail::throw_cancelled();
            if (mode_ == detail::wait_mode::suspended &&
                detail::finish_suspension(s_, s_->receivers, node_, mode_, detail::resumed_by_cancel()))
                detail::throw_cancelled();
            return std::move(node_.value);
        }
        // A pool shutdown destroys a suspended frame: leave the list (waiter.hpp, "Lifetime").
        ~receive_awaiter() {
            if (mode_ == detail::wait_mode::suspended) [[unlikely]]
                detail::finish_destroyed_cold(s_, s_->receivers, node_, mode_);
        }
        receive_awaiter(const receive_awaiter&) = delete;
        receive_awaiter& operator=(const receive_awaiter&) = delete;

    private:
        friend class channel;
        explicit receive_awaiter(state* s) : s_(s) {}
        state* s_;
        recv_node node_;
        detail::wait_mode mode_ = detail::wait_mode::ready;
    };

    // co_await: true once the value was taken; false when the channel is (or becomes) closed.
    send_awaiter send(T v) { return send_awaiter(s_, std::move(v)); }
    // co_await: the oldest value; std::nullopt once the channel is closed and drained.
    receive_awaiter receive() { return receive_awaiter(s_); }

private:
    // One block: the state, then the buffer's slots (one allocation per channel, from the frame
    // cache when it fits a size class: capacity-1 channels of small values always do).
    static state* make_state(std::size_t capacity) {
        if (capacity == 0) throw std::invalid_argument("crew::channel: capacity must be at least 1");
        constexpr std::size_t fixed = sizeof(state) + state::pad;
        if (capacity > (std::numeric_limits<std::size_t>::max() - fixed) / sizeof(T)) throw std::bad_array_new_length();
        return detail::new_wait_state<state>(fixed + capacity * sizeof(T), capacity);
    }
    state* s_;
};

}  // namespace crew
