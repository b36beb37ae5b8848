// crew/async/detail/timer_wheel.hpp -- a hierarchical timing wheel with intrusive nodes. It knows
// nothing about tasks or threads: the caller (crew/detail/io_driver.hpp) serialises every call.
//
// Time is kept in ticks of 1024 ns (tick_shift). A deadline (ns) is rounded UP to its tick, so a
// node never fires before its deadline, and at most one tick after it once advance() is called in
// time. 7 levels of 64 slots: level L slot covers 64^L ticks; the wheel spans 2^42 ticks (~52
// days); a farther deadline is parked at the wheel's end and re-inserted when it comes up.
//
// insert/cancel: O(1) (a doubly linked slot list and one bit per slot). poll(now): the next node
// whose tick is <= now's tick, in tick order (nodes of one tick in any order); a slot of a higher
// level is cascaded into the lower levels when its time comes (each node moves at most 6 times).
// next_deadline(): the earliest time (ns) at which poll() may give a node (a lower bound).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <limits>

namespace crew::detail {

struct timer_node {
    std::uint64_t deadline_ns = 0;
    timer_node* prev = nullptr;
    timer_node* next = nullptr;
    std::uint16_t where = not_queued;  // level * 64 + slot, pending_list, or not_queued
    static constexpr std::uint16_t not_queued = 0xffff;
    static constexpr std::uint16_t pending_list = 7 * 64;  // due: poll() gives these first
    static constexpr std::uint16_t far_list = 7 * 64 + 1;  // beyond the wheel's current block
    bool queued() const noexcept { return where != not_queued; }
};

class timer_wheel {
public:
    static constexpr unsigned tick_shift = 10;  // 1024 ns per tick
    static constexpr unsigned levels = 7;
    static constexpr unsigned slot_bits = 6;
    static constexpr unsigned slots = 1u << slot_bits;
    static constexpr std::uint64_t span_ticks = std::uint64_t{1} << (levels * slot_bits);
    static constexpr std::uint64_t never = std::numeric_limits<std::uint64_t>::max();

    explicit timer_wheel(std::uint64_t start_ns = 0) noexcept : elapsed_(start_ns >> tick_shift) {}
    timer_wheel(const timer_wheel&) = delete;
    timer_wheel& operator=(const timer_wheel&) = delete;

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }

    // `n` must not be queued. A deadline in the past fires at the next poll().
    void insert(timer_node& n) noexcept {
        ++size_;
        place(n);
    }

    // Take `n` out; false when it was not queued (it fired already, or was never inserted).
    bool cancel(timer_node& n) noexcept {
        if (!n.queued()) return false;
        unlink(n);
        --size_;
        return true;
    }

    // The next node due at `now_ns` (its tick <= now's tick), or nullptr. Advances the wheel.
    timer_node* poll(std::uint64_t now_ns) noexcept {
        const std::uint64_t now = now_ns >> tick_shift;
        for (;;) {
            if (timer_node* n = heads_[timer_node::pending_list]) {
                unlink(n);
                --size_;
                return n;
            }
            unsigned level = 0, slot = 0;
            std::uint64_t start = 0;
            if (!next_slot(level, slot, start) || start > now) {
                if (now <= elapsed_) return nullptr;
                const bool new_block = (now ^ elapsed_) >= span_ticks;
                elapsed_ = now;  // nothing due up to now: no slot is skipped
                if (!new_block || heads_[timer_node::far_list] == nullptr) return nullptr;
                replace_far();
                continue;
            }
            elapsed_ = start;
            take_slot(level, slot);
        }
    }

    // Fire (callback(node&)) every node due at `now_ns`, in tick order. Returns how many fired.
    template <class F>
    std::size_t advance(std::uint64_t now_ns, F&& callback) {
        std::size_t fired = 0;
        while (timer_node* n = poll(now_ns)) {
            ++fired;
            callback(*n);
        }
        return fired;
    }

    // The earliest time (ns) at which poll() may give a node; never when empty.
    std::uint64_t next_deadline() const noexcept {
        if (heads_[timer_node::pending_list] != nullptr) return elapsed_ << tick_shift;
        unsigned level = 0, slot = 0;
        std::uint64_t start = 0;
        if (!next_slot(level, slot, start)) {
            if (heads_[timer_node::far_list] == nullptr) return never;
            return ((elapsed_ | (span_ticks - 1)) + 1) << tick_shift;  // the next block: re-place them
        }
        return start << tick_shift;
    }

    // The wheel's memory beside its nodes (the memory test counts it).
    static constexpr std::size_t overhead_bytes() noexcept { return sizeof(timer_wheel); }

private:
    static std::uint64_t tick_of(std::uint64_t ns) noexcept {
        return (ns >> tick_shift) + ((ns & ((std::uint64_t{1} << tick_shift) - 1)) != 0 ? 1 : 0);
    }

    void place(timer_node& n) noexcept {
        std::uint64_t tick = tick_of(n.deadline_ns);
        if (tick <= elapsed_) {
            link(n, timer_node::pending_list);
            return;
        }
        if ((elapsed_ ^ tick) >= span_ticks) {  // beyond the current top-level block (~52 days)
            link(n, timer_node::far_list);
            return;
        }
        const unsigned significant = 63u - static_cast<unsigned>(std::countl_zero((elapsed_ ^ tick) | (slots - 1)));
        const unsigned level = significant / slot_bits;
        const unsigned slot = static_cast<unsigned>(tick >> (level * slot_bits)) & (slots - 1);
        link(n, static_cast<std::uint16_t>(level * slots + slot));
    }

    void link(timer_node& n, std::uint16_t where) noexcept {
        timer_node*& head = heads_[where];
        n.where = where;
        n.prev = nullptr;
        n.next = head;
        if (head != nullptr) head->prev = &n;
        head = &n;
        if (where < timer_node::pending_list) occupied_[where / slots] |= std::uint64_t{1} << (where % slots);
    }

    void unlink(timer_node* n) noexcept { unlink(*n); }
    void unlink(timer_node& n) noexcept {
        const std::uint16_t where = n.where;
        if (n.prev != nullptr) n.prev->next = n.next;
        else heads_[where] = n.next;
        if (n.next != nullptr) n.next->prev = n.prev;
        if (heads_[where] == nullptr && where < timer_node::pending_list)
            occupied_[where / slots] &= ~(std::uint64_t{1} << (where % slots));
        n.prev = n.next = nullptr;
        n.where = timer_node::not_queued;
    }

    // The first occupied slot at or after the wheel's position, lowest level first (every node of
    // level L is due before every node of level L+1), and the tick at which it starts.
    bool next_slot(unsigned& level, unsigned& slot, std::uint64_t& start) const noexcept {
        for (unsigned l = 0; l < levels; ++l) {
            if (occupied_[l] == 0) continue;
            const unsigned shift = l * slot_bits;
            const unsigned now_slot = static_cast<unsigned>(elapsed_ >> shift) & (slots - 1);
            const std::uint64_t ahead = std::rotr(occupied_[l], static_cast<int>(now_slot));
            const unsigned s = (now_slot + static_cast<unsigned>(std::countr_zero(ahead))) & (slots - 1);
            const std::uint64_t level_span = std::uint64_t{1} << (shift + slot_bits);
            start = (elapsed_ & ~(level_span - 1)) + (static_cast<std::uint64_t>(s) << shift);
            if (start < elapsed_) start = elapsed_;  // defensive: placement keeps slots ahead
            level = l;
            slot = s;
            return true;
        }
        return false;
    }

    // The wheel entered a new top-level block: the far nodes go where they now belong (once per
    // ~52 days of wheel time; O(far nodes)).
    void replace_far() noexcept {
        timer_node* n = heads_[timer_node::far_list];
        heads_[timer_node::far_list] = nullptr;
        while (n != nullptr) {
            timer_node* next = n->next;
            place(*n);
            n = next;
        }
    }

    // The slot's time has come: level 0 nodes become pending (due), others drop a level or more.
    void take_slot(unsigned level, unsigned slot) noexcept {
        const std::uint16_t where = static_cast<std::uint16_t>(level * slots + slot);
        timer_node* n = heads_[where];
        heads_[where] = nullptr;
        occupied_[level] &= ~(std::uint64_t{1} << slot);
        while (n != nullptr) {
            timer_node* next = n->next;
            if (level == 0) link(*n, timer_node::pending_list);
            else place(*n);
            n = next;
        }
    }

    std::uint64_t elapsed_;  // the wheel's position (ticks): every queued node is due at or after it
    std::size_t size_ = 0;
    std::array<std::uint64_t, levels> occupied_{};
    std::array<timer_node*, levels * slots + 2> heads_{};  // + the pending (due) and far lists
};

}  // namespace crew::detail
