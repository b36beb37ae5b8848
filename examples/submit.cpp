// pool.submit returns a future; spawn is fire-and-forget; metrics show what the workers did.
#include <crew/crew.hpp>

#include <cstdio>
#include <stdexcept>
#include <vector>

int main() {
    crew::pool pool;
    std::vector<crew::future<long>> squares;
    for (long i = 0; i < 100; ++i) squares.push_back(pool.submit([i] { return i * i; }));
    long total = 0;
    for (auto& f : squares) total += f.get();
    std::printf("sum of squares 0..99 = %ld\n", total);

    auto failing = pool.submit([]() -> int { throw std::invalid_argument("bad input"); });
    try {
        failing.get();
    } catch (const std::invalid_argument& e) {
        std::printf("get() rethrew: %s\n", e.what());
    }

    crew::pool_metrics m = pool.metrics();
    for (std::size_t w = 0; w < m.workers.size(); ++w)
        std::printf("worker %zu: %llu tasks, %llu steals, %llu injector pops, %llu parks\n", w,
                    static_cast<unsigned long long>(m.workers[w].tasks_run),
                    static_cast<unsigned long long>(m.workers[w].steals),
                    static_cast<unsigned long long>(m.workers[w].injector_pops),
                    static_cast<unsigned long long>(m.workers[w].parks));
    return total == 328350 ? 0 : 1;
}
