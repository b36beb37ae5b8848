// crew::make_oneshot: send/receive, a sender dropped unsent, a receiver gone, move-only values,
// every value destroyed exactly once, sends from outside threads racing the await, cancellation
// racing the send, the budget, and a pool shut down under a waiting receiver. Pools of 1, 2, 4, 8.
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "async/primitives_common.hpp"

namespace {

using namespace std::chrono_literals;
using prim_test::wait_until;

// A value that counts its live instances (moved-from ones included: each is destroyed once).
struct counted {
    static inline std::atomic<long> live{0};
    int v = 0;
    explicit counted(int x) noexcept : v(x) { live.fetch_add(1, std::memory_order_relaxed); }
    counted(counted&& o) noexcept : v(o.v) { live.fetch_add(1, std::memory_order_relaxed); }
    counted& operator=(counted&&) = delete;
    ~counted() { live.fetch_sub(1, std::memory_order_relaxed); }
};

TEST(oneshot_basics, send_then_try_receive_then_empty) {
    auto [tx, rx] = crew::make_oneshot<int>();
    EXPECT_TRUE(tx);
    EXPECT_FALSE(tx.is_closed());
    EXPECT_FALSE(rx.is_ready());
    EXPECT_EQ(rx.try_receive(), std::nullopt);  // not sent yet
    EXPECT_TRUE(tx.send(7));
    EXPECT_FALSE(tx);
    EXPECT_TRUE(rx.is_ready());
    EXPECT_EQ(rx.try_receive(), 7);
    EXPECT_EQ(rx.try_receive(), std::nullopt);  // taken
}

TEST(oneshot_basics, a_second_send_and_an_empty_sender_throw_usage_error) {
    auto [tx, rx] = crew::make_oneshot<int>();
    EXPECT_TRUE(tx.send(1));
    EXPECT_THROW(tx.send(2), crew::usage_error);
    crew::oneshot_sender<int> empty;
    EXPECT_THROW(empty.send(3), crew::usage_error);
    EXPECT_TRUE(empty.is_closed());
    EXPECT_EQ(rx.try_receive(), 1);
}

TEST(oneshot_basics, a_sender_dropped_unsent_closes_it) {
    auto [tx, rx] = crew::make_oneshot<int>();
    { auto gone = std::move(tx); }
    EXPECT_TRUE(rx.is_ready());
    EXPECT_EQ(rx.try_receive(), std::nullopt);
}

TEST(oneshot_basics, a_send_to_a_receiver_that_is_gone_returns_false_and_destroys_the_value) {
    {
        auto [tx, rx] = crew::make_oneshot<counted>();
        { auto gone = std::move(rx); }
        EXPECT_TRUE(tx.is_closed());
        EXPECT_FALSE(tx.send(counted(1)));
    }
    EXPECT_EQ(counted::live.load(), 0);
    {
        auto [tx, rx] = crew::make_oneshot<counted>();
        EXPECT_TRUE(tx.send(counted(2)));  // sent, never taken: destroyed with the block
    }
    EXPECT_EQ(counted::live.load(), 0);
}

TEST(oneshot_basics, move_only_values_and_moved_handles) {
    auto [tx, rx] = crew::make_oneshot<std::unique_ptr<int>>();
    crew::oneshot_sender<std::unique_ptr<int>> tx2 = std::move(tx);
    crew::oneshot_receiver<std::unique_ptr<int>> rx2;
    rx2 = std::move(rx);
    EXPECT_FALSE(tx);
    EXPECT_FALSE(rx);
    EXPECT_TRUE(tx2.send(std::make_unique<int>(5)));
    std::optional<std::unique_ptr<int>> v = rx2.try_receive();
    ASSERT_TRUE(v && *v);
    EXPECT_EQ(**v, 5);
}

// An over-aligned value: the block comes from the aligned heap, not the frame cache (UBSan checks
// the construction's alignment, ASan the matching aligned delete).
struct alignas(64) wide {
    int v = 0;
    unsigned char pad[60] = {};
};

TEST(oneshot_basics, over_aligned_values) {
    for (int i = 0; i < 100; ++i) {
        auto [tx, rx] = crew::make_oneshot<wide>();
        wide w;
        w.v = i;
        EXPECT_TRUE(tx.send(w));
        std::optional<wide> got = rx.try_receive();
        ASSERT_TRUE(got);
        EXPECT_EQ(got->v, i);
    }
    auto [tx, rx] = crew::make_oneshot<wide>();
    EXPECT_TRUE(tx.send(wide{}));  // never taken: freed with the block (ASan: no leak, no mismatch)
}

class oneshot_suite : public crew_test::pool_test {};

crew::task<void> send_later(crew::oneshot_sender<int> tx, int v) {
    co_await crew::yield_now();
    tx.send(v);
}

crew::task<int> receive_from_task(int v) {
    auto [tx, rx] = crew::make_oneshot<int>();
    auto h = crew::spawn(send_later(std::move(tx), v));
    std::optional<int> got = co_await std::move(rx);
    co_await std::move(h);
    co_return got.value_or(-1);
}

TEST_P(oneshot_suite, a_task_receives_what_another_task_sends) {
    crew_test::watchdog dog(60s);
    EXPECT_EQ(pool().block_on(receive_from_task(42)), 42);
}

crew::task<std::optional<int>> await_it(crew::oneshot_receiver<int> rx) { co_return co_await std::move(rx); }

TEST_P(oneshot_suite, an_unsent_drop_wakes_the_receiver_with_nullopt) {
    crew_test::watchdog dog(60s);
    auto [tx, rx] = crew::make_oneshot<int>();
    auto h = pool().spawn(await_it(std::move(rx)));
    std::this_thread::sleep_for(1ms);  // usually suspended by now; either order must work
    { auto gone = std::move(tx); }
    EXPECT_EQ(h.get(), std::nullopt);
}

TEST_P(oneshot_suite, an_empty_receiver_throws_usage_error_when_awaited) {
    crew_test::watchdog dog(60s);
    EXPECT_THROW(pool().block_on(await_it(crew::oneshot_receiver<int>{})), crew::usage_error);
}

// The sender's writes before send() are visible to the receiver (TSan checks the plain int), the
// value arrives exactly once, and the receiver is never resumed on the sender's stack.
crew::task<int> await_after(crew::oneshot_receiver<int> rx, const int& data) {
    std::optional<int> v = co_await std::move(rx);
    EXPECT_FALSE(prim_test::inside_release);
    co_return v.value_or(-1000) + data;
}

TEST_P(oneshot_suite, outside_sends_race_the_await_and_each_value_arrives_once) {
    crew_test::watchdog dog(120s);
    const long rounds = crew_test::scaled(2000);
    for (long r = 0; r < rounds; ++r) {
        auto [tx, rx] = crew::make_oneshot<int>();
        int data = 0;
        auto h = pool().spawn(await_after(std::move(rx), data));
        std::thread sender([&, t = std::move(tx)]() mutable {
            data = 1;
            prim_test::release_scope scope;
            EXPECT_TRUE(t.send(static_cast<int>(r % 1000)));
        });
        sender.join();
        EXPECT_EQ(h.get(), static_cast<int>(r % 1000) + 1);
    }
}

// Rounds of Tokio's ping_pong shape: a task spawns a partner, pings it, awaits the pong.
crew::task<void> ponger(crew::oneshot_receiver<counted> in, crew::oneshot_sender<counted> out) {
    std::optional<counted> v = co_await std::move(in);
    out.send(counted(v ? v->v + 1 : -1));
}
crew::task<int> ping_round(int i) {
    auto [ping_tx, ping_rx] = crew::make_oneshot<counted>();
    auto [pong_tx, pong_rx] = crew::make_oneshot<counted>();
    auto partner = crew::spawn(ponger(std::move(ping_rx), std::move(pong_tx)));
    ping_tx.send(counted(i));
    std::optional<counted> v = co_await std::move(pong_rx);
    co_await std::move(partner);
    co_return v ? v->v : -1;
}
crew::task<long> ping_rounds(int n) {
    std::vector<crew::join_handle<int>> hs;
    for (int i = 0; i < n; ++i) hs.push_back(crew::spawn(ping_round(i)));
    long sum = 0;
    for (auto& h : hs) sum += co_await std::move(h);
    co_return sum;
}

TEST_P(oneshot_suite, ping_pong_rounds_deliver_every_value_once) {
    crew_test::watchdog dog(120s);
    const int n = static_cast<int>(crew_test::scaled(20000));
    const long want = static_cast<long>(n) * (n - 1) / 2 + n;
    for (int rep = 0; rep < 3; ++rep) EXPECT_EQ(pool().block_on(ping_rounds(n)), want);
    EXPECT_EQ(counted::live.load(), 0);
}

// cancel vs send: the receiver gets the value (it came first) or throws cancelled_error; either
// way no value leaks and none is destroyed twice (ASan, the live count).
crew::task<int> await_counted(crew::oneshot_receiver<counted> rx) {
    std::optional<counted> v = co_await std::move(rx);
    co_return v ? v->v : -1;
}

TEST_P(oneshot_suite, cancel_races_send) {
    crew_test::watchdog dog(120s);
    const long rounds = crew_test::scaled(2000);
    long got = 0, cancelled = 0;
    for (long r = 0; r < rounds; ++r) {
        auto [tx, rx] = crew::make_oneshot<counted>();
        auto h = pool().spawn(await_counted(std::move(rx)));
        if (r % 2 == 0) std::this_thread::yield();  // vary whether the receiver is suspended yet
        std::thread sender([t = std::move(tx)]() mutable { (void)t.send(counted(1)); });
        h.cancel();
        sender.join();
        try {
            got += h.get();
        } catch (const crew::cancelled_error&) {
            ++cancelled;
        }
    }
    EXPECT_EQ(got + cancelled, rounds);
    EXPECT_EQ(counted::live.load(), 0);
}

// Budget: awaiting ready oneshots in a loop is preempted (a victim spawned first gets to run).
crew::task<long> spin_on_ready(std::atomic<bool>& victim_ran) {
    long rounds = 0;
    while (!victim_ran.load(std::memory_order_acquire) && rounds < 2'000'000) {
        auto [tx, rx] = crew::make_oneshot<int>();
        tx.send(1);
        rounds += *co_await std::move(rx);
    }
    co_return rounds;
}
crew::task<void> mark(std::atomic<bool>& ran) {
    ran.store(true, std::memory_order_release);
    co_return;
}
crew::task<long> spin_with_victim(std::atomic<bool>& ran) {
    auto v = crew::spawn(mark(ran));
    long rounds = co_await spin_on_ready(ran);
    co_await std::move(v);
    co_return rounds;
}

TEST_P(oneshot_suite, a_loop_of_ready_receives_is_preempted_by_the_budget) {
    crew_test::watchdog dog(60s);
    std::atomic<bool> ran{false};
    const long rounds = pool().block_on(spin_with_victim(ran));
    EXPECT_TRUE(ran.load());
    EXPECT_LT(rounds, 2'000'000);
}

// A pool shut down while tasks wait on receivers whose senders outlive it: the frames are freed
// (no leak under ASan), the senders' later sends find the receivers gone, and no value leaks.
TEST_P(oneshot_suite, a_pool_shutdown_under_waiting_receivers_frees_everything) {
    crew_test::watchdog dog(60s);
    std::vector<crew::oneshot_sender<counted>> senders;
    {
        crew::pool p(workers());
        for (int i = 0; i < 16; ++i) {
            auto [tx, rx] = crew::make_oneshot<counted>();
            senders.push_back(std::move(tx));
            (void)p.spawn(await_counted(std::move(rx)));  // detached
        }
        // Each ran once and suspended in its await (else the drain destroys an unstarted frame).
        ASSERT_TRUE(wait_until([&] {
            std::uint64_t runs = 0;
            for (const auto& w : p.metrics().workers) runs += w.async_tasks_run;
            return runs >= 16;
        }));
    }
    for (auto& tx : senders) EXPECT_FALSE(tx.send(counted(1)));
    EXPECT_EQ(counted::live.load(), 0);
}

CREW_ALL_POOL_SIZES(oneshot_suite);

}  // namespace
