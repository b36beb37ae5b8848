// tests/reliability/model_frame.hpp -- Relacy scenarios for the frame cache's remote-free list
// (frame_cache.hpp).
// Part of model_scenarios.hpp (which says what is checked and how a scenario runs).
#pragma once

// Before relacy.hpp (through relacy_policy.hpp) redefines `new` and friends for user code.
#include "crew/detail/frame_cache.hpp"
#include "reliability/relacy_policy.hpp"

namespace crew_model {

// ---------------------------------------------------------------------------------------------
// The frame cache's remote-free list (crew/detail/frame_cache.hpp basic_remote_list): threads 0
// and 1 free two frames each onto the owner's list (Treiber push, release); thread 2, the owner,
// takes everything twice while they push (exchange, acquire) and after() takes the rest. Every
// frame must come back exactly once, and its contents (an rl::var written before the push, as a
// frame's last use) must be visible to the owner without a race.
struct remote_node {
    remote_node* next = nullptr;
    rl::var<int> payload;
    int id = 0;
};

template <class Policy>
struct remote_list_model : rl::test_suite<remote_list_model<Policy>, 3> {
    static constexpr int nodes_count = 4;
    aligned_box<crew::detail::basic_remote_list<remote_node, Policy>> list;
    remote_node nodes[nodes_count];
    int taken[nodes_count] = {};

    remote_list_model() {
        for (int i = 0; i < nodes_count; ++i) nodes[i].id = i;
    }

    void take_all() {
        for (remote_node* n = list->take_all(); n != nullptr;) {
            remote_node* next = n->next;
            RL_ASSERT(n->payload(RL_INFO) == 100 + n->id);
            RL_ASSERT(taken[n->id] == 0);
            ++taken[n->id];
            n = next;
        }
    }

    void thread(unsigned index) {
        if (index < 2) {
            for (int k = 0; k < 2; ++k) {
                remote_node& n = nodes[2 * index + static_cast<unsigned>(k)];
                n.payload(RL_INFO) = 100 + n.id;
                list->push(&n);
            }
        } else {
            take_all();
            take_all();
        }
    }

    void after() {
        take_all();
        for (int i = 0; i < nodes_count; ++i) RL_ASSERT(taken[i] == 1);
    }
};

}  // namespace crew_model
