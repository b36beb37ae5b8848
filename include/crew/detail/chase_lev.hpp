// crew/detail/chase_lev.hpp -- a growable Chase–Lev work-stealing deque of pointers.
//
// Algorithm: D. Chase and Y. Lev, "Dynamic circular work-stealing deque" (SPAA 2005), with the
// memory orderings of N. M. Lê, A. Pop, A. Cohen and F. Zappa Nardelli, "Correct and efficient
// work-stealing for weak memory models" (PPoPP 2013), and a release-published buffer on growth
// (the paper's relaxed store is a known bug).
//
// Who may call what:
//   push, pop           -- the owner thread only (one owner for the deque's whole life).
//   steal, size_hint    -- any thread, concurrently with the owner and with each other.
//   constructor, destructor -- while no other thread uses the deque.
//
// Invariants:
//   * Live elements are the indices [top, bottom). Indices are signed 64-bit and never wrap in
//     practice (2^63 pushes); a slot is buffer[i & mask], capacity is a power of two.
//   * top only grows, and only through a seq_cst CAS (thieves, and the owner on the last element),
//     so each index is handed out exactly once: to the single CAS winner, or to the owner's plain
//     pop when top < bottom after the owner's fence.
//   * A slot holds a trivially copyable pointer and is read without being cleared: a thief that
//     loses its CAS simply forgets what it read. Nothing is moved out before ownership is won.
//   * Growth copies [top, bottom) into a buffer twice the size and publishes it with a release
//     store. The old buffer is retired, not freed: a thief may still be reading it. Retired buffers
//     are freed when the deque is destroyed; their total size is below the live buffer's, so the
//     deque never holds more than twice its peak capacity.
//   * steal reports three outcomes: success, empty (top >= bottom), and lost (another thread won the
//     CAS). "lost" means work may still be there: a caller must not treat it as empty.
//
// Publication under C++20's memory model. Since C++20 (P0982R1) a release sequence continues only
// through read-modify-writes, not through later plain stores of the same thread. So EVERY store of
// bottom_ is a release store: push's, pop's decrement, pop's restore when empty, and pop_last_cold's
// restore. (With pop's stores relaxed, a thief whose acquire load of bottom reads one of them
// synchronizes with nothing: it can win the CAS on an index without happening after the push that
// filled the slot, and read the slot's old nullptr or race on *item. An exhaustive RC11 check found
// that; Relacy follows C++11's rule, where the relaxed store stays in push's release sequence, so it
// cannot see it, and on x86 a release store is the same mov.) We chose release stores over Lê et
// al.'s fence-based push (a release fence in push also covers pop's later relaxed stores, since
// they are sequenced after it): ThreadSanitizer does not model fences, a release store costs nothing
// on x86 and one stlr on ARM, and each store then names its own partner. What each thief read
// synchronizes with:
//   * bottom (acquire, in steal): with the owner's release store that wrote the value read, push's
//     or pop's. Every push of an index below that value is sequenced before that store, so the
//     slot's contents and *item (written by the pusher before push) happen before the thief's read.
//   * top (acquire, in steal): with the seq_cst CAS (an RMW: release sequences continue through the
//     later CASes) that wrote it, i.e. the previous winner. Only a fresher index; the slot's safety
//     comes from bottom, and losing a stale index is caught by the CAS.
//   * buffer_ (acquire, loaded after bottom): with grow_cold's release store. If the bottom value
//     read came from a store after a growth, that store follows the growth in the owner's order, so
//     the thief sees the new buffer (or a later one) and its copied slots. An older buffer read is
//     still valid for index t: retired buffers are never freed or rewritten below the copied range.
//   * the slot (relaxed): ordered by the bottom acquire above. The owner rewrites slot t only after
//     top passed t (push's acquire load of top pairs with the winning CAS, so the thief's read
//     happens before the rewrite); a thief that read a stale slot loses its CAS.
//   * *item (plain data, read by the caller after success): the item's writes are sequenced before
//     the slot store and bottom release in push, so the chain above covers them.
// The owner's own reads (pop) need nothing: it wrote everything it reads, except top (the seq_cst
// fence pair and the CAS handle the last-item race).
#pragma once

#include <cstdint>
#include <new>

#include "crew/detail/atomics.hpp"

namespace crew::detail {

enum class steal_status : std::uint8_t { success, empty, lost };

template <class T>
struct steal_result {
    steal_status status;
    T* item;  // non-null exactly when status == success
};

template <class T, class Policy = std_atomics>
class chase_lev_deque {
    template <class U>
    using atomic = typename Policy::template atomic<U>;

    struct buffer {
        std::int64_t mask;     // capacity - 1; immutable after construction
        buffer* retired_next;  // owner-only: the chain of retired buffers
        atomic<T*>* slots;     // written by the owner (relaxed), read by owner and thieves

        explicit buffer(std::int64_t capacity)
            : mask(capacity - 1), retired_next(nullptr), slots(new atomic<T*>[capacity]) {
            for (std::int64_t i = 0; i < capacity; ++i) slots[i].store(nullptr, std::memory_order_relaxed);
        }
        ~buffer() { delete[] slots; }
        atomic<T*>& at(std::int64_t i) const noexcept { return slots[i & mask]; }
    };

public:
    explicit chase_lev_deque(std::int64_t capacity = 256) {
        std::int64_t c = 1;
        while (c < capacity) c <<= 1;  // round up to a power of two (at least 1)
        buffer_.store(new buffer(c), std::memory_order_relaxed);
    }

    chase_lev_deque(const chase_lev_deque&) = delete;
    chase_lev_deque& operator=(const chase_lev_deque&) = delete;

    // Items still inside are not owned by the deque (they are plain pointers); it frees only its
    // own buffers, the live one and every retired one.
    ~chase_lev_deque() {
        buffer* b = buffer_.load(std::memory_order_relaxed);
        while (b != nullptr) {
            buffer* next = b->retired_next;
            delete b;
            b = next;
        }
    }

    // Owner only. Returns the number of items in the deque right after the push (an upper bound
    // when thieves are active), so the caller can track the deepest the deque got.
    std::int64_t push(T* item) {
        std::int64_t b = bottom_.load(std::memory_order_relaxed);  // only the owner writes bottom
        // acquire: pairs with the thieves' CAS on top, so slots they have taken are free to reuse.
        std::int64_t t = top_.load(std::memory_order_acquire);
        buffer* buf = buffer_.load(std::memory_order_relaxed);  // only the owner writes buffer_
        if (b - t > buf->mask) [[unlikely]] buf = grow_cold(buf, t, b);
        buf->at(b).store(item, std::memory_order_relaxed);
        // release: publishes the slot (and *item) to a thief's acquire load of bottom in steal().
        bottom_.store(b + 1, std::memory_order_release);
        return b - t + 1;
    }

    // Owner only. The newest item, or nullptr when the deque is empty (or a thief took the last one).
    T* pop() noexcept {
        std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
        buffer* buf = buffer_.load(std::memory_order_relaxed);
        // release: a thief's acquire load of bottom may read this value; under C++20 it then
        // synchronizes only with this store, which must therefore carry the earlier pushes.
        bottom_.store(b, std::memory_order_release);
        // seq_cst fence: orders the bottom store above before the top load below; its partner is the
        // fence in steal() between loading top and loading bottom. Without it the owner and a thief
        // can both take the same item.
        if constexpr (Policy::injected_bug != bug::no_pop_fence) Policy::fence(std::memory_order_seq_cst);
        std::int64_t t = top_.load(std::memory_order_relaxed);
        if (t > b) [[unlikely]] {  // was already empty
            bottom_.store(b + 1, std::memory_order_release);  // release: as the store above
            return nullptr;
        }
        T* item = buf->at(b).load(std::memory_order_relaxed);
        if (t == b) [[unlikely]] return pop_last_cold(t, item);
        return item;
    }

    // Owner only, and only while NO thread can call steal() on this deque (the worker of a pool of
    // one: no other worker exists to steal). Then top_ never moves, so pop() needs neither its
    // fence nor the last-item CAS: a plain take of the newest item.
    T* pop_unshared() noexcept {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);  // only the owner writes bottom
        // relaxed: no thief exists, so top_ is the value this thread last saw (no partner).
        const std::int64_t t = top_.load(std::memory_order_relaxed);
        if (b <= t) return nullptr;
        T* item = buffer_.load(std::memory_order_relaxed)->at(b - 1).load(std::memory_order_relaxed);
        // release: every store of bottom_ is one (header); readers here are size_hint()'s hints.
        bottom_.store(b - 1, std::memory_order_release);
        return item;
    }

    // Any thread. The oldest item, or why there is none.
    steal_result<T> steal() noexcept {
        // acquire: pairs with the CAS on top by other thieves / the owner, so we see a fresh index.
        std::int64_t t = top_.load(std::memory_order_acquire);
        // seq_cst fence: partner of the fence in pop(); see there.
        if constexpr (Policy::injected_bug != bug::no_steal_fence) Policy::fence(std::memory_order_seq_cst);
        // acquire: pairs with the owner's release store of bottom that wrote the value read (push's
        // or pop's; see the header), making the slot and *item visible.
        std::int64_t b = bottom_.load(std::memory_order_acquire);
        if (t >= b) return {steal_status::empty, nullptr};
        // acquire: pairs with grow_cold()'s release store, so a new buffer's copied slots are visible.
        // Loaded after bottom: a bottom that covers items pushed after a growth implies the new buffer.
        buffer* buf = buffer_.load(std::memory_order_acquire);
        T* item;
        if constexpr (Policy::injected_bug == bug::take_before_cas)
            item = buf->at(t).exchange(nullptr, std::memory_order_relaxed);  // the seeds' bug
        else
            item = buf->at(t).load(std::memory_order_relaxed);
        // seq_cst CAS: the single point where index t changes hands (partner: the owner's CAS in
        // pop_last_cold and other thieves' CAS here). Only the winner may use `item`.
        if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
            return {steal_status::lost, nullptr};
        return {steal_status::success, item};
    }

    // Any thread. A snapshot of the number of items; exact only when no one else is operating.
    std::int64_t size_hint() const noexcept {
        std::int64_t b = bottom_.load(std::memory_order_acquire);
        std::int64_t t = top_.load(std::memory_order_acquire);
        return b > t ? b - t : 0;
    }

    // Owner only: the index the next push will use. Items the owner pushed from now on sit at or
    // above it, which lets the owner tell its newer items from older ones (see worker::wait_until).
    // relaxed: only the owner writes bottom_, so its own last store is what it reads; no partner.
    std::int64_t owner_bottom() const noexcept { return bottom_.load(std::memory_order_relaxed); }

    // Owner (or quiescent) only: the current capacity.
    std::int64_t capacity() const noexcept { return buffer_.load(std::memory_order_relaxed)->mask + 1; }

private:
    // The owner took the slot at index t == b: it races every thief for it through top.
    T* pop_last_cold(std::int64_t t, T* item) noexcept {
        if constexpr (Policy::injected_bug == bug::last_without_cas) {  // the seeds' bug
            bottom_.store(t + 1, std::memory_order_release);
            return item;
        }
        // seq_cst CAS: partner of the thieves' CAS in steal(); exactly one of them wins index t.
        std::int64_t expected = t;  // a failed CAS overwrites its first argument; keep t intact
        bool won = top_.compare_exchange_strong(expected, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
        // The deque is empty either way (top == bottom). release: as in pop().
        bottom_.store(t + 1, std::memory_order_release);
        return won ? item : nullptr;
    }

    buffer* grow_cold(buffer* old, std::int64_t t, std::int64_t b) {
        auto* bigger = new buffer((old->mask + 1) * 2);
        for (std::int64_t i = t; i < b; ++i)
            bigger->at(i).store(old->at(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
        bigger->retired_next = old;  // keep the old buffer alive: a thief may still read it
        // release: pairs with steal()'s acquire load of buffer_, publishing the copied slots.
        if constexpr (Policy::injected_bug == bug::relaxed_grow_publish)
            buffer_.store(bigger, std::memory_order_relaxed);  // the paper's bug
        else
            buffer_.store(bigger, std::memory_order_release);
        return bigger;
    }

    // top_: written by thieves (CAS) and the owner (CAS on the last item); read by all.
    alignas(cache_line) atomic<std::int64_t> top_{0};
    // bottom_: written by the owner only; read by thieves.
    alignas(cache_line) atomic<std::int64_t> bottom_{0};
    // buffer_: written by the owner on growth; read by thieves. Shares the owner's line with bottom_.
    atomic<buffer*> buffer_{nullptr};
};

}  // namespace crew::detail
