// tests/reliability/model_ring.hpp -- Relacy scenarios for the async ring (async_ring.hpp): owner
// push/pop/overflow against two stealers.
// Part of model_scenarios.hpp (which says what is checked and how a scenario runs).
#pragma once

// Before relacy.hpp (through relacy_policy.hpp) redefines `new` and friends for user code.
#include "crew/detail/frame_cache.hpp"
#include "reliability/relacy_policy.hpp"

namespace crew_model {

// ---------------------------------------------------------------------------------------------
// Coroutine run queue (crew/detail/async_ring.hpp) at capacity 4: thread 0 owns ring 0 (push with
// overflow to a sink, pop); threads 1 and 2 own rings 1 and 2 and steal from ring 0 into them.
// Each id carries an rl::var payload written before its push and read by whoever takes it, so the
// publication is race-checked; every id must be taken exactly once, counting the sink and what
// after() drains from the three rings. The scenarios start the indices at `first` (2^32 - 2 for
// the wrap scenarios, so the 32-bit indices wrap within the run).

template <class Policy, class Scenario>
struct ring_model : rl::test_suite<ring_model<Policy, Scenario>, 3> {
    using ring = crew::detail::async_ring<item, Policy, 4>;
    static constexpr int max_ring_items = 12;
    aligned_box<ring> rings[3] = {aligned_box<ring>(Scenario::first), aligned_box<ring>(Scenario::first),
                                  aligned_box<ring>(Scenario::first)};
    item items[max_ring_items];
    int taken[max_ring_items] = {};
    static constexpr int id_begin[3] = {0, 6, 9};  // ids 0..5: the owner's; 6..8, 9..11: the thieves'
    static constexpr int id_end[3] = {6, 9, 12};
    int next_id[3] = {0, 6, 9};
    model_atomic<bool> published{false};

    ring_model() {
        for (int i = 0; i < max_ring_items; ++i) items[i].id = i;
    }

    // Ring `self`'s owner pushes its next id; an overflow "takes" what the sink receives.
    void push(int self) {
        RL_ASSERT(next_id[self] < id_end[self]);
        item& it = items[next_id[self]++];
        it.payload(RL_INFO) = payload_of(it.id);
        rings[self]->push_back(&it, [&](item** batch, std::size_t n) {
            RL_ASSERT(n == 1 || n == 3);  // the single task, or half of 4 plus the task: one call
            for (std::size_t i = 0; i < n; ++i) take(batch[i]);
        });
    }
    void pop(int self) {
        if (item* it = rings[self]->pop()) take(it);
    }
    // Ring `self`'s owner steals from ring 0. Returns the status.
    crew::detail::ring_steal steal(int self) {
        crew::detail::ring_steal_result<item> r = rings[0]->steal_into(*rings[self]);
        if (r.status == crew::detail::ring_steal::success) {
            RL_ASSERT(r.count >= 1 && r.count <= 2);
            take(r.task);
        } else {
            RL_ASSERT(r.task == nullptr && r.count == 0);
        }
        return r.status;
    }
    // Steal until ring 0 reports empty (after the owner published everything): "empty" must mean
    // that nothing is left there (seed 002: a lost race reported as nothing strands tasks).
    void drain(int self) {
        while (!published.load(std::memory_order::acquire)) rl::yield(1, RL_INFO);
        for (;;) {
            crew::detail::ring_steal st = steal(self);
            while (item* it = rings[self]->pop()) take(it);
            if (st == crew::detail::ring_steal::empty) return;
            if (st == crew::detail::ring_steal::busy) rl::yield(1, RL_INFO);
        }
    }
    void take(item* it) {
        RL_ASSERT(it != nullptr);
        if (it == nullptr) return;
        RL_ASSERT(it->payload(RL_INFO) == payload_of(it->id));
        RL_ASSERT(taken[it->id] == 0);
        ++taken[it->id];
    }

    void thread(unsigned index) {
        if (index == 0)
            Scenario::owner(*this);
        else
            Scenario::thief(*this, static_cast<int>(index));
    }

    void after() {
        if constexpr (Scenario::drained_by_thieves) RL_ASSERT(rings[0]->size_hint() == 0);
        for (int r = 0; r < 3; ++r)
            while (item* it = rings[r]->pop()) take(it);
        for (int r = 0; r < 3; ++r)
            for (int i = id_begin[r]; i < next_id[r]; ++i) RL_ASSERT(taken[i] == 1);  // no id lost
    }
};

// Push past capacity while two thieves steal: overflow of the newest half, or of the single task
// during a steal, against claims and releases.
template <std::uint32_t First>
struct ring_mix {
    static constexpr std::uint32_t first = First;
    static constexpr bool drained_by_thieves = false;
    template <class M>
    static void owner(M& m) {
        for (int i = 0; i < 5; ++i) m.push(0);
        m.pop(0);
        m.push(0);
        m.pop(0);
    }
    template <class M>
    static void thief(M& m, int self) {
        m.steal(self);
        m.pop(self);
        m.steal(self);
    }
};

// Wrap: the indices start 2 below 2^32; the owner pops before pushing across the wrap.
struct ring_wrap {
    static constexpr std::uint32_t first = 0xfffffffeu;
    static constexpr bool drained_by_thieves = false;
    template <class M>
    static void owner(M& m) {
        m.push(0);
        m.push(0);
        m.pop(0);
        m.push(0);
        m.push(0);
        m.pop(0);
        m.push(0);
    }
    template <class M>
    static void thief(M& m, int self) {
        m.steal(self);
        m.steal(self);
    }
};

// Thieves with work of their own: each pushes three tasks into its own ring first, so it must
// not steal (no room) until it popped some.
struct ring_thief_room {
    static constexpr std::uint32_t first = 0;
    static constexpr bool drained_by_thieves = false;
    template <class M>
    static void owner(M& m) {
        for (int i = 0; i < 4; ++i) m.push(0);
        m.pop(0);
    }
    template <class M>
    static void thief(M& m, int self) {
        for (int i = 0; i < 3; ++i) m.push(self);
        m.steal(self);
        m.pop(self);
        m.steal(self);
    }
};

// The owner publishes four tasks and pops one; the thieves steal until ring 0 says empty.
struct ring_drain {
    static constexpr std::uint32_t first = 0xfffffffdu;
    static constexpr bool drained_by_thieves = true;
    template <class M>
    static void owner(M& m) {
        for (int i = 0; i < 4; ++i) m.push(0);
        m.published.store(true, std::memory_order::release);
        m.pop(0);
    }
    template <class M>
    static void thief(M& m, int self) {
        m.drain(self);
    }
};

}  // namespace crew_model
