// The suspension / wake / cancel protocol of crew/async/detail/waiter.hpp, through its reference
// awaitable (detail::oneshot_event): one resumption per suspension from any thread, cancellation
// of a suspended task, wake racing cancel, and pool shutdown with suspended tasks.
#include <crew/crew.hpp>
#include <crew/async/detail/oneshot_event.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;
using crew::detail::oneshot_event;

namespace {

class waiter_test : public crew_test::pool_test {};

crew::task<int> answer() { co_return 42; }

crew::task<int> wait_then(oneshot_event& e, std::atomic<int>& resumed, int value) {
    co_await e.wait();
    resumed.fetch_add(1);
    co_return value;
}

// Spin until `n` tasks are suspended in `e`: a crude but reliable probe through is_set/timing is
// not available, so the tests count "about to wait" and then give them time to suspend.
void settle() { std::this_thread::sleep_for(5ms); }

TEST_P(waiter_test, block_on_gives_the_value) {
    crew_test::watchdog dog(60s);
    EXPECT_EQ(pool().block_on(answer()), 42);
}

TEST_P(waiter_test, every_waiter_resumes_exactly_once) {
    crew_test::watchdog dog(60s);
    const int rounds = static_cast<int>(crew_test::scaled(200));
    for (int r = 0; r < rounds; ++r) {
        oneshot_event e;
        std::atomic<int> resumed{0};
        std::vector<crew::join_handle<int>> hs;
        for (int i = 0; i < 16; ++i) hs.push_back(pool().spawn(wait_then(e, resumed, i)));
        if (r % 2 == 0) settle();
        std::thread setter([&] { e.set(); });
        for (int i = 0; i < 16; ++i) EXPECT_EQ(hs[i].get(), i);
        setter.join();
        EXPECT_EQ(resumed.load(), 16);
    }
}

TEST_P(waiter_test, cancel_wakes_a_suspended_task_with_cancelled_error) {
    crew_test::watchdog dog(60s);
    oneshot_event e;
    std::atomic<int> resumed{0};
    auto h = pool().spawn(wait_then(e, resumed, 1));
    settle();
    EXPECT_FALSE(h.done());
    h.cancel();
    EXPECT_THROW(h.get(), crew::cancelled_error);
    EXPECT_EQ(resumed.load(), 0);
    e.set();  // no waiter left: nothing happens
}

crew::task<int> catch_cancel(oneshot_event& e, oneshot_event& second) {
    bool cancelled = false;
    try {
        co_await e.wait();
    } catch (const crew::cancelled_error&) {
        cancelled = true;
    }
    if (!cancelled) co_return 0;
    // Cancellation is sticky: a later cancellable wait throws at once, an uncancellable one waits.
    bool again = false;
    try {
        co_await e.wait();
    } catch (const crew::cancelled_error&) {
        again = true;
    }
    if (!again) co_return -1;
    co_await second.wait(crew::detail::cancellable::no);
    co_return 7;
}

TEST_P(waiter_test, a_task_may_catch_cancellation_and_return) {
    crew_test::watchdog dog(60s);
    oneshot_event e, second;
    auto h = pool().spawn(catch_cancel(e, second));
    settle();
    h.cancel();
    settle();
    EXPECT_FALSE(h.done());
    second.set();
    EXPECT_EQ(h.get(), 7);
}

TEST_P(waiter_test, cancel_before_the_first_suspension_throws_there) {
    crew_test::watchdog dog(60s);
    oneshot_event gate, e;
    std::atomic<int> resumed{0};
    auto body = [](oneshot_event& gate, oneshot_event& e, std::atomic<int>& resumed) -> crew::task<int> {
        co_await gate.wait(crew::detail::cancellable::no);
        co_await e.wait();
        resumed.fetch_add(1);
        co_return 1;
    };
    auto h = pool().spawn(body(gate, e, resumed));
    h.cancel();
    gate.set();
    EXPECT_THROW(h.get(), crew::cancelled_error);
    EXPECT_EQ(resumed.load(), 0);
}

// A wake and a cancel race for one suspension: the task resumes exactly once, with one of the
// two outcomes, and never at a later suspension.
crew::task<int> counted(oneshot_event& e, oneshot_event& later, std::atomic<int>& resumes) {
    int outcome = 1;
    try {
        co_await e.wait();
    } catch (const crew::cancelled_error&) {
        outcome = 2;
    }
    resumes.fetch_add(1);
    // A second, uncancellable suspension that nobody signals until the end: a stale wake of the
    // first suspension must not resume it.
    co_await later.wait(crew::detail::cancellable::no);
    co_return outcome;
}

TEST_P(waiter_test, wake_racing_cancel_resumes_once) {
    crew_test::watchdog dog(120s);
    const int rounds = static_cast<int>(crew_test::scaled(2000));
    int signaled = 0, cancelled = 0;
    for (int r = 0; r < rounds; ++r) {
        oneshot_event e, later;
        std::atomic<int> resumes{0};
        auto h = pool().spawn(counted(e, later, resumes));
        if (r % 4 == 0) std::this_thread::yield();
        std::thread waker([&] { e.set(); });
        h.cancel();
        waker.join();
        while (resumes.load() == 0) std::this_thread::yield();
        std::this_thread::yield();
        EXPECT_EQ(resumes.load(), 1);
        EXPECT_FALSE(h.done());
        later.set();
        const int outcome = h.get();
        (outcome == 1 ? signaled : cancelled)++;
        EXPECT_EQ(resumes.load(), 1);
    }
    EXPECT_EQ(signaled + cancelled, rounds);
}

TEST_P(waiter_test, releasing_many_waiters_does_not_recurse) {
    crew_test::watchdog dog(120s);
    const int n = static_cast<int>(crew_test::scaled(100000));
    oneshot_event e;
    std::atomic<int> resumed{0};
    std::vector<crew::join_handle<int>> hs;
    hs.reserve(n);
    for (int i = 0; i < n; ++i) hs.push_back(pool().spawn(wait_then(e, resumed, 0)));
    e.set();
    for (auto& h : hs) EXPECT_EQ(h.get(), 0);
    EXPECT_EQ(resumed.load(), n);
}

TEST_P(waiter_test, shutdown_frees_suspended_tasks) {
    crew_test::watchdog dog(60s);
    auto e = std::make_unique<oneshot_event>();
    std::atomic<int> resumed{0};
    crew::join_handle<int> kept;
    {
        crew::pool p(workers());
        for (int i = 0; i < 50; ++i) p.spawn(wait_then(*e, resumed, i)).detach();
        kept = p.spawn(wait_then(*e, resumed, 99));
        settle();
    }  // the pool's drain destroys the suspended frames (their awaiters unlink from the event)
    EXPECT_TRUE(kept.done());
    EXPECT_THROW(kept.get(), crew::cancelled_error);
    e->set();  // nobody left to wake
    EXPECT_EQ(resumed.load(), 0);
}

TEST_P(waiter_test, a_late_wake_after_shutdown_touches_no_freed_memory) {
    crew_test::watchdog dog(60s);
    oneshot_event e;
    std::atomic<int> resumed{0};
    std::atomic<bool> stop{false};
    std::thread late([&] {
        while (!stop.load()) std::this_thread::yield();
        e.set();
    });
    {
        crew::pool p(workers());
        for (int i = 0; i < 20; ++i) p.spawn(wait_then(e, resumed, i)).detach();
        settle();
        stop.store(true);  // the wake races the pool's destructor
    }
    late.join();
    EXPECT_LE(resumed.load(), 20);
}

CREW_ALL_POOL_SIZES(waiter_test);

}  // namespace
