// A task group over a dynamic number of children, with an exception reaching wait().
#include <crew/crew.hpp>

#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <vector>

int main() {
    std::vector<int> items(1000);
    for (int i = 0; i < 1000; ++i) items[static_cast<std::size_t>(i)] = i;

    std::atomic<long> sum{0};
    crew::task_group group;
    for (int& item : items) group.run([&sum, &item] { sum.fetch_add(item, std::memory_order_relaxed); });
    group.wait();
    std::printf("sum of 0..999 = %ld\n", sum.load());

    for (int i = 0; i < 10; ++i)
        group.run([i] {
            if (i == 7) throw std::runtime_error("child 7 failed");
        });
    try {
        group.wait();
    } catch (const std::exception& e) {
        std::printf("wait() rethrew: %s\n", e.what());
    }
    return sum.load() == 999L * 1000 / 2 ? 0 : 1;
}
