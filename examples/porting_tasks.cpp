// Porting task code from oneTBB, the C++ standard library and Rayon to crew: one running example
// per row of docs/PORTING.md. Returns 0 when every example produced what it says.
#include <crew/crew.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <variant>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
    std::printf("%-52s %s\n", what, ok ? "ok" : "FAILED");
    if (!ok) ++failures;
}

long fib(long n) {
    if (n < 2) return n;
    auto [a, b] = crew::join([n] { return fib(n - 1); }, [n] { return fib(n - 2); });
    return a + b;
}

}  // namespace

int main() {
    using namespace std::chrono_literals;
    crew::pool pool(4);

    // oneTBB: tbb::task_group g; g.run_and_wait(f);
    {
        crew::task_group g(pool);
        std::atomic<int> n{0};
        auto status = g.run_and_wait([&] {
            for (int i = 0; i < 10; ++i) g.run([&] { n.fetch_add(1); });
        });
        check(status == crew::task_group_status::complete && n == 10, "tbb::task_group::run_and_wait");
    }

    // oneTBB: g.cancel(); g.is_canceling(); tbb::is_current_task_group_canceling();
    // wait() == tbb::task_group_status::canceled.
    {
        crew::task_group g(pool);
        std::atomic<bool> running{false}, saw{false};
        g.run([&] {
            running = true;
            while (!crew::is_canceling()) std::this_thread::yield();  // is_current_task_group_canceling()
            saw = true;
        });
        while (!running) std::this_thread::yield();
        g.cancel();
        const bool member = g.is_canceling();
        check(g.wait() == crew::task_group_status::canceled && saw && member && !g.is_canceling(),
              "tbb::task_group::cancel / is_canceling");
    }

    // oneTBB: a task_group_context bound to its parent: in crew a group made inside a child of
    // another group is nested in it automatically; canceling the outer one cancels it.
    {
        crew::task_group outer(pool);
        std::atomic<bool> started{false};
        std::atomic<int> inner_status{-1};
        outer.run([&] {
            crew::task_group inner;
            inner.run([&] {
                started = true;
                while (!crew::is_canceling()) std::this_thread::yield();
            });
            inner_status = static_cast<int>(inner.wait());
        });
        while (!started) std::this_thread::yield();
        outer.cancel();
        outer.wait();
        check(inner_status == static_cast<int>(crew::task_group_status::canceled),
              "tbb::task_group_context (bound) -> nesting");
    }

    // std::async(std::launch::async, f, args...) -> pool.submit(f, args...)
    {
        int doubled = 0;
        auto f = pool.submit(
            [](std::unique_ptr<int> p, int& out) {  // move-only argument; a reference via std::ref
                out = *p * 2;
                return *p;
            },
            std::make_unique<int>(21), std::ref(doubled));
        struct box {
            int n;
            int twice() const { return 2 * n; }
        };
        const box b{2};
        auto g = crew::default_pool().submit(&box::twice, b);  // member function + a copy of the object
        const int got = f.get();
        check(got == 21 && doubled == 42 && g.get() == 4, "std::async(f, args...) -> pool.submit(f, args...)");
    }

    // std::future::wait_for / wait_until
    {
        std::atomic<bool> go{false};
        auto f = pool.submit([&] {
            while (!go) std::this_thread::yield();
            return 1;
        });
        const bool timed_out = f.wait_for(5ms) == std::future_status::timeout;
        go = true;
        const bool ready = f.wait_until(std::chrono::steady_clock::now() + 10s) == std::future_status::ready;
        check(timed_out && ready && f.get() == 1, "std::future::wait_for / wait_until");
    }

    // std::experimental::when_all(f1, f2) -> crew::when_all (a future of a tuple, not of futures)
    {
        auto all = crew::when_all(pool.submit([] { return 1; }), pool.submit([] {}),
                                  pool.submit([] { return std::string("x"); }));
        auto [a, nothing, c] = all.get();
        (void)nothing;
        std::vector<crew::future<int>> v;
        for (int i = 0; i < 4; ++i) v.push_back(pool.submit([i] { return i; }));
        std::vector<int> got = crew::when_all(std::move(v)).get();
        check(a == 1 && c == "x" && got.size() == 4 && got[3] == 3, "std::experimental::when_all -> crew::when_all");
    }

    // Rayon: rayon::scope(|s| { s.spawn(..); s.spawn(..); }) -> task_group run + wait
    {
        std::vector<int> parts(8, 0);
        pool.run([&] {
            crew::task_group s;  // the scope
            for (std::size_t i = 0; i < parts.size(); ++i) s.run([&parts, i] { parts[i] = static_cast<int>(i); });
            s.wait();  // the end of the scope: every spawn finished, borrows end here
        });
        int sum = 0;
        for (int x : parts) sum += x;
        check(sum == 28, "rayon::scope -> crew::task_group");
    }

    // Rayon: rayon::join(a, b) -> crew::join(a, b)
    check(pool.run([] { return fib(20); }) == 6765, "rayon::join -> crew::join");

    // Rayon: rayon::spawn(f) (fire and forget, 'static) -> crew::spawn / pool.spawn
    {
        auto done = std::make_shared<std::atomic<bool>>(false);
        pool.spawn([done] { done->store(true); });
        const auto end = std::chrono::steady_clock::now() + 10s;
        while (!done->load() && std::chrono::steady_clock::now() < end) std::this_thread::yield();
        check(done->load(), "rayon::spawn -> crew::spawn / pool.spawn");
    }

    return failures == 0 ? 0 : 1;
}
