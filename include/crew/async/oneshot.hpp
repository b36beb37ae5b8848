// crew/async/oneshot.hpp -- crew::make_oneshot<T>(): a channel for exactly one value, from one
// sender to one receiver (Tokio's tokio::sync::oneshot). Lighter than a crew::channel<T>{1}: one
// block, no lock, one atomic RMW to send and at most two to wait.
//
//   auto [tx, rx] = crew::make_oneshot<int>();
//   crew::spawn(worker(std::move(tx)));            // ... tx.send(42) there
//   std::optional<int> v = co_await std::move(rx);  // 42, or std::nullopt if tx was dropped unsent
//
// Semantics (docs/ASYNC.md, "Primitives"):
//   * send(v) hands the value over and wakes a waiting receiver (through the scheduler, never on
//     the sender's stack). It returns false, and destroys the value, when the receiver is already
//     gone. Once per sender: a second send, or a send on a moved-from sender, throws
//     crew::usage_error. send may be called from any thread, inside a task or not.
//   * Dropping the sender without sending closes the oneshot: the receiver gets std::nullopt.
//   * `co_await std::move(rx)` consumes the receiver: the value, or std::nullopt when the sender
//     was dropped unsent. Only inside a crew coroutine task. A receiver already consumed, or moved
//     from, throws crew::usage_error. try_receive() takes the value without waiting (any thread):
//     std::nullopt while it has not been sent, and after it was taken.
//   * Budget: an await that completes without suspending spends one unit of the task's budget (at
//     zero the task yields first, with the value in hand).
//   * Cancellation: a task cancelled while it waits here resumes and its co_await throws
//     crew::cancelled_error -- unless the value arrived first: then the co_await returns it (the
//     receiver is consumed, so nobody else could take it) and the cancellation is seen at the
//     task's next suspension point. A value sent to a receiver that is gone is destroyed.
//   * T must be nothrow move constructible (as crew::channel's).
// The protocol and its proof: detail/oneshot_word.hpp and its Relacy model
// (tests/reliability/model_oneshot.hpp).
#pragma once

#include <coroutine>
#include <cstddef>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

#include "crew/async/detail/waiter.hpp"
#include "crew/detail/async_schedule.hpp"
#include "crew/detail/oneshot_word.hpp"
#include "crew/errors.hpp"

namespace crew {

template <class T>
class oneshot_sender;
template <class T>
class oneshot_receiver;

namespace detail {

// The block both ends hold (frame-cache memory, as the other primitives' state).
template <class T>
struct oneshot_block {
    oneshot_word word;
    waker receiver_waker;  // written by the receiver before publish(); moved out by whoever owns it
    bool taken = false;    // receiver-written: the value was moved out (read by the side that frees)
    alignas(T) unsigned char storage[sizeof(T)];

    T& value() noexcept { return *std::launder(reinterpret_cast<T*>(storage)); }

    static constexpr bool over_aligned = alignof(oneshot_block) > __STDCPP_DEFAULT_NEW_ALIGNMENT__;
    static oneshot_block* make() {
        if constexpr (over_aligned)
            return ::new (::operator new(sizeof(oneshot_block), std::align_val_t{alignof(oneshot_block)})) oneshot_block;
        else
            return ::new (allocate_frame(sizeof(oneshot_block))) oneshot_block;
    }
    // By the side that cleared the last reference: the value, if sent and never taken, goes too.
    static void destroy(oneshot_block* b) noexcept {
        if ((b->word.poll() & oneshot_word::sent) != 0 && !b->taken) b->value().~T();
        b->~oneshot_block();
        if constexpr (over_aligned)
            ::operator delete(static_cast<void*>(b), std::align_val_t{alignof(oneshot_block)});
        else
            free_frame(b, sizeof(oneshot_block));
    }
    // Receiver: the value if it was sent and is still there.
    std::optional<T> take(std::uint32_t word_now) noexcept {
        if ((word_now & oneshot_word::sent) == 0 || taken) return std::nullopt;
        taken = true;
        std::optional<T> v(std::move(value()));
        value().~T();
        return v;
    }
};

}  // namespace detail

template <class T>
std::pair<oneshot_sender<T>, oneshot_receiver<T>> make_oneshot();

template <class T>
class oneshot_sender {
    static_assert(std::is_nothrow_move_constructible_v<T>, "crew::oneshot needs a nothrow move constructor");
    static_assert(std::is_object_v<T> && !std::is_const_v<T>, "crew::oneshot needs a non-const object type");
    using block = detail::oneshot_block<T>;

public:
    oneshot_sender() noexcept = default;  // empty: send throws
    oneshot_sender(oneshot_sender&& o) noexcept : b_(std::exchange(o.b_, nullptr)) {}
    oneshot_sender& operator=(oneshot_sender&& o) noexcept {
        if (this != &o) {
            close_unsent();
            b_ = std::exchange(o.b_, nullptr);
        }
        return *this;
    }
    ~oneshot_sender() { close_unsent(); }

    // Hands `value` to the receiver; false (the value destroyed) when the receiver is gone.
    bool send(T value) {
        if (b_ == nullptr) throw usage_error("crew::oneshot_sender::send: the sender is empty (already sent, or moved from)");
        block* const b = std::exchange(b_, nullptr);
        if (b->word.is_receiver_gone()) {  // nobody to construct the value for
            (void)finish(b, false);
            return false;
        }
        ::new (static_cast<void*>(b->storage)) T(std::move(value));
        return finish(b, true);
    }

    // True when the receiver is gone (a send would return false), or this sender is empty.
    bool is_closed() const noexcept { return b_ == nullptr || b_->word.is_receiver_gone(); }
    // True while this sender can still send.
    explicit operator bool() const noexcept { return b_ != nullptr; }

private:
    friend std::pair<oneshot_sender<T>, oneshot_receiver<T>> make_oneshot<T>();
    explicit oneshot_sender(block* b) noexcept : b_(b) {}

    void close_unsent() noexcept {
        if (block* b = std::exchange(b_, nullptr)) (void)finish(b, false);
    }
    // The sender's close (oneshot_word.hpp): true when a receiver still held the block.
    static bool finish(block* b, bool with_value) noexcept {
        switch (b->word.close(with_value)) {
        case detail::close_result::done:
            return true;
        case detail::close_result::free_block:
            block::destroy(b);  // the receiver was gone: the value goes with the block
            return false;
        case detail::close_result::wake:
            break;
        }
        detail::waker w = std::move(b->receiver_waker);  // ours: the close found it published
        if (detail::async_task* t = w.claim()) {
            // Signaled: the receiver resumes only after wake_by_val queues it, and then frees the
            // block itself (oneshot_word.hpp, "hand-off"): the sender keeps its reference, no RMW.
            t->wake_by_val(detail::async_wake::wake);
            return true;
        }
        // A cancel resolved the suspension first: the receiver may be withdrawing right now.
        if (b->word.release_sender()) block::destroy(b);
        return true;
    }

    block* b_ = nullptr;  // nullptr once sent, closed or moved from
};

template <class T>
class oneshot_receiver {
    using block = detail::oneshot_block<T>;

public:
    oneshot_receiver() noexcept = default;  // empty: awaiting it throws
    oneshot_receiver(oneshot_receiver&& o) noexcept : b_(std::exchange(o.b_, nullptr)) {}
    oneshot_receiver& operator=(oneshot_receiver&& o) noexcept {
        if (this != &o) {
            release();
            b_ = std::exchange(o.b_, nullptr);
        }
        return *this;
    }
    ~oneshot_receiver() { release(); }

    // Without waiting, any thread: the value if it was sent and not yet taken.
    std::optional<T> try_receive() noexcept { return b_ == nullptr ? std::nullopt : b_->take(b_->word.poll()); }
    // True once the sender is done: sent (value here or taken), or dropped unsent.
    bool is_ready() const noexcept { return b_ != nullptr && (b_->word.poll() & detail::oneshot_word::closed) != 0; }
    explicit operator bool() const noexcept { return b_ != nullptr; }

    class [[nodiscard]] awaiter {
    public:
        bool await_ready() noexcept {
            return (b_->word.poll() & detail::oneshot_word::closed) != 0 && detail::spend_budget();
        }
        bool await_suspend(std::coroutine_handle<> h) {
            if ((b_->word.poll() & detail::oneshot_word::closed) != 0) {  // ready (now, or the budget was spent)
                if (detail::spend_budget()) return false;
                mode_ = mode::yielded;
                return detail::yield_suspend(h);
            }
            detail::waker w = detail::prepare_suspend(h);
            if (!w) {
                mode_ = mode::cancelled_early;
                return false;
            }
            b_->receiver_waker = std::move(w);
            if (b_->word.publish()) {
                mode_ = mode::suspended;
                return true;
            }
            // The sender closed meanwhile: take the waker back and go on, unless a cancel resolved
            // the suspension first (it queued the task: resume as cancelled).
            detail::waker mine = std::move(b_->receiver_waker);
            if (detail::retract_suspend(mine)) return false;
            mode_ = mode::cancelled_unpublished;
            return true;
        }
        std::optional<T> await_resume() {
            if (mode_ == mode::cancelled_early) detail::throw_cancelled();
            bool cancelled = mode_ == mode::cancelled_unpublished;
            if (mode_ == mode::suspended) {
                cancelled = detail::resume_reason() == detail::wake_reason::cancelled;
                mode_ = cancelled ? mode::finished : mode::handed_off;
                if (cancelled) withdraw();
            }
            std::optional<T> v = b_->take(b_->word.poll());
            // Cancelled, but the value came first: delivered (this receiver is consumed, nobody
            // else could take it); the sticky cancel is seen at the next suspension point.
            if (cancelled && !v) detail::throw_cancelled();
            return v;
        }
        ~awaiter() {
            if (mode_ == mode::suspended) [[unlikely]] {
                // A pool shutdown destroys a suspended frame (the drain settled the suspension
                // first). A sender's wake that resolved it has let go of the block; else withdraw.
                const detail::async_task* t = detail::draining_task;
                if (t != nullptr && t->susp.phase() == detail::async_task::phase_signaled)
                    mode_ = mode::handed_off;
                else
                    withdraw();
            }
            // Woken by the sender's close: it kept its reference and touches the block no more.
            if (mode_ == mode::handed_off || b_->word.release_receiver()) block::destroy(b_);
        }
        awaiter(const awaiter&) = delete;
        awaiter& operator=(const awaiter&) = delete;

    private:
        friend class oneshot_receiver;
        // handed_off: resumed by the sender's wake, which left the block to this awaiter to free.
        enum class mode : unsigned char { ready, yielded, suspended, handed_off, finished, cancelled_early, cancelled_unpublished };
        explicit awaiter(block* b) noexcept : b_(b) {}
        void withdraw() noexcept {
            if (b_->word.withdraw()) b_->receiver_waker.reset();  // else the sender's close took it
        }
        block* b_;  // the receiver's reference, owned by the awaiter
        mode mode_ = mode::ready;
    };

    // co_await std::move(rx): the value, or std::nullopt when the sender was dropped unsent.
    awaiter operator co_await() && {
        if (b_ == nullptr) throw usage_error("crew::oneshot_receiver: awaited while empty (already awaited, or moved from)");
        return awaiter(std::exchange(b_, nullptr));
    }

private:
    friend std::pair<oneshot_sender<T>, oneshot_receiver<T>> make_oneshot<T>();
    explicit oneshot_receiver(block* b) noexcept : b_(b) {}

    void release() noexcept {
        if (block* b = std::exchange(b_, nullptr); b != nullptr && b->word.release_receiver()) block::destroy(b);
    }

    block* b_ = nullptr;  // nullptr once awaited or moved from
};

// A new oneshot: its sender and its receiver.
template <class T>
std::pair<oneshot_sender<T>, oneshot_receiver<T>> make_oneshot() {
    detail::oneshot_block<T>* b = detail::oneshot_block<T>::make();
    return {oneshot_sender<T>(b), oneshot_receiver<T>(b)};
}

}  // namespace crew
