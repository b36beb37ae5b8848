// Odd callables for every entry point that takes one: reference results, rvalue-only and
// move-only callables, closures whose destructor throws, how often a callable is copied.
#include <crew/crew.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "support/pool_sizes.hpp"
#include "support/throwing_capture.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

class callables_suite : public crew_test::pool_test {};

// Callable only as an rvalue, like a std::move_only_function consumed by its call.
struct once_int {
    int value;
    int operator()() && { return value; }
};
struct once_void {
    std::atomic<int>* hits;
    void operator()() && { hits->fetch_add(1); }
};

using crew_test::throws_on_destruction;

// Counts copies of itself.
struct copy_counter {
    std::atomic<int>* copies;
    explicit copy_counter(std::atomic<int>* c) : copies(c) {}
    copy_counter(const copy_counter& o) : copies(o.copies) { copies->fetch_add(1); }
    copy_counter(copy_counter&& o) noexcept : copies(o.copies) {}
    void operator()() const {}
};

TEST_P(callables_suite, join_returns_references) {
    crew_test::watchdog dog(60s);
    int x = 1;
    std::string y = "y";
    pool().run([&] {
        auto [a, b] = crew::join([&]() -> int& { return x; }, [&]() -> std::string& { return y; });
        EXPECT_EQ(&a, &x);
        EXPECT_EQ(&b, &y);
        auto [c, d] = crew::join([&]() -> const int& { return x; }, [] {});
        EXPECT_EQ(&c, &x);
        (void)d;
    });
}

TEST(callables, join_outside_every_pool_returns_references) {
    int x = 1, y = 2;
    auto [a, b] = crew::join([&]() -> int& { return x; }, [&]() -> int& { return y; });
    EXPECT_EQ(&a, &x);
    EXPECT_EQ(&b, &y);
}

TEST_P(callables_suite, rvalue_only_callables) {
    crew_test::watchdog dog(60s);
    std::atomic<int> hits{0};
    EXPECT_EQ(pool().submit(once_int{5}).get(), 5);
    EXPECT_EQ(pool().run(once_int{6}), 6);
    pool().spawn(once_void{&hits});
    crew::future<void> f = pool().submit(once_void{&hits});
    f.get();
    pool().run([&] {
        auto [a, b] = crew::join(once_int{1}, once_int{2});
        EXPECT_EQ(a + b, 3);
        crew::spawn(once_void{&hits});
    });
    while (hits.load() < 3) std::this_thread::yield();
    EXPECT_EQ(hits.load(), 3);
}

TEST_P(callables_suite, move_only_callables) {
    crew_test::watchdog dog(60s);
    auto p = std::make_unique<int>(4);
    EXPECT_EQ(pool().submit([q = std::move(p)] { return *q; }).get(), 4);
    EXPECT_EQ(pool().run([q = std::make_unique<int>(5)] { return *q; }), 5);
    std::atomic<int> seen{0};
    crew::task_group g(pool());
    g.run([q = std::make_unique<int>(6), &seen] { seen += *q; });
    g.wait();
    EXPECT_EQ(seen.load(), 6);
}

// A result that is itself move-only travels through submit and join.
TEST_P(callables_suite, move_only_results) {
    crew_test::watchdog dog(60s);
    auto f = pool().submit([] { return std::make_unique<int>(8); });
    EXPECT_EQ(*f.get(), 8);
    pool().run([] {
        auto [a, b] = crew::join([] { return std::make_unique<int>(1); }, [] { return std::make_unique<int>(2); });
        EXPECT_EQ(*a + *b, 3);
    });
}

TEST_P(callables_suite, submitted_closure_whose_destructor_throws) {
    crew_test::watchdog dog(60s);
    auto f = pool().submit([t = throws_on_destruction{}] { return 1; });
    try {
        f.get();
        ADD_FAILURE() << "the destructor's exception should reach get()";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "destructor");
    }
    // The callable's own exception wins over its destructor's.
    auto g = pool().submit([t = throws_on_destruction{}]() -> int { throw std::logic_error("call"); });
    EXPECT_THROW(g.get(), std::logic_error);
}

TEST(callables, spawned_closure_whose_destructor_throws) {
    crew_test::watchdog dog(60s);
    std::atomic<int> reported{0};
    std::string what;
    crew::pool_options options;
    options.threads = 2;
    options.on_unhandled_exception = [&](std::exception_ptr e) {
        try {
            std::rethrow_exception(e);
        } catch (const std::runtime_error& r) {
            what = r.what();
        }
        reported.fetch_add(1);
    };
    {
        crew::pool p(options);
        p.spawn([t = throws_on_destruction{}] {});
        while (reported.load() < 1) std::this_thread::yield();
    }
    EXPECT_EQ(reported.load(), 1);
    EXPECT_EQ(what, "destructor");
}

// An lvalue callable is copied once into the task (as std::thread and std::async do); an rvalue
// is only moved.
TEST_P(callables_suite, lvalues_are_copied_once_rvalues_never) {
    crew_test::watchdog dog(60s);
    std::atomic<int> copies{0};
    copy_counter c(&copies);
    pool().submit(c).get();
    EXPECT_EQ(copies.load(), 1);
    pool().submit(copy_counter(&copies)).get();
    EXPECT_EQ(copies.load(), 1);
    crew::task_group g(pool());
    g.run(c);
    g.wait();
    EXPECT_EQ(copies.load(), 2);
    g.run(copy_counter(&copies));
    g.wait();
    EXPECT_EQ(copies.load(), 2);
    pool().run(c);  // run() borrows: no copy at all
    EXPECT_EQ(copies.load(), 2);
}

CREW_ALL_POOL_SIZES(callables_suite);

}  // namespace
