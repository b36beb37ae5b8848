// tests/reliability/model_fork.hpp -- the Relacy scenario for private forks with on-demand
// promotion (crew/detail/fork_stack.hpp over crew/detail/chase_lev.hpp), as crew::join and
// crew::fork_join use them through worker::fork / worker::unfork.
//
// The protocol modelled, with the production headers instantiated on relacy_atomics<Bug>:
//   owner:  fork(job) records it privately; when fork() reports a request, promote_oldest moves
//           the oldest private job to the deque. The join takes the newest job back: inline when
//           take_back() says it is still private, else by popping the deque (the popped item must
//           be the job itself or nothing: a promoted job has only promoted, older jobs below it);
//           nothing popped means a thief took it.
//   thieves: steal from the deque; on "empty" they request(); on "lost" they try again later.
// Checked: every job is run exactly once (inline by the owner, or by the thief that stole it, or
// drained from the deque after all threads finished), its payload (written before the fork) is
// visible to whoever runs it (Relacy race-checks the rl::var), and nothing stays private at the end.
// The depth word also counts the private take-backs (metrics' inline halves); the second scenario
// gives that count 2 bits (it wraps every 4 take-backs), and the thief reads it (inline_runs(), as
// pool::metrics() does) between its steals: every read is at most the owner's private take-backs
// so far and never below an earlier read (the wraps_ seqlock), and the final count is exact. The
// last two forks are crew::fork_join's (fork_many, take_back_uncounted, take_back_counting or
// one count_inline).
// Requests reach the owner through the fork's limit (a requester stores zero after its bit; the
// owner's cold path restores the limit with an exchange, then reads the bit): at the end, a request
// still pending has left the limit at zero, so the owner's next fork would answer it.
#pragma once

// Before relacy.hpp (through model_scenarios.hpp) redefines `new` and friends for user code.
#include "crew/detail/fork_stack.hpp"
#include "reliability/model_scenarios.hpp"

namespace crew_model {

using crew::detail::fork_stack;

// Shared by the scenarios below. A job run: its payload is visible and it runs only once.
inline void take_once(int* taken, item* it) {
    RL_ASSERT(it->payload(RL_INFO) == payload_of(it->id));
    RL_ASSERT(taken[it->id] == 0);  // no id twice
    ++taken[it->id];
}
// A thief's step: steal; on "empty" ask the owner for a promotion ("lost": try again later).
template <class Deque, class Forks>
item* steal_or_request(Deque& deque, Forks& forks) {
    crew::detail::steal_result<item> r = deque.steal();
    if (r.status == steal_status::success) return r.item;
    if (r.status == steal_status::empty) forks.request();
    return nullptr;
}

template <class Policy, unsigned DepthBits = 32>
struct fork_model : rl::test_suite<fork_model<Policy, DepthBits>, 3> {
    aligned_box<chase_lev_deque<item, Policy>> deque{2};
    aligned_box<fork_stack<item, Policy, true, DepthBits>> forks{2};  // capacity 2: the third open fork grows it
    item items[max_items];
    int taken[max_items] = {};
    int forked = 0;
    int private_take_backs = 0;  // owner only; checked in after()
    static constexpr std::uint64_t joins = 8;  // owner() takes back eight forks

    fork_model() {
        for (int i = 0; i < max_items; ++i) items[i].id = i;
    }

    // Owner: fork the next id; answer a pending request as worker::fork does.
    item* fork() {
        RL_ASSERT(forked < max_items);
        item& it = items[forked++];
        it.payload(RL_INFO) = payload_of(it.id);
        if (forks->fork(&it)) forks->promote_oldest(*deque);
        return &it;
    }
    // Owner: join the newest fork (which must be `it`).
    void join(item* it) {
        if (forks->take_back()) {
            ++private_take_backs;
            take(it);
            return;
        }
        item* popped = deque->pop();
        RL_ASSERT(popped == nullptr || popped == it);
        if (popped != nullptr) take(popped);  // else a thief took it (counted by that thief)
    }
    void take(item* it) { take_once(taken, it); }
    // crew::fork_join's way: two jobs recorded with one fork_many (g oldest), taken back newest
    // first without counting; the last one, when every take-back was private, counts both in its
    // own add (take_back_counting), else the private ones are counted with one count_inline (they
    // are a prefix: once one was promoted, the older one was too). The count may wrap in either add.
    void fork_join_pair() {
        RL_ASSERT(forked + 2 <= max_items);
        item& g = items[forked++];
        item& h = items[forked++];
        g.payload(RL_INFO) = payload_of(g.id);
        h.payload(RL_INFO) = payload_of(h.id);
        item* const batch[2] = {&g, &h};
        if (forks->fork_many(batch, [](std::uint64_t) noexcept {})) forks->promote_oldest(*deque);
        int ran = 0;
        bool promoted = false;
        bool counted = false;
        for (item* it : {&h, &g}) {
            // The last job while every earlier one was private: take_back_counting counts them all.
            const bool last = it == &g && !promoted;
            if (last ? forks->take_back_counting(static_cast<std::uint64_t>(ran + 1)) : forks->take_back_uncounted()) {
                RL_ASSERT(!promoted);  // a private take-back after a promoted one
                ++ran;
                counted = last;
                take(it);
                continue;
            }
            promoted = true;
            item* popped = deque->pop();
            RL_ASSERT(popped == nullptr || popped == it);
            if (popped != nullptr) take(popped);
        }
        if (!counted) forks->count_inline(static_cast<std::uint64_t>(ran));
        private_take_backs += ran;
    }

    void owner() {
        item* a = fork();
        item* b = fork();
        item* c = fork();  // three open forks: the stack grows
        join(c);
        join(b);
        item* d = fork();
        join(d);
        join(a);
        item* e = fork();  // after a promoted take-back: must be private again
        item* f = fork();
        join(f);
        join(e);
        fork_join_pair();
    }
    void thief() {
        std::uint64_t seen = 0;
        for (int i = 0; i < 3; ++i) {
            const std::uint64_t read = forks->inline_runs();
            RL_ASSERT(read >= seen);   // monotonic across the wraps (a torn read falls back by 4)
            RL_ASSERT(read <= joins);  // never ahead of the take-backs (a torn read could jump by 4)
            seen = read;
            if (item* it = steal_or_request(*deque, *forks)) take(it);
        }
    }

    void thread(unsigned index) {
        if (index == 0)
            owner();
        else
            thief();
    }

    void after() {
        RL_ASSERT(forks->open() == 0);
        RL_ASSERT(forks->inline_runs() == static_cast<std::uint64_t>(private_take_backs));
        RL_ASSERT(!forks->has_private());
        RL_ASSERT(forks->request_reaches_owner());  // no request lost: the next fork would answer it
        while (item* it = deque->pop()) take(it);
        for (int i = 0; i < forked; ++i) RL_ASSERT(taken[i] == 1);  // no id lost
    }
};

// Wake requests (worker::request_wakes_cold, fork_stack's wake_bit): a sleeper announces itself
// (the parking word, here `sleepers`), asks the owner for a promotion (request_wake), re-checks the
// deque and sleeps when it finds nothing. The owner answers a request at its next fork: the
// promotion clears every request bit, pushes, and the push's wake check (parking::wake_wanted, a
// relaxed load) wakes the sleeper it sees. A thief's steal requests race both. Checked: a sleeper
// whose wake request was answered (the bit is gone) was seen by that answer's wake check (no sleep
// through a promotion made for it); a request still pending at the end waits for a later fork, and
// every job runs exactly once. The second join records its two jobs with one fork_many (the batch
// crew::fork_join uses), answering a request once after both.
template <class Policy>
struct fork_wake_model : rl::test_suite<fork_wake_model<Policy>, 3> {
    aligned_box<chase_lev_deque<item, Policy>> deque{2};
    aligned_box<fork_stack<item, Policy, true, 32>> forks{2};
    typename Policy::template atomic<int> sleepers{0};
    item items[4];
    int taken[4] = {};
    bool slept = false, woken = false;  // the sleeper writes slept, the owner woken

    fork_wake_model() {
        for (int i = 0; i < 4; ++i) items[i].id = i;
    }
    void take(item* it) { take_once(taken, it); }
    // worker::answer_request_cold: promote the oldest; the push's wake check.
    void answer() {
        if (forks->promote_oldest(*deque) && sleepers.load(std::memory_order_relaxed) != 0) woken = true;
    }
    void owner() {
        for (int i = 0; i < 4; i += 2) {  // two joins, each forking two jobs
            for (int k = i; k < i + 2; ++k) items[k].payload(RL_INFO) = payload_of(k);
            // The first join forks one job at a time (crew::join), the second both at once
            // (fork_many: crew::fork_join), answering a request once after the batch.
            if (i == 0) {
                for (int k = i; k < i + 2; ++k)
                    if (forks->fork(&items[k])) answer();
            } else {
                item* const batch[2] = {&items[i], &items[i + 1]};
                if (forks->fork_many(batch, [](std::uint64_t) noexcept {})) answer();
            }
            for (int k = i + 1; k >= i; --k) {
                if (forks->take_back()) {
                    take(&items[k]);
                } else if (item* popped = deque->pop()) {
                    take(popped);
                }
            }
        }
    }
    void sleeper() {
        sleepers.fetch_add(1, std::memory_order_relaxed);  // prepare_park's announcement
        Policy::fence(std::memory_order_seq_cst);
        forks->request_wake();
        crew::detail::steal_result<item> r = deque->steal();  // the re-check
        if (r.status == steal_status::success)
            take(r.item);
        else
            slept = true;
    }
    void thief() {
        for (int i = 0; i < 2; ++i)
            if (item* it = steal_or_request(*deque, *forks)) take(it);
    }
    void thread(unsigned index) {
        if (index == 0)
            owner();
        else if (index == 1)
            sleeper();
        else
            thief();
    }
    void after() {
        if (slept && !forks->wake_requested()) RL_ASSERT(woken);  // answered, yet never woken
        RL_ASSERT(forks->request_reaches_owner());  // a pending request sends the next fork cold
        while (item* it = deque->pop()) take(it);
        for (int i = 0; i < 4; ++i) RL_ASSERT(taken[i] == 1);
    }
};

template <bug Bug>
constexpr scenario fork_wake_scenario(const char* name) {
    return {name, &simulate<fork_wake_model<relacy_atomics<Bug>>>};
}

template <bug Bug, unsigned DepthBits = 32>
constexpr scenario fork_scenario(const char* name) {
    return {name, &simulate<fork_model<relacy_atomics<Bug>, DepthBits>>};
}

}  // namespace crew_model
