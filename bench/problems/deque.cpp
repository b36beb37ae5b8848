// deque: the raw cost of the work-stealing deque's operations, single-threaded (no contention):
// an owner push immediately followed by an owner pop, and a steal of an item pushed earlier.
// crew's lock-free Chase-Lev deque against the mutex-protected std::deque of the seed-003 baseline.
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <crew/detail/chase_lev.hpp>

#include "peers.hpp"

namespace crew_bench {

namespace {

struct mutex_deque {
    std::mutex m;
    std::deque<int*> d;
    void push(int* p) {
        std::lock_guard<std::mutex> lk(m);
        d.push_back(p);
    }
    int* pop() {
        std::lock_guard<std::mutex> lk(m);
        if (d.empty()) return nullptr;
        int* p = d.back();
        d.pop_back();
        return p;
    }
    int* steal() {
        std::lock_guard<std::mutex> lk(m);
        if (d.empty()) return nullptr;
        int* p = d.front();
        d.pop_front();
        return p;
    }
};

int* steal_one(crew::detail::chase_lev_deque<int>& d) { return d.steal().item; }
int* steal_one(mutex_deque& d) { return d.steal(); }

template <class Deque>
sample measure(std::size_t n) {
    Deque d;
    std::vector<int> items(1024);
    std::size_t got = 0;
    auto t0 = clock::now();
    for (std::size_t i = 0; i < n; ++i) {
        d.push(&items[i & 1023]);
        got += d.pop() != nullptr;
    }
    double pair_s = seconds_since(t0);
    for (std::size_t i = 0; i < n; ++i) d.push(&items[i & 1023]);
    auto t1 = clock::now();
    for (std::size_t i = 0; i < n; ++i) got += steal_one(d) != nullptr;
    double steal_s = seconds_since(t1);
    if (got != 2 * n) throw std::runtime_error("deque lost items: " + std::to_string(got) + " of " + std::to_string(2 * n));
    sample s;
    s.seconds = pair_s + steal_s;
    s.extras.emplace_back("push_pop_ns", pair_s / static_cast<double>(n) * 1e9);
    s.extras.emplace_back("steal_ns", steal_s / static_cast<double>(n) * 1e9);
    return s;
}

}  // namespace

problem make_deque(const config& cfg, std::vector<std::string>&) {
    std::size_t n = cfg.quick ? 2000000 : 10000000;
    problem p;
    p.name = "deque";
    p.title = "deque ops";
    p.size_note = cfg.quick ? "quick mode: 2M operations (full: 10M)" : "";
    p.what = "uncontended push+pop pair and steal, in ns (time = all operations of one run)";
    p.impls.push_back({"crew-chase-lev", [n](std::size_t) -> run_fn {
                           return [n] { return measure<crew::detail::chase_lev_deque<int>>(n); };
                       }, false, true});
    p.impls.push_back({"mutex-deque", [n](std::size_t) -> run_fn { return [n] { return measure<mutex_deque>(n); }; },
                       false, true});
    return p;
}

}  // namespace crew_bench
