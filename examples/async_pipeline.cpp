// A pipeline of coroutine tasks over crew::channel: one producer, N workers, one collector.
//
//   producer --jobs--> worker x N --results--> collector
//
// The producer closes `jobs` when it is done; each worker drains it and then leaves; the last
// worker to leave closes `results`, which ends the collector. Bounded channels give
// back-pressure: a fast producer suspends (without blocking a thread) while the workers catch up.
#include <crew/async.hpp>
#include <crew/async/channel.hpp>
#include <crew/crew.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

struct job {
    std::uint64_t id;
    std::uint64_t input;
};

struct result {
    std::uint64_t id;
    std::uint64_t output;
};

// Some CPU work per item: the number of Collatz steps of `n`.
std::uint64_t collatz_steps(std::uint64_t n) {
    std::uint64_t steps = 0;
    while (n > 1) {
        n = n % 2 == 0 ? n / 2 : 3 * n + 1;
        ++steps;
    }
    return steps;
}

crew::task<void> producer(crew::channel<job>& jobs, std::uint64_t count) {
    for (std::uint64_t i = 0; i < count; ++i)
        if (!co_await jobs.send(job{i, i + 1})) break;  // false: closed by someone else
    jobs.close();
}

crew::task<void> worker(crew::channel<job>& jobs, crew::channel<result>& results, std::atomic<int>& active) {
    while (std::optional<job> j = co_await jobs.receive()) (void)co_await results.send(result{j->id, collatz_steps(j->input)});
    if (active.fetch_sub(1) == 1) results.close();  // the last worker out closes the results
}

crew::task<std::uint64_t> collector(crew::channel<result>& results, std::vector<std::uint64_t>& by_id) {
    std::uint64_t total = 0;
    while (std::optional<result> r = co_await results.receive()) {
        by_id[r->id] = r->output;
        total += r->output;
    }
    co_return total;
}

crew::task<std::uint64_t> pipeline(std::uint64_t count, int workers, std::vector<std::uint64_t>& by_id) {
    crew::channel<job> jobs{64};
    crew::channel<result> results{64};
    std::atomic<int> active{workers};
    auto collect = crew::spawn(collector(results, by_id));
    std::vector<crew::join_handle<void>> ws;
    for (int w = 0; w < workers; ++w) ws.push_back(crew::spawn(worker(jobs, results, active)));
    co_await producer(jobs, count);
    for (auto& w : ws) co_await w;
    co_return co_await collect;
}

}  // namespace

int main() {
    constexpr std::uint64_t count = 100'000;
    crew::pool pool;
    std::vector<std::uint64_t> by_id(count);
    const std::uint64_t total = pool.block_on(pipeline(count, 4, by_id));

    std::uint64_t expected = 0;
    bool ok = true;
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint64_t s = collatz_steps(i + 1);
        expected += s;
        ok = ok && by_id[i] == s;
    }
    std::printf("async_pipeline: %llu items, %llu Collatz steps in total (%s)\n", static_cast<unsigned long long>(count),
                static_cast<unsigned long long>(total), ok && total == expected ? "ok" : "MISMATCH");
    return ok && total == expected ? 0 : 1;
}
