// tests/reliability/model_check.cpp -- Relacy model checks of crew's lock-free code, and the
// "teeth" that prove the checker can fail.
//
//   crew_model check <scenario|all> [schedules]   exit 0 iff every execution is correct
//   crew_model teeth <bug> [schedules]            exit 0 iff the checker finds the injected bug
//   crew_model list                               scenario and bug names
//
// What is checked. Every scenario instantiates the production header (crew/detail/chase_lev.hpp,
// parking.hpp, injector.hpp) with relacy_atomics<Bug>; Relacy explores random schedules over its
// C++11 memory model (stale loads allowed wherever the orderings allow them), and reports data
// races on rl::var, failed RL_ASSERTs, deadlocks (every thread blocked) and livelocks.
//
//   deque scenarios (one owner, two thieves, capacity 2 or 4): each item carries an rl::var payload
//   written before push and read by whoever takes it (so publication is race-checked); each id must
//   be taken exactly once, counting what the owner drains after all threads finished.
//   parking scenario: the worker-loop model (see parking_model) must never end with a queued task
//   and every worker asleep; Relacy reports that state as a deadlock.
#include "reliability/relacy_policy.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace crew_model {
namespace {

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

// ---------------------------------------------------------------------------------------------
// Sleep/wake model: thread 0 submits two tasks through an injector (push, then notify_one, as
// registry::inject does); threads 1 and 2 run a small copy of worker::run_loop / idle_cold /
// park_cold (find work, search under the half rule, announce, re-check, park). The task that
// completes the last id sets `stop` and wakes everyone (shutdown). A lost wakeup leaves a worker
// asleep with a task queued and nothing left to wake it: Relacy reports the deadlock.

struct job {
    job* next = nullptr;
    int id = 0;
};

template <class Policy>
struct parking_model : rl::test_suite<parking_model<Policy>, 3> {
    static constexpr int jobs = 2;
    aligned_box<crew::detail::basic_injector<job, Policy>> injector;
    aligned_box<crew::detail::basic_parking<Policy>> lot{2u};
    model_atomic<int> done{0};
    model_atomic<bool> stop{false};
    job items[jobs];
    int runs[jobs] = {};

    parking_model() {
        for (int i = 0; i < jobs; ++i) items[i].id = i;
    }

    void run(job* j) {
        RL_ASSERT(runs[j->id] == 0);
        ++runs[j->id];
        if (done.fetch_add(1, std::memory_order::acq_rel) + 1 == jobs) {
            stop.store(true, std::memory_order::release);
            lot->notify_all();
        }
    }

    bool work_visible() { return !injector->empty_hint(); }

    void worker() {
        bool searching = false;
        for (;;) {
            if (job* j = injector->pop()) {
                if (searching) {
                    searching = false;
                    if (lot->end_search()) lot->notify_one();
                }
                run(j);
                continue;
            }
            if (stop.load(std::memory_order::acquire)) break;
            if (!searching) searching = lot->try_begin_search();
            if (searching) {  // the spin phase found nothing: stop searching, go to sleep
                searching = false;
                lot->end_search();
            }
            std::uint32_t key = lot->prepare_park();
            if constexpr (Policy::injected_bug != bug::park_without_recheck) {
                if (stop.load(std::memory_order::acquire) || work_visible()) {
                    searching = lot->cancel_park();
                    continue;
                }
            }
            searching = lot->park(key);
        }
        if (searching) lot->end_search();
    }

    void thread(unsigned index) {
        if (index == 0) {
            for (int i = 0; i < jobs; ++i) {
                RL_ASSERT(injector->push(&items[i]));
                lot->notify_one();
            }
        } else {
            worker();
        }
    }

    void after() {
        for (int i = 0; i < jobs; ++i) RL_ASSERT(runs[i] == 1);
        RL_ASSERT(lot->searching() == 0);
        RL_ASSERT(lot->sleepers() == 0);
    }
};

// ---------------------------------------------------------------------------------------------
// Driver

struct outcome {
    bool passed;
    unsigned long long schedules;
};

// Relacy writes its report (the whole history of a failing execution) while its allocator hooks
// are live, so the stream must not allocate: this one forwards the first `max_lines` lines to
// stdout (indented) and drops the rest.
class head_buf : public std::streambuf {
public:
    explicit head_buf(int max_lines) : left_(max_lines) {}

protected:
    int_type overflow(int_type ch) override {
        if (ch == traits_type::eof() || left_ <= 0) return traits_type::not_eof(ch);
        if (at_line_start_) std::fputs("    | ", stdout);
        std::fputc(ch, stdout);
        at_line_start_ = ch == '\n';
        if (at_line_start_) --left_;
        return ch;
    }

private:
    int left_;
    bool at_line_start_ = true;
};

int report_lines = 400;

template <class Test>
outcome simulate(unsigned long long schedules) {
    head_buf buf(report_lines);
    std::ostream out(&buf);
    rl::test_params params;
    params.iteration_count = schedules;
    params.search_type = rl::random_scheduler_type;
    params.output_stream = &out;
    params.progress_stream = &out;
    bool ok = rl::simulate<Test>(params);
    std::fflush(stdout);
    return {ok, static_cast<unsigned long long>(params.stop_iteration)};
}

struct scenario {
    const char* name;
    outcome (*run)(unsigned long long);
};

template <bug Bug>
std::vector<scenario> scenarios() {
    using P = relacy_atomics<Bug>;
    return {
        {"deque_mix_cap2", &simulate<deque_model<P, mix<2>>>},
        {"deque_mix_cap4", &simulate<deque_model<P, mix<4>>>},
        {"deque_growth_cap2", &simulate<deque_model<P, growth<2>>>},
        {"deque_growth_cap4", &simulate<deque_model<P, growth<4>>>},
        {"deque_last_item_cap2", &simulate<deque_model<P, last_item<2>>>},
        {"deque_last_item_cap4", &simulate<deque_model<P, last_item<4>>>},
        {"parking_sleep_wake", &simulate<parking_model<P>>},
    };
}

struct bug_entry {
    const char* name;
    std::vector<scenario> (*list)();
};

const bug_entry bugs[] = {
    {"no_pop_fence", &scenarios<bug::no_pop_fence>},
    {"no_steal_fence", &scenarios<bug::no_steal_fence>},
    {"take_before_cas", &scenarios<bug::take_before_cas>},
    {"last_without_cas", &scenarios<bug::last_without_cas>},
    {"relaxed_grow_publish", &scenarios<bug::relaxed_grow_publish>},
    {"no_park_fence", &scenarios<bug::no_park_fence>},
    {"park_without_recheck", &scenarios<bug::park_without_recheck>},
};

int check(const std::string& which, unsigned long long schedules) {
    int failures = 0, ran = 0;
    for (const scenario& s : scenarios<bug::none>()) {
        if (which != "all" && which != s.name) continue;
        ++ran;
        outcome o = s.run(schedules);
        std::printf("%-24s %s after %llu schedules\n", s.name, o.passed ? "ok" : "FAILED", o.schedules);
        if (!o.passed) ++failures;
        std::fflush(stdout);
    }
    if (ran == 0) {
        std::fprintf(stderr, "crew_model: no scenario named '%s' (try: crew_model list)\n", which.c_str());
        return 2;
    }
    return failures == 0 ? 0 : 1;
}

int teeth(const std::string& which, unsigned long long schedules) {
    report_lines = 12;  // the head of the report says what Relacy found; the history is not needed
    for (const bug_entry& b : bugs) {
        if (which != b.name) continue;
        for (const scenario& s : b.list()) {
            outcome o = s.run(schedules);
            if (!o.passed) {
                std::printf("bug %s: caught by %s at schedule %llu (as required)\n", b.name, s.name, o.schedules);
                return 0;
            }
            std::printf("bug %s: %s passed %llu schedules\n", b.name, s.name, o.schedules);
            std::fflush(stdout);
        }
        std::printf("bug %s: NOT caught by any scenario: the model checker has no teeth here\n", b.name);
        return 1;
    }
    std::fprintf(stderr, "crew_model: no bug named '%s' (try: crew_model list)\n", which.c_str());
    return 2;
}

}  // namespace
}  // namespace crew_model

int main(int argc, char** argv) {
    using namespace crew_model;
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "list") {
        for (const scenario& s : scenarios<bug::none>()) std::printf("scenario %s\n", s.name);
        for (const bug_entry& b : bugs) std::printf("bug %s\n", b.name);
        return 0;
    }
    if ((mode != "check" && mode != "teeth") || argc < 3) {
        std::fprintf(stderr, "usage: crew_model check <scenario|all> [schedules]\n"
                             "       crew_model teeth <bug> [schedules]\n"
                             "       crew_model list\n");
        return 2;
    }
    unsigned long long schedules = mode == "check" ? 1000000ull : 100000ull;
    if (argc > 3) schedules = std::strtoull(argv[3], nullptr, 10);
    if (schedules == 0) {
        std::fprintf(stderr, "crew_model: schedules must be a positive number\n");
        return 2;
    }
    return mode == "check" ? check(argv[2], schedules) : teeth(argv[2], schedules);
}
