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
#include <mutex>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "crew/detail/atomics.hpp"
#include "crew/detail/thread_state.hpp"

namespace crew::detail {

struct task {
    using execute_fn = void (*)(task*) noexcept;
    execute_fn execute;     // set by the creator; read by whichever thread runs the task
    task* next;             // written by the injector (under its lock) while the task is queued there
    std::uint64_t queued_at;  // metrics: when it was injected (ns, steady_clock), 0 = not stamped

    constexpr task(execute_fn fn = nullptr) noexcept : execute(fn), next(nullptr), queued_at(0) {}
    // A fork's job (crew::join, crew::fork_join): never injected, so `next` and `queued_at` are
    // never read and a fork does not write them (two stores per join).
    struct never_injected {};
    task(execute_fn fn, never_injected) noexcept : execute(fn) {}
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
inline constinit thread_local cancel_context* current_context __attribute__((tls_model(CREW_FORK_TLS_MODEL))) = nullptr;

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
// list is bounded: beyond max_cached blocks, returns go to the pool's block depot (below) in
// batches, and from there to the heap once the depot is full, so an idle pool holds at most
// max_cached * block_size bytes per worker plus the depot's bound.
//
// Why the depot (session 13, spawn_storm_inside at 2 workers): one worker spawns, the other steals
// and frees. The spawner's cache runs dry and every spawn called malloc; the thief's cache filled
// and every free went to glibc's free of a chunk of the spawner's arena, so both threads fought
// over that arena's lock (futex waits and wakes were about half of the profile). With the depot
// the thief hands its surplus over in chains of depot_batch blocks, one mutex acquisition per
// chain, and the spawner refills from it: a block goes around without touching the heap.
// A free block, on a cache's list or in a depot's chain.
// No initialisers: deallocate() writes only `next`; put() writes `next_chain` of a chain's first block.
struct task_block {
    task_block* next;
    task_block* next_chain;  // in a chain's first block on the depot: the next chain
};

// A pool's shared store of free task blocks, in chains of task_cache::depot_batch blocks: workers
// whose cache overflows put chains here; a worker whose cache is empty takes one. Guarded by a
// mutex (taken once per chain, never per block). Bounded by max_chains; a chain that finds it full
// goes to the heap. Destroyed after the pool's workers (it frees what it still holds).
class task_depot {
public:
    static constexpr std::size_t max_chains = 32;  // 4096 blocks, 512 KiB

    task_depot() = default;
    task_depot(const task_depot&) = delete;
    task_depot& operator=(const task_depot&) = delete;
    ~task_depot() {
        while (chains_ != nullptr) {
            task_block* c = chains_;
            chains_ = c->next_chain;
            free_chain(c);
        }
    }

    // Takes a chain of depot_batch blocks linked through `next` (nullptr-terminated); false when
    // full (the caller keeps it).
    bool put(task_block* chain) noexcept {
        std::lock_guard lock(mutex_);
        if (count_ >= max_chains) return false;
        chain->next_chain = chains_;
        chains_ = chain;
        hint_.store(++count_, std::memory_order_relaxed);  // relaxed: see take()
        return true;
    }

    // A chain of depot_batch blocks, or nullptr. An empty depot costs one load, no lock: a spawner
    // whose cache is empty and finds the depot empty calls this on every allocation.
    task_block* take() noexcept {
        // relaxed: a hint only (no data is read on its strength); the mutex decides. A stale 0 only
        // sends this allocation to the heap.
        if (hint_.load(std::memory_order_relaxed) == 0) return nullptr;
        std::lock_guard lock(mutex_);
        task_block* c = chains_;
        if (c != nullptr) {
            chains_ = c->next_chain;
            hint_.store(--count_, std::memory_order_relaxed);  // relaxed: the hint above
        }
        return c;
    }

    static void free_chain(task_block* c) noexcept {
        while (c != nullptr) {
            task_block* next = c->next;
            ::operator delete(c);
            c = next;
        }
    }

private:
    std_atomics::mutex mutex_;
    task_block* chains_ = nullptr;  // guarded by mutex_
    std::size_t count_ = 0;         // guarded by mutex_
    std_atomics::atomic<std::size_t> hint_{0};  // count_, for take()'s lock-free empty check
};

class task_cache {
public:
    static constexpr std::size_t block_size = 128;
    static constexpr std::size_t max_cached = 4096;
    static constexpr std::size_t depot_batch = 128;  // blocks per chain moved to/from the depot
    static_assert(sizeof(task_block) <= block_size);

    // depot: where the surplus goes and where an empty cache refills from; nullptr: the heap only.
    explicit task_cache(task_depot* depot = nullptr) noexcept : depot_(depot) {}
    task_cache(const task_cache&) = delete;
    task_cache& operator=(const task_cache&) = delete;
    ~task_cache() {
        task_depot::free_chain(free_);
        task_depot::free_chain(spill_);
    }

    void* allocate() {
        if (free_ == nullptr) [[unlikely]] return refill_cold();
        task_block* n = free_;
        free_ = n->next;
        --count_;
        return n;
    }

    void deallocate(void* p) noexcept {
        if (count_ >= max_cached) [[unlikely]] return spill_cold(p);
        free_ = link(p, free_);
        ++count_;
    }

    std::size_t cached() const noexcept { return count_; }

private:
    // The cache is empty: a chain from the depot, else the heap. Out of line (as spill_cold):
    // allocate() and deallocate() run once per spawned task; their hit paths stay short.
    [[gnu::noinline]] void* refill_cold() {
        task_block* c = depot_ != nullptr ? depot_->take() : nullptr;
        if (c == nullptr) return ::operator new(block_size);
        free_ = c->next;
        count_ = depot_batch - 1;
        return c;
    }

    // The cache is full: gather p into the chain for the depot; a full chain goes there (or, when
    // the depot is full too, to the heap).
    [[gnu::noinline]] void spill_cold(void* p) noexcept {
        if (depot_ == nullptr) {
            ::operator delete(p);
            return;
        }
        spill_ = link(p, spill_);
        if (++spill_count_ < depot_batch) return;
        if (!depot_->put(spill_)) task_depot::free_chain(spill_);
        spill_ = nullptr;
        spill_count_ = 0;
    }

    // A free block p at the front of list `next` (default-initialised: one store, of `next` only).
    static task_block* link(void* p, task_block* next) noexcept {
        auto* b = new (p) task_block;
        b->next = next;
        return b;
    }

    // The hot pair first (allocate/deallocate touch only these), as before the depot existed.
    task_block* free_ = nullptr;  // owner thread only
    std::size_t count_ = 0;
    task_depot* depot_;
    task_block* spill_ = nullptr;  // the chain being gathered for the depot (blocks beyond max_cached)
    std::size_t spill_count_ = 0;
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
