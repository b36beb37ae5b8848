// crew/detail/task.hpp -- what a task is, where its memory comes from, and how a result travels.
//
// A task is an intrusive header: one function pointer that runs it (and frees it, when it owns
// itself) and one link for the injector. Every kind of work (a join's stack job, a spawned
// closure, a future's shared state, later a coroutine handle) is a struct that begins with this
// header, so the deque, the injector and the worker loop handle all of them alike.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace crew::detail {

struct task {
    using execute_fn = void (*)(task*) noexcept;
    execute_fn execute;     // set by the creator; read by whichever thread runs the task
    task* next = nullptr;   // written by the injector (under its lock) while the task is queued there
    std::uint64_t queued_at = 0;  // metrics: when it was injected (ns, steady_clock), 0 = not stamped
};

// The cancellation state of one task group (crew/task_group.hpp). `canceled` is the one flag a
// child reads before it starts; cancel() sets it on the group and on every group nested in it, so
// no reader ever walks a chain. The links form the nesting tree (a group created while a child of
// another group runs on the creating thread is nested in that group); they are changed only under
// one global mutex in src/task_group.cpp, on the cold paths (creating or destroying a nested
// group, cancel(), wait() of a nested group).
struct cancel_context {
    std::atomic<bool> canceled{false};
    // Set (under the mutex) once this context gained a parent or a child: only then do the cold
    // paths need the mutex. Never cleared.
    std::atomic<bool> nested{false};
    cancel_context* parent = nullptr;       // guarded by the mutex
    cancel_context* first_child = nullptr;  // guarded by the mutex
    cancel_context* next = nullptr;         // sibling links in parent->first_child's list
    cancel_context* prev = nullptr;
};

// The context of the task group whose child is running on this thread (innermost), else nullptr.
// Set around each group child; a worker clears it around unrelated work it runs while waiting.
// initial-exec: one %fs-relative load (as current_worker), since algorithms read it at every leaf.
inline constinit thread_local cancel_context* current_context __attribute__((tls_model("initial-exec"))) = nullptr;

// Runs a piece of work stolen from a group child (a join half, an algorithm leaf) under that
// child's context, so is_canceling() and nesting see the group there too: capture current_context
// where the job is made (the group child waits for the job, so the group outlives it), and hold a
// context_scope around running it.
class context_scope {
public:
    explicit context_scope(cancel_context* c) noexcept : saved_(current_context) { current_context = c; }
    ~context_scope() { current_context = saved_; }
    context_scope(const context_scope&) = delete;
    context_scope& operator=(const context_scope&) = delete;

private:
    cancel_context* saved_;
};

// Is the task running on this thread a child of a canceled task group (directly, or through an
// enclosing group)? One TLS read and one relaxed load: the flag carries no data (what a canceled
// child must not miss is ordered by the group's count), and a reader that misses a concurrent
// cancel() only runs as if it had checked a moment earlier. The parallel algorithms call it at
// each leaf and split.
inline bool cancellation_requested() noexcept {
    const cancel_context* c = current_context;
    return c != nullptr && c->canceled.load(std::memory_order_relaxed);
}

// A per-thread free list of fixed-size blocks for tasks. Blocks come from ::operator new, so a
// block allocated on one worker may be returned to another worker's cache (or to the heap). The
// list is bounded: beyond max_cached blocks, returns go straight to the heap, so an idle pool holds
// at most max_cached * block_size bytes per worker.
class task_cache {
public:
    static constexpr std::size_t block_size = 128;
    static constexpr std::size_t max_cached = 4096;

    task_cache() = default;
    task_cache(const task_cache&) = delete;
    task_cache& operator=(const task_cache&) = delete;
    ~task_cache() {
        while (free_ != nullptr) {
            node* n = free_;
            free_ = n->next;
            ::operator delete(n);
        }
    }

    void* allocate() {
        if (free_ == nullptr) return ::operator new(block_size);
        node* n = free_;
        free_ = n->next;
        --count_;
        return n;
    }

    void deallocate(void* p) noexcept {
        if (count_ >= max_cached) {
            ::operator delete(p);
            return;
        }
        free_ = new (p) node{free_};
        ++count_;
    }

    std::size_t cached() const noexcept { return count_; }

private:
    struct node {
        node* next;
    };
    node* free_ = nullptr;  // owner thread only
    std::size_t count_ = 0;
};

// Whether an object of type T lives in a cache block.
template <class T>
inline constexpr bool fits_block =
    sizeof(T) <= task_cache::block_size && alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__;

// Destroys a task's closure in place. A closure whose destructor throws (a capture with a
// noexcept(false) destructor) does not terminate the worker: the exception is returned.
template <class F>
std::exception_ptr destroy_closure(F& fn) noexcept {
    if constexpr (std::is_nothrow_destructible_v<F>) {
        fn.~F();
        return nullptr;
    } else {
        try {
            fn.~F();
        } catch (...) {
            return std::current_exception();
        }
        return nullptr;
    }
}

template <class T>
using stored_t = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

// The outcome of running a callable: its value, or the exception it threw.
template <class R>
class result_cell {
    using stored = std::conditional_t<std::is_reference_v<R>, std::remove_reference_t<R>*, R>;

public:
    // Invokes fn as given: an rvalue for a callable that is called once and may be rvalue-only.
    // always_inline: clang otherwise keeps it out of line (its try/catch), one more call per half
    // of every join (fib(32) through crew::join of two rvalue lambdas, 1 worker, CPU: 24.2-25.1 -> 19.7-20.3 ms
    // with clang 14; g++ 12 inlines it anyway: its code is unchanged).
    template <class F>
    [[gnu::always_inline]] void run(F&& fn) noexcept {
        try {
            if constexpr (std::is_void_v<R>)
                std::invoke(std::forward<F>(fn));
            else if constexpr (std::is_reference_v<R>)
                value_.emplace(&std::invoke(std::forward<F>(fn)));
            else
                value_.emplace(std::invoke(std::forward<F>(fn)));
        } catch (...) {
            error_ = std::current_exception();
        }
    }

    // Something that belongs to the task failed after it ran (its closure's destructor threw):
    // that is the task's outcome unless the callable itself already threw.
    void fail_after(std::exception_ptr e) noexcept {
        if (error_) return;
        value_.reset();
        error_ = std::move(e);
    }

    bool failed() const noexcept { return error_ != nullptr; }
    const std::exception_ptr& error() const noexcept { return error_; }

    // The value, or rethrows the exception.
    R take() {
        // Hand the exception over (the catching thread then holds the last reference and frees it),
        // so its lifetime does not hinge on reference counts inside libstdc++, which TSan cannot see.
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
        if constexpr (std::is_void_v<R>)
            return;
        else if constexpr (std::is_reference_v<R>)
            return static_cast<R>(**value_);
        else
            return std::move(*value_);
    }

    // As take(), with void mapped to std::monostate (for pairs of results).
    stored_t<R> take_stored() {
        if constexpr (std::is_void_v<R>) {
            take();
            return {};
        } else {
            return take();
        }
    }

private:
    struct nothing {};
    std::optional<std::conditional_t<std::is_void_v<R>, nothing, stored>> value_;
    std::exception_ptr error_;
};

}  // namespace crew::detail
