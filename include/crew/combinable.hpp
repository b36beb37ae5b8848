// crew/combinable.hpp -- one value per thread, combined at the end (oneTBB's tbb::combinable and
// tbb::enumerable_thread_specific, in one type).
//
//   crew::combinable<long> sum;                       // each thread's value starts as long()
//   crew::parallel_for(0, n, [&](int i) { sum.local() += i; });
//   long total = sum.combine(std::plus<>{});          // or: for (long v : sum) ...
//
// Slots belong to threads, not to pools: a worker of any pool and any other thread each get their
// own, created on the thread's first local() (a mutex, once per thread and combinable) and found
// afterwards without a lock or an atomic. Each slot has cache lines of its own (no false sharing).
// Slots outlive their threads; they die with the combinable or at clear().
//
// Thread safety: local() may be called by any number of threads at once (and concurrently with
// size()). Everything else -- combine, combine_each, clear, iteration, destruction -- must not
// overlap with a local() call or with each other (as in oneTBB); typically they run after the
// parallel work was waited for (join, task_group::wait, an algorithm returning). local() from the
// destructor of a thread_local object is not supported (the thread's table may be gone).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "crew/detail/atomics.hpp"

namespace crew {

namespace detail {

// Every combinable has a key: a small index, reused after the combinable dies, and an id, never
// reused (64 bits). Each thread keeps a table indexed by `index` of (id, slot) entries; an entry
// counts only when its id matches. So a stale entry -- of a combinable that died or was cleared,
// even when another one now has its index or its address -- is never followed.
struct slot_key {
    std::size_t index;
    std::uint64_t id;
};

class slot_keys {
public:
    // Never destroyed: a static combinable may die after every other static object.
    static slot_keys& instance() {
        static slot_keys* keys = new slot_keys;
        return *keys;
    }

    slot_key acquire() {
        std::lock_guard lock(mutex_);
        std::size_t index = next_index_;
        if (free_.empty()) {
            ++next_index_;
        } else {
            index = free_.back();
            free_.pop_back();
        }
        return {index, fresh_id()};
    }

    void release(std::size_t index) noexcept {
        std::lock_guard lock(mutex_);
        try {
            free_.push_back(index);
        } catch (...) {
            // Out of memory: the index is simply never reused.
        }
    }

    // relaxed: only uniqueness matters; the ids order nothing.
    std::uint64_t fresh_id() noexcept { return next_id_.fetch_add(1, std::memory_order_relaxed); }

private:
    std::mutex mutex_;
    std::vector<std::size_t> free_;
    std::size_t next_index_ = 0;
    std_atomics::atomic<std::uint64_t> next_id_{1};  // 0 marks an unused table entry
};

struct thread_slot_entry {
    std::uint64_t id = 0;
    void* value = nullptr;
};

// The calling thread's table, indexed by slot_key::index. Its size is bounded by the largest
// number of combinables alive at once that this thread used.
inline std::vector<thread_slot_entry>& thread_slot_table() noexcept {
    thread_local std::vector<thread_slot_entry> table;
    return table;
}

}  // namespace detail

template <class T>
class combinable {
    // A slot fills whole cache lines: two threads' values never share one. (One alignas: g++ 12
    // keeps only the last of several on a member class of a template.)
    static constexpr std::size_t slot_alignment = alignof(T) > detail::cache_line ? alignof(T) : detail::cache_line;
    struct alignas(slot_alignment) slot {
        T value;
        explicit slot(const std::function<T()>& init) : value(init()) {}
    };
    using slot_list = std::vector<std::unique_ptr<slot>>;

    template <class V, class Base>
    class basic_iterator {
    public:
        using value_type = std::remove_const_t<V>;
        using difference_type = std::ptrdiff_t;
        using reference = V&;
        using pointer = V*;
        using iterator_category = std::forward_iterator_tag;

        basic_iterator() = default;
        explicit basic_iterator(Base it) : it_(it) {}
        reference operator*() const { return (*it_)->value; }
        pointer operator->() const { return &(*it_)->value; }
        basic_iterator& operator++() {
            ++it_;
            return *this;
        }
        basic_iterator operator++(int) {
            basic_iterator old = *this;
            ++it_;
            return old;
        }
        friend bool operator==(const basic_iterator& a, const basic_iterator& b) { return a.it_ == b.it_; }

    private:
        Base it_{};
    };

public:
    using value_type = T;
    using iterator = basic_iterator<T, typename slot_list::iterator>;
    using const_iterator = basic_iterator<const T, typename slot_list::const_iterator>;

    // Each thread's value starts value-initialised: T().
    combinable() requires std::default_initializable<T> : init_([] { return T(); }) {}
    // Each thread's value starts as finit() (called on that thread, at its first local()). T may
    // be move-only or lack a default constructor.
    template <class F>
        requires std::invocable<F&> && std::convertible_to<std::invoke_result_t<F&>, T>
    explicit combinable(F finit) : init_(std::move(finit)) {}

    // Not copyable or movable: threads find their slots through this object's key.
    combinable(const combinable&) = delete;
    combinable& operator=(const combinable&) = delete;

    ~combinable() { detail::slot_keys::instance().release(key_.index); }

    // The calling thread's value, created on its first call.
    T& local() {
        if (T* v = find_fast()) [[likely]] return *v;
        bool exists = false;
        return local_cold(exists);
    }
    // The same; `exists` tells whether the value existed before this call.
    T& local(bool& exists) {
        if (T* v = find_fast()) [[likely]] {
            exists = true;
            return *v;
        }
        return local_cold(exists);
    }

    // The number of threads' values (the slots created since construction or clear()).
    std::size_t size() const {
        std::lock_guard lock(mutex_);
        return slots_.size();
    }
    bool empty() const { return size() == 0; }

    // Destroy every value; each thread's next local() starts afresh from finit.
    void clear() {
        std::lock_guard lock(mutex_);
        slots_.clear();
        key_.id = detail::slot_keys::instance().fresh_id();  // every thread's entry is stale now
    }

    // op(op(v0, v1), v2)... over the values in creation order, the first one copied; with no value
    // yet, a fresh one made as a thread's first value is (finit(), or T()). op is called as
    // op(T&& accumulated, const T& next) and returns the new accumulated value.
    template <class Op>
        requires std::copy_constructible<T>
    T combine(Op op) const {
        if (slots_.empty()) return init_();
        T result = slots_.front()->value;
        for (std::size_t i = 1; i < slots_.size(); ++i)
            result = std::invoke(op, std::move(result), std::as_const(slots_[i]->value));
        return result;
    }

    // f(value) for every thread's value, in creation order.
    template <class F>
    void combine_each(F f) {
        for (auto& s : slots_) std::invoke(f, s->value);
    }
    template <class F>
    void combine_each(F f) const {
        for (const auto& s : slots_) std::invoke(f, std::as_const(s->value));
    }

    // The "enumerable" form (tbb::enumerable_thread_specific): the values in creation order.
    iterator begin() { return iterator(slots_.begin()); }
    iterator end() { return iterator(slots_.end()); }
    const_iterator begin() const { return const_iterator(slots_.begin()); }
    const_iterator end() const { return const_iterator(slots_.end()); }

private:
    // Lock-free: a plain thread-local lookup.
    T* find_fast() const noexcept {
        std::vector<detail::thread_slot_entry>& table = detail::thread_slot_table();
        if (key_.index < table.size() && table[key_.index].id == key_.id) [[likely]]
            return static_cast<T*>(table[key_.index].value);
        return nullptr;
    }

    // This thread's first local() since construction or clear(): make its slot. If finit throws,
    // nothing changed and the exception reaches the caller.
    T& local_cold(bool& exists) {
        std::vector<detail::thread_slot_entry>& table = detail::thread_slot_table();
        if (table.size() <= key_.index) table.resize(key_.index + 1);
        std::lock_guard lock(mutex_);
        if (slots_.size() == slots_.capacity()) slots_.reserve(slots_.empty() ? 8 : 2 * slots_.size());
        auto fresh = std::make_unique<slot>(init_);
        T* value = &fresh->value;
        slots_.push_back(std::move(fresh));  // cannot throw: reserved above
        table[key_.index] = {key_.id, value};
        exists = false;
        return *value;
    }

    std::function<T()> init_;
    detail::slot_key key_ = detail::slot_keys::instance().acquire();
    mutable std::mutex mutex_;  // guards slots_ against concurrent first local() calls
    slot_list slots_;
};

// oneTBB has two types because its combinable is a thin wrapper over enumerable_thread_specific;
// here one type has both sets of members (local, combine, combine_each, clear, begin/end, size).
template <class T>
using enumerable_thread_specific = combinable<T>;

}  // namespace crew
