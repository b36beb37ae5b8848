// tests/reliability/model_deque.hpp -- Relacy scenarios for the Chase-Lev deque (chase_lev.hpp):
// one owner, two thieves, every item taken exactly once.
// Part of model_scenarios.hpp (which says what is checked and how a scenario runs).
#pragma once

// Before relacy.hpp (through relacy_policy.hpp) redefines `new` and friends for user code.
#include "crew/detail/frame_cache.hpp"
#include "reliability/relacy_policy.hpp"

namespace crew_model {

using crew::detail::chase_lev_deque;
using crew::detail::steal_status;

// ---------------------------------------------------------------------------------------------
// Deque scenarios

struct item {
    rl::var<int> payload;
    int id = 0;
};

constexpr int max_items = 8;
constexpr int payload_of(int id) { return 1000 + id; }

template <class Policy, class Scenario>
struct deque_model : rl::test_suite<deque_model<Policy, Scenario>, 3> {
    aligned_box<chase_lev_deque<item, Policy>> deque{Scenario::capacity};
    item items[max_items];
    int taken[max_items] = {};
    int pushed = 0;

    deque_model() {
        for (int i = 0; i < max_items; ++i) items[i].id = i;
    }

    // Owner: publish the next id.
    void push() {
        RL_ASSERT(pushed < max_items);
        item& it = items[pushed++];
        it.payload(RL_INFO) = payload_of(it.id);
        deque->push(&it);
    }
    // Owner: pop and take.
    void pop() {
        if (item* it = deque->pop()) take(it);
    }
    // Thief: one steal attempt.
    void steal() {
        crew::detail::steal_result<item> r = deque->steal();
        if (r.status == steal_status::success) {
            RL_ASSERT(r.item != nullptr);
            take(r.item);
        } else {
            RL_ASSERT(r.item == nullptr);
        }
    }
    void take(item* it) {
        RL_ASSERT(it != nullptr);
        if (it == nullptr) return;
        RL_ASSERT(it->payload(RL_INFO) == payload_of(it->id));  // and Relacy checks the access races
        RL_ASSERT(taken[it->id] == 0);                           // no id twice
        ++taken[it->id];
    }

    void thread(unsigned index) {
        if (index == 0)
            Scenario::owner(*this);
        else
            Scenario::thief(*this);
    }

    void after() {
        while (item* it = deque->pop()) take(it);
        for (int i = 0; i < pushed; ++i) RL_ASSERT(taken[i] == 1);  // no id lost
        RL_ASSERT(deque->size_hint() == 0);
    }
};

// push/pop/steal mixes; with capacity 2 the fourth live item grows the buffer.
template <int Capacity>
struct mix {
    static constexpr int capacity = Capacity;
    template <class M>
    static void owner(M& m) {
        m.push();
        m.push();
        m.pop();
        m.push();
        m.push();
        m.pop();
        m.push();
        m.pop();
        m.pop();
    }
    template <class M>
    static void thief(M& m) {
        m.steal();
        m.steal();
    }
};

// Growth while thieves steal: five pushes from capacity 2 grow it twice (2 -> 4 -> 8).
template <int Capacity>
struct growth {
    static constexpr int capacity = Capacity;
    template <class M>
    static void owner(M& m) {
        for (int i = 0; i < 5; ++i) m.push();
        m.pop();
    }
    template <class M>
    static void thief(M& m) {
        m.steal();
        m.steal();
    }
};

// The last items raced by the owner's pop and two thieves.
template <int Capacity>
struct last_item {
    static constexpr int capacity = Capacity;
    template <class M>
    static void owner(M& m) {
        m.push();
        m.push();
        m.pop();
        m.pop();
        m.push();
        m.pop();
    }
    template <class M>
    static void thief(M& m) {
        m.steal();
        m.steal();
    }
};

}  // namespace crew_model
