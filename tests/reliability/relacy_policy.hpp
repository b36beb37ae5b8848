// tests/reliability/relacy_policy.hpp -- crew's atomics policy backed by the Relacy model checker.
//
// crew's lock-free headers (chase_lev.hpp, parking.hpp, injector.hpp, async_ring.hpp, task_state.hpp) are templates over an atomics
// policy (see crew/detail/atomics.hpp). This file supplies `relacy_atomics<Bug>`: the same members,
// backed by rl::atomic, rl::atomic_thread_fence, rl::mutex and Relacy's futex-style wait sets, so
// the model checker runs the production code itself, not a copy. `Bug` re-introduces one known bug
// (crew::detail::bug) for the `teeth` tests; bug::none is the production algorithm.
//
// Include order matters: relacy.hpp #defines memory_order_relaxed, new, delete, ... for user code.
// The crew headers are included first (their templates are already parsed, so the macros cannot
// touch them), then relacy.hpp, then the macros that would break the rest of this file and the
// tests are removed again.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "crew/detail/async_ring.hpp"
#include "crew/detail/atomics.hpp"
#include "crew/detail/chase_lev.hpp"
#include "crew/detail/group_count.hpp"
#include "crew/detail/injector.hpp"
#include "crew/detail/parking.hpp"
#include "crew/detail/task_state.hpp"

#include <relacy/relacy.hpp>

#undef memory_order_relaxed
#undef memory_order_consume
#undef memory_order_acquire
#undef memory_order_release
#undef memory_order_acq_rel
#undef memory_order_seq_cst
#undef new
#undef delete
#undef malloc
#undef calloc
#undef realloc
#undef free

namespace crew_model {

using crew::detail::bug;

inline rl::memory_order to_rl(std::memory_order order) noexcept {
    switch (order) {
        case std::memory_order::relaxed: return rl::mo_relaxed;
        case std::memory_order::consume: return rl::mo_consume;
        case std::memory_order::acquire: return rl::mo_acquire;
        case std::memory_order::release: return rl::mo_release;
        case std::memory_order::acq_rel: return rl::mo_acq_rel;
        case std::memory_order::seq_cst: return rl::mo_seq_cst;
    }
    return rl::mo_seq_cst;
}

// A std::atomic look-alike over rl::atomic (which wants a debug-info argument on every call).
template <class T>
class model_atomic {
public:
    model_atomic() noexcept = default;  // like std::atomic<T> before C++20: no value until stored
    model_atomic(T value) noexcept { raw_.store(value, rl::mo_relaxed, RL_INFO); }  // NOLINT: as std::atomic
    model_atomic(const model_atomic&) = delete;
    model_atomic& operator=(const model_atomic&) = delete;

    T load(std::memory_order o = std::memory_order::seq_cst) const noexcept { return raw_.load(to_rl(o), RL_INFO); }
    void store(T v, std::memory_order o = std::memory_order::seq_cst) noexcept { raw_.store(v, to_rl(o), RL_INFO); }
    T exchange(T v, std::memory_order o = std::memory_order::seq_cst) noexcept {
        return raw_.exchange(v, to_rl(o), RL_INFO);
    }
    bool compare_exchange_strong(T& expected, T desired, std::memory_order success,
                                 std::memory_order failure) noexcept {
        return raw_.compare_exchange_strong(expected, desired, to_rl(success), RL_INFO, to_rl(failure), RL_INFO);
    }
    bool compare_exchange_weak(T& expected, T desired, std::memory_order success,
                               std::memory_order failure) noexcept {
        return raw_.compare_exchange_weak(expected, desired, to_rl(success), RL_INFO, to_rl(failure), RL_INFO);
    }
    template <class U>
    T fetch_add(U v, std::memory_order o = std::memory_order::seq_cst) noexcept {
        return raw_.fetch_add(v, to_rl(o), RL_INFO);
    }
    template <class U>
    T fetch_sub(U v, std::memory_order o = std::memory_order::seq_cst) noexcept {
        return raw_.fetch_sub(v, to_rl(o), RL_INFO);
    }

    template <class U>
    T fetch_or(U v, std::memory_order o = std::memory_order::seq_cst) noexcept {
        return raw_.fetch_or(v, to_rl(o), RL_INFO);
    }

    template <class U>
    T fetch_and(U v, std::memory_order o = std::memory_order::seq_cst) noexcept {
        return raw_.fetch_and(v, to_rl(o), RL_INFO);
    }
    template <class U>
    T fetch_xor(U v, std::memory_order o = std::memory_order::seq_cst) noexcept {
        return raw_.fetch_xor(v, to_rl(o), RL_INFO);
    }

    rl::atomic<T>& raw() noexcept { return raw_; }

private:
    mutable rl::atomic<T> raw_;
};

// BasicLockable over rl::mutex, so std::lock_guard works in injector.hpp.
class model_mutex {
public:
    void lock() { m_.lock(RL_INFO); }
    void unlock() { m_.unlock(RL_INFO); }

private:
    rl::mutex m_;
};

// A modelled run queue holding one task's entries: a count under a lock. The task-state scenarios
// (model_task_state.hpp, model_task_word.hpp) submit an entry where a worker would queue the task
// and run the task once per entry taken.
class model_run_queue {
public:
    explicit model_run_queue(int entries) : entries_(entries) {}
    void submit() {
        lock_.lock();
        ++entries_;
        lock_.unlock();
    }
    bool take_entry() {
        lock_.lock();
        const bool got = entries_ > 0;
        if (got) --entries_;
        lock_.unlock();
        return got;
    }

private:
    model_mutex lock_;
    int entries_;  // guarded by lock_
};

// Owns one T at a 64-byte-aligned address. crew's structures are over-aligned (cache-line
// members), but Relacy mallocs the test object (16-byte alignment) and replaces only the plain
// operator new/delete, so neither a member nor std::make_unique is safe for them.
template <class T>
class aligned_box {
public:
    template <class... Args>
    explicit aligned_box(Args&&... args) : raw_(::operator new(sizeof(T) + alignof(T))) {
        auto address = reinterpret_cast<std::uintptr_t>(raw_);
        address = (address + alignof(T) - 1) & ~(std::uintptr_t{alignof(T)} - 1);
        object_ = ::new (reinterpret_cast<void*>(address)) T(static_cast<Args&&>(args)...);
    }
    ~aligned_box() {
        object_->~T();
        ::operator delete(raw_);
    }
    aligned_box(const aligned_box&) = delete;
    aligned_box& operator=(const aligned_box&) = delete;
    T* operator->() const noexcept { return object_; }
    T& operator*() const noexcept { return *object_; }

private:
    void* raw_;
    T* object_;
};

template <bug Bug>
struct relacy_atomics {
    template <class T>
    using atomic = model_atomic<T>;
    using mutex = model_mutex;
    static constexpr bug injected_bug = Bug;

    static void fence(std::memory_order order) noexcept { rl::atomic_thread_fence(to_rl(order), RL_INFO); }
    static void pause() noexcept { rl::yield(1, RL_INFO); }
    static void yield() noexcept { rl::yield(1, RL_INFO); }

    // Linux futex semantics, as Relacy's own futex model: the value check and the enqueue are one
    // step (no wake can slip between them), spurious wake-ups are allowed, and both calls act as a
    // full fence (the kernel's futex code issues one on both sides).
    static void wait(atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
        rl::context& c = rl::ctx();
        c.sched();
        c.atomic_thread_fence_seq_cst();
        std::uint32_t now;
        {
            rl::preemption_disabler no_switch(c);
            now = word.raw().load(rl::mo_acquire, RL_INFO);
        }
        if (now != expected) return;
        word.raw().wait(c, false, true, RL_INFO);
    }
    static void wake_one(atomic<std::uint32_t>& word) noexcept { wake(word, 1); }
    static void wake_all(atomic<std::uint32_t>& word) noexcept { wake(word, 64); }

private:
    static void wake(atomic<std::uint32_t>& word, rl::thread_id_t count) noexcept {
        rl::context& c = rl::ctx();
        c.sched();
        c.atomic_thread_fence_seq_cst();
        word.raw().wake(c, count, RL_INFO);
    }
};

}  // namespace crew_model
