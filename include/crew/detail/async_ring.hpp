// crew/detail/async_ring.hpp -- the bounded FIFO run queue of coroutine tasks: one owner, many
// thieves (the foundation of issue 10's scheduler; standalone, no scheduler code here).
//
// Reference design: Tokio's local run queue (tokio/src/runtime/scheduler/multi_thread/queue.rs),
// with two differences: the overflow moves the NEWEST half (as Tokio does since its PR #8029, with
// crew's own interlock, see "Overflow" below), and a thief reports why it got nothing (empty /
// busy / no_room) instead of one "nothing" (seed 002's bug: a thief must not park on a lost race).
//
// Who may call what:
//   push_back, pop       -- the owner thread only (one owner for the ring's whole life).
//   steal_into(dst)      -- any thread that owns `dst` (another ring), concurrently with this
//                           ring's owner and with other thieves.
//   size_hint, empty_hint, capacity -- any thread.
//   constructor, destructor -- while no other thread uses the ring. The ring holds plain T*: it
//                           never owns or frees a task.
//
// State and who writes it:
//   head_  one 64-bit word, high half = steal head, low half = real head (32-bit indices).
//          Written only by RMWs (CAS): the owner's pop and overflow claim, the thieves' claim and
//          release. steal == real means no steal is in progress.
//   tail_  32-bit, written only by the owner (push, overflow), read by thieves.
//   slots_ Capacity atomic<T*>, written only by the owner (push) and by the thread that owns this
//          ring as a *destination* -- which is the owner too; read by the owner and by thieves.
//
// Invariants (all index arithmetic is unsigned 32-bit and wraps; a slot is slots_[i % Capacity]):
//   * Live, unclaimed tasks are [real, tail); [steal, real) is being copied out by the one thief
//     whose claim set real (no other thief may start while steal != real).
//   * tail - steal <= Capacity: the owner checks capacity against the STEAL head, so it never
//     rewrites a slot a thief is still copying (seed 001's batch-claim bug).
//   * Each index in [real, tail) changes hands exactly once, through a CAS of head_ that moves real
//     past it: the owner's pop, a thief's claim, or the owner's overflow claim (which takes the
//     newest half from the tail side, see below). Slots are read, never cleared: a thread that
//     loses a CAS forgets what it read, nothing is moved out before ownership is won (seed 000).
//   * A thief takes n - n/2 of the n it sees (half, rounded up), at most Capacity/2, and only when
//     its own ring (dst) has at most Capacity/2 tasks counted from dst's steal head (seed 002's
//     stealInto never checked; it overwrote the thief's own live tasks).
//
// Overflow (push_back when tail - steal == Capacity):
//   * steal != real (a steal in progress; it will free space): the single new task goes to the
//     overflow sink.
//   * otherwise the owner moves the NEWEST half, [tail - Capacity/2, tail), plus the new task to the
//     sink in one call (one lock acquisition in the scheduler). Why the newest half: the first half
//     holds the oldest tasks, which are next to run here; the second half fills only when local
//     tasks wake or spawn a burst of others, so what goes to the injector is fresh work, and a task
//     taken from the injector (placed in the first half) can never be sent back to it by a later
//     burst: every task only moves forward (Tokio PR #8029's fairness argument). Moving the oldest
//     half instead lets one task bounce between ring and injector for ever.
//   * Interlock: a thief bounds its claim by the tail it read, so the owner cannot just lower the
//     tail: a thief that read the old tail (before a steal of the first half finished) could claim
//     the moved slots. The owner stores tail - Capacity/2 first, then CASes head_ from (r, r) to the
//     same (r, r) with release. Every thief claim later in head_'s modification order reads a head
//     in that CAS's release sequence (all writes of head_ are RMWs), so it sees the lowered tail or
//     a later one; a claim ordered before it started from (r, r) with a tail of at most r + Capacity
//     and so takes at most [r, r + Capacity/2): the oldest half, which the owner does not move. If
//     the CAS fails (a thief claimed first), the owner restores the tail and retries the push.
//   * The lowered tail is visible to thieves even when the CAS fails. A thief that reads it sees a
//     prefix of the live tasks (safe: the owner moves nothing on failure), or, when its real head
//     is already past it (the owner had read a stale head), tail - real wraps above Capacity: the
//     thief re-reads head and tail. (Found by the Relacy model ring_mix_cap4: without that check
//     the thief claimed a wrapped range and took a task twice.)
//
// Index width (seed 002 / Tokio #5041): head_ returns to a value it held only after 2^32 pops or
// claims. A thief preempted between its load of head_ and its claim CAS across exactly a multiple
// of 2^32 index advances (over 40 s of nothing but pops at 10 ns each) could win the CAS on stale
// indices. crew accepts that bound, as Tokio does with the same widths; 16-bit halves (Tokio
// before #5041) wrap after 65,536 and are not used.
//
// Orderings under C++20 (release sequences continue only through RMWs), each with its partner:
//   push_back: head_ load acquire -- pairs with a thief's release CAS (the release phase), so the
//     slots it copied out are read before we rewrite them. Slot store relaxed, then tail_ store
//     release -- pairs with the thief's acquire load of tail_; every store of tail_ is a release,
//     so whichever store a thief reads carries all earlier slot writes.
//   overflow claim: tail_ store release (as above), then CAS head_ acq_rel -- release: partner of
//     every later thief's acquire load of head_ (through the RMW release sequence), which must see
//     the lowered tail; acquire: the thieves' release CASes, as in push_back.
//   pop: CAS head_ acq_rel -- release keeps the owner's tail stores ordered before any thief that
//     acquires a later head value (the overflow argument needs the chain unbroken); acquire pairs
//     with thieves' release CASes. The slot is the owner's own write.
//   steal_into (thief): head_ load acquire -- pairs with the release CAS that wrote it (the owner's
//     pop/overflow or a thief's release), so the tail read next is at least as new as the tail that
//     bounded every earlier claim. tail_ load acquire -- pairs with the owner's release store that
//     wrote it: the slots [real, tail) are visible. Claim CAS acq_rel: release continues the
//     sequence; acquire as the load. Slot reads relaxed (ordered by the tail acquire). Release CAS
//     acq_rel: release pairs with the owner's acquire load of head_ in push_back (our slot reads
//     happen before its rewrite). dst's tail_ store release: partner of dst's thieves' acquire.
//     dst's head_ load acquire (room check): pairs with dst's thieves' release CAS, as push_back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "crew/detail/atomics.hpp"

namespace crew::detail {

// What push_back did with the task.
enum class ring_push : std::uint8_t {
    pushed,        // into the ring
    overflow_one,  // the ring was full during a steal: the task alone went to the sink
    overflow_half, // the ring was full: its newest half and the task went to the sink in one call
};

// Why steal_into returned what it did.
enum class ring_steal : std::uint8_t {
    success,  // `task` is the last stolen task (run it now); count - 1 more are in dst
    empty,    // the victim had nothing unclaimed when looked at
    busy,     // another steal from the victim is in progress: work may be there, try again later
    no_room,  // dst holds more than Capacity/2 tasks (counted from its steal head): run those first
};

template <class T>
struct ring_steal_result {
    ring_steal status;
    T* task;              // non-null exactly when status == success
    std::uint32_t count;  // tasks taken (task included); 0 unless success
};

template <class T, class Policy = std_atomics, std::size_t Capacity = 256>
class async_ring {
    static_assert(Capacity >= 2 && (Capacity & (Capacity - 1)) == 0, "Capacity must be a power of two >= 2");
    static_assert(Capacity <= (std::size_t{1} << 30), "indices are 32-bit");

    template <class U>
    using atomic = typename Policy::template atomic<U>;
    using index = std::uint32_t;
    static constexpr index capacity_ = static_cast<index>(Capacity);
    static constexpr index half_ = capacity_ / 2;
    static constexpr index mask_ = capacity_ - 1;

    static constexpr std::uint64_t pack(index steal, index real) noexcept {
        return (std::uint64_t{steal} << 32) | real;
    }
    static constexpr index steal_of(std::uint64_t head) noexcept { return static_cast<index>(head >> 32); }
    static constexpr index real_of(std::uint64_t head) noexcept { return static_cast<index>(head); }

public:
    // `first_index` is where the indices start (a test hook: start near 2^32 to exercise the wrap).
    explicit async_ring(std::uint32_t first_index = 0) noexcept {
        head_.store(pack(first_index, first_index), std::memory_order_relaxed);
        tail_.store(first_index, std::memory_order_relaxed);
        for (auto& s : slots_) s.store(nullptr, std::memory_order_relaxed);
    }
    async_ring(const async_ring&) = delete;
    async_ring& operator=(const async_ring&) = delete;

    static constexpr std::size_t capacity() noexcept { return Capacity; }

    // Owner only. Appends `task`; when the ring is full, hands tasks to
    // `overflow(T** items, std::size_t n)` (called at most once, from this thread, with the tasks
    // in FIFO order, the new one last). A throwing sink leaves the ring as it was and `task` with
    // the caller.
    template <class Overflow>
    ring_push push_back(T* task, Overflow&& overflow) {
        for (;;) {
            // acquire: pairs with a thief's release CAS; see the header.
            std::uint64_t head = head_.load(std::memory_order_acquire);
            index tail = tail_.load(std::memory_order_relaxed);  // only this thread writes tail_
            if (has_room(head, tail)) [[likely]] {
                slots_[tail & mask_].store(task, std::memory_order_relaxed);
                // release: publishes the slot to a thief's acquire load of tail_.
                tail_.store(tail + 1, std::memory_order_release);
                return ring_push::pushed;
            }
            if (steal_of(head) != real_of(head)) {  // a steal in progress will free space
                T* one[1] = {task};
                overflow(one, std::size_t{1});
                return ring_push::overflow_one;
            }
            if (overflow_half_cold(head, tail, task, overflow)) return ring_push::overflow_half;
            // a thief claimed in between: the ring may have room now; look again
        }
    }

    // Owner only. The oldest unclaimed task, or nullptr when there is none.
    T* pop() noexcept {
        std::uint64_t head = head_.load(std::memory_order_acquire);  // acquire: as the CAS below
        for (;;) {
            index steal = steal_of(head), real = real_of(head);
            if (real == tail_.load(std::memory_order_relaxed)) return nullptr;  // own writes
            std::uint64_t next = steal == real ? pack(real + 1, real + 1) : pack(steal, real + 1);
            // acq_rel: see the header (release keeps the RMW chain that carries tail_; acquire
            // pairs with the thieves' release CAS). On failure head is reloaded (acquire).
            if (head_.compare_exchange_strong(head, next, std::memory_order_acq_rel, std::memory_order_acquire))
                return slots_[real & mask_].load(std::memory_order_relaxed);
        }
    }

    // Owner only, and only while no thread can steal from this ring (the ring of a pool's only
    // worker): pop() without its CAS. With no thief, head_ changes only here and in the owner's
    // other calls, so a plain relaxed store keeps it exact; nobody's acquire pairs with it.
    T* pop_unshared() noexcept {
        const index real = real_of(head_.load(std::memory_order_relaxed));
        if (real == tail_.load(std::memory_order_relaxed)) return nullptr;  // own writes
        head_.store(pack(real + 1, real + 1), std::memory_order_relaxed);
        return slots_[real & mask_].load(std::memory_order_relaxed);
    }

    // A thread that owns `dst` (dst != this). Claims half of this ring's unclaimed tasks (rounded
    // up, at most Capacity/2), copies them to dst's tail, releases them, and returns the last one
    // to run directly; the others are published in dst.
    ring_steal_result<T> steal_into(async_ring& dst) noexcept {
        index dst_tail = dst.tail_.load(std::memory_order_relaxed);  // dst is the caller's own ring
        // acquire: pairs with dst's thieves' release CAS (their copies are done before we reuse).
        index dst_steal = steal_of(dst.head_.load(std::memory_order_acquire));
        if constexpr (Policy::injected_bug != bug::ring_no_room_check)
            if (static_cast<index>(dst_tail - dst_steal) > half_) return {ring_steal::no_room, nullptr, 0};

        std::uint64_t head = head_.load(std::memory_order_acquire);  // acquire: see the header
        index real, n;
        for (;;) {
            if (steal_of(head) != real_of(head)) return {ring_steal::busy, nullptr, 0};
            real = real_of(head);
            // acquire: pairs with the owner's release store of tail_: slots [real, tail) visible.
            index tail = tail_.load(std::memory_order_acquire);
            n = static_cast<index>(tail - real);
            if (n > capacity_) [[unlikely]] {  // a lowered tail below real: see "Overflow" above
                Policy::pause();
                head = head_.load(std::memory_order_acquire);  // acquire: as above
                continue;
            }
            if (n == 0) return {ring_steal::empty, nullptr, 0};
            n -= n / 2;
            if (n > half_) n = half_;
            // acq_rel: release continues the RMW chain, acquire as the load above. A failure
            // reloads head and looks again: losing a race is not "empty".
            if (head_.compare_exchange_strong(head, pack(real, real + n), std::memory_order_acq_rel,
                                              std::memory_order_acquire))
                break;
            if constexpr (Policy::injected_bug == bug::ring_lost_cas_is_empty) return {ring_steal::empty, nullptr, 0};
        }
        for (index i = 0; i < n; ++i)  // relaxed: ordered by the tail_ acquire above
            dst.slots_[(dst_tail + i) & mask_].store(slots_[(real + i) & mask_].load(std::memory_order_relaxed),
                                                     std::memory_order_relaxed);
        release_claim(head, real + n);
        T* task = dst.slots_[(dst_tail + n - 1) & mask_].load(std::memory_order_relaxed);
        // release: publishes the copied slots to dst's thieves (partner: their tail_ acquire).
        if (n > 1) dst.tail_.store(dst_tail + n - 1, std::memory_order_release);
        return {ring_steal::success, task, n};
    }

    // Any thread: a snapshot of the unclaimed tasks (exact only when no one else operates).
    std::size_t size_hint() const noexcept {
        index real = real_of(head_.load(std::memory_order_acquire));
        index tail = tail_.load(std::memory_order_acquire);
        index n = static_cast<index>(tail - real);
        return n <= capacity_ ? n : 0;  // a stale pair of loads may be inconsistent
    }
    bool empty_hint() const noexcept { return size_hint() == 0; }
    // Any thread: the real head, which every pop and every steal claim advances: a progress hint
    // (has anyone taken a task from this ring since the last look?). relaxed: a hint, no data.
    std::uint32_t head_hint() const noexcept { return real_of(head_.load(std::memory_order_relaxed)); }

private:
    bool has_room(std::uint64_t head, index tail) const noexcept {
        if constexpr (Policy::injected_bug == bug::ring_capacity_vs_real_head)
            return static_cast<index>(tail - real_of(head)) < capacity_;
        if constexpr (Policy::injected_bug == bug::ring_wide_index_math)
            return std::uint64_t{tail} - std::uint64_t{steal_of(head)} < capacity_;
        return static_cast<index>(tail - steal_of(head)) < capacity_;
    }

    // The release phase: the steal head catches up with the real head (which the owner's pops may
    // have moved meanwhile). `head` is the value our claim wrote.
    void release_claim(std::uint64_t head, index claimed_end) noexcept {
        head = pack(steal_of(head), claimed_end);
        // acq_rel: release pairs with the owner's acquire load of head_ in push_back (our slot
        // reads happen before it rewrites them); on failure head is reloaded and we retry.
        while (!head_.compare_exchange_strong(head, pack(real_of(head), real_of(head)), std::memory_order_acq_rel,
                                              std::memory_order_acquire)) {
        }
    }

    // The ring is full (tail - real == Capacity) and no steal is in progress: claim the newest
    // half (see "Overflow" in the header) and hand it with `task` to the sink. False when a thief
    // claimed first (the tail is restored; the caller retries).
    template <class Overflow>
    bool overflow_half_cold(std::uint64_t head, index tail, T* task, Overflow& overflow) {
        const index keep = tail - half_;
        if constexpr (Policy::injected_bug == bug::ring_overflow_without_claim) {
            tail_.store(keep, std::memory_order_release);
        } else {
            tail_.store(keep, std::memory_order_release);  // release: as every tail_ store
            // acq_rel: release orders the store above before every later claim (see the header).
            if (!head_.compare_exchange_strong(head, head, std::memory_order_acq_rel, std::memory_order_acquire)) {
                tail_.store(tail, std::memory_order_release);  // restore: the tasks stay put
                return false;
            }
        }
        T* batch[half_ + 1];
        for (index i = 0; i < half_; ++i) batch[i] = slots_[(keep + i) & mask_].load(std::memory_order_relaxed);
        batch[half_] = task;
        try {
            overflow(batch, std::size_t{half_} + 1);
        } catch (...) {
            // Nobody else can claim above `keep` while the tail is there: put the half back.
            tail_.store(tail, std::memory_order_release);
            throw;
        }
        return true;
    }

    // head_: RMW only (owner's pop and overflow claim, thieves' claim and release), except
    // pop_unshared's store (no thief exists then); read by all.
    alignas(cache_line) atomic<std::uint64_t> head_;
    // tail_: written by the owner only; read by thieves. slots_: see the header.
    alignas(cache_line) atomic<index> tail_;
    atomic<T*> slots_[Capacity];
};

}  // namespace crew::detail
