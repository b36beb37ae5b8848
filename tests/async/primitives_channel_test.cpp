// crew::channel<T>: exactly-once delivery, FIFO, close, budget fairness, cancellation races,
// releasing 100,000 waiters without recursion, destruction with waiters. Pools of 1, 2, 4, 8.
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "async/primitives_common.hpp"

namespace {

using namespace std::chrono_literals;
using prim_test::wait_until;

class channel_suite : public crew_test::pool_test {};

// ---- single-threaded behaviour (no suspension) ----

TEST(channel_basics, capacity_zero_throws) { EXPECT_THROW(crew::channel<int>{0}, std::invalid_argument); }

TEST(channel_basics, try_send_try_receive_fifo_full_closed) {
    crew::channel<int> ch{3};
    EXPECT_EQ(ch.capacity(), 3u);
    EXPECT_TRUE(ch.try_send(1));
    EXPECT_TRUE(ch.try_send(2));
    int three = 3;
    EXPECT_TRUE(ch.try_send(three));
    EXPECT_FALSE(ch.try_send(4));  // full
    EXPECT_EQ(ch.size(), 3u);
    EXPECT_EQ(ch.try_receive(), 1);
    ch.close();
    EXPECT_TRUE(ch.is_closed());
    EXPECT_FALSE(ch.try_send(5));  // closed
    EXPECT_EQ(ch.try_receive(), 2);  // drains after close
    EXPECT_EQ(ch.try_receive(), 3);
    EXPECT_EQ(ch.try_receive(), std::nullopt);
    ch.close();  // idempotent
}

TEST(channel_basics, move_only_values_and_failed_try_send_keeps_the_value) {
    crew::channel<std::unique_ptr<int>> ch{1};
    auto a = std::make_unique<int>(1);
    auto b = std::make_unique<int>(2);
    EXPECT_TRUE(ch.try_send(std::move(a)));
    EXPECT_EQ(a, nullptr);
    EXPECT_FALSE(ch.try_send(std::move(b)));  // full: b untouched
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(*b, 2);
    auto got = ch.try_receive();
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(**got, 1);
}

// The buffer lives in the state's block (session 7): only live values are constructed, each is
// destroyed exactly once (taken, or with the channel), wrap-around keeps FIFO, over-aligned values
// are aligned, and a capacity too large for memory throws instead of overflowing the size.
struct counted {
    static inline int live = 0;
    long v;
    explicit counted(long x) noexcept : v(x) { ++live; }
    counted(counted&& o) noexcept : v(o.v) { ++live; }
    counted& operator=(counted&&) = delete;
    ~counted() { --live; }
};

TEST(channel_basics, buffered_values_live_exactly_once_across_wrap_and_destruction) {
    ASSERT_EQ(counted::live, 0);
    {
        crew::channel<counted> ch{3};
        EXPECT_EQ(counted::live, 0);  // no slot is constructed up front
        long next_in = 0, next_out = 0;
        for (int round = 0; round < 10; ++round) {  // the ring's head wraps several times
            while (ch.try_send(counted{next_in})) ++next_in;
            EXPECT_EQ(counted::live, 3);
            for (int i = 0; i < 2; ++i) {
                auto got = ch.try_receive();
                ASSERT_TRUE(got.has_value());
                EXPECT_EQ(got->v, next_out++);
            }
            EXPECT_EQ(counted::live, 1);
        }
        EXPECT_EQ(ch.size(), 1u);
    }  // the buffered value is destroyed with the channel
    EXPECT_EQ(counted::live, 0);
}

struct alignas(64) wide {
    long v;
};

TEST(channel_basics, over_aligned_values_and_large_capacities) {
    crew::channel<wide> ch{5};
    for (long i = 0; i < 5; ++i) EXPECT_TRUE(ch.try_send(wide{i}));
    for (long i = 0; i < 5; ++i) {
        auto got = ch.try_receive();
        ASSERT_TRUE(got.has_value());
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&*got) % 64, 0u);
        EXPECT_EQ(got->v, i);
    }
    crew::channel<std::string> big{10000};  // beyond every frame-cache class: from the heap
    for (int i = 0; i < 10000; ++i) ASSERT_TRUE(big.try_send(std::string(40, static_cast<char>('a' + i % 26))));
    EXPECT_FALSE(big.try_send(std::string("x")));
    EXPECT_EQ(big.try_receive(), std::string(40, 'a'));
    EXPECT_THROW(crew::channel<wide>{std::numeric_limits<std::size_t>::max() / 8}, std::bad_alloc);
}

// ---- coroutine scenarios ----

crew::task<void> produce(crew::channel<long>& ch, long id, long count, std::atomic<long>& refused) {
    for (long i = 0; i < count; ++i)
        if (!co_await ch.send(id * count + i)) refused.fetch_add(1);
}

// Receives until closed and drained; checks FIFO per producer (values of one producer increase).
crew::task<long> consume(crew::channel<long>& ch, std::vector<std::atomic<int>>& seen, long count, long producers,
                         std::atomic<long>& order_errors) {
    std::vector<long> last(static_cast<std::size_t>(producers), -1);
    long n = 0;
    while (std::optional<long> v = co_await ch.receive()) {
        seen[static_cast<std::size_t>(*v)].fetch_add(1, std::memory_order_relaxed);
        const auto p = static_cast<std::size_t>(*v / count);
        if (*v <= last[p]) order_errors.fetch_add(1);
        last[p] = *v;
        ++n;
    }
    co_return n;
}

crew::task<void> close_after(crew::channel<long>& ch, std::vector<crew::join_handle<void>> producers) {
    for (auto& h : producers) co_await h;
    ch.close();
}

TEST_P(channel_suite, exactly_once_n_producers_m_consumers_with_close) {
    crew_test::watchdog dog(120s);
    for (std::size_t cap : {std::size_t{1}, std::size_t{4}, std::size_t{64}}) {
        const long producers = 5, consumers = 3, count = crew_test::scaled(20'000);
        crew::channel<long> ch{cap};
        std::vector<std::atomic<int>> seen(static_cast<std::size_t>(producers * count));
        std::atomic<long> refused{0}, order_errors{0};
        std::vector<crew::join_handle<long>> cs;
        for (long c = 0; c < consumers; ++c) cs.push_back(pool().spawn(consume(ch, seen, count, producers, order_errors)));
        std::vector<crew::join_handle<void>> ps;
        for (long p = 0; p < producers; ++p) ps.push_back(pool().spawn(produce(ch, p, count, refused)));
        pool().block_on(close_after(ch, std::move(ps)));
        long total = 0;
        for (auto& h : cs) total += h.get();
        EXPECT_EQ(total, producers * count);
        EXPECT_EQ(refused.load(), 0);
        EXPECT_EQ(order_errors.load(), 0);
        for (auto& s : seen) ASSERT_EQ(s.load(), 1);
        EXPECT_EQ(ch.try_receive(), std::nullopt);
    }
}

crew::task<bool> send_one(crew::channel<int>& ch, int v) { co_return co_await ch.send(v); }
crew::task<std::optional<int>> receive_one(crew::channel<int>& ch) { co_return co_await ch.receive(); }

TEST_P(channel_suite, close_wakes_suspended_senders_with_false_and_receivers_drain) {
    crew_test::watchdog dog(60s);
    crew::channel<int> ch{1};
    ASSERT_TRUE(ch.try_send(1));
    auto s = pool().spawn(send_one(ch, 2));
    ASSERT_TRUE(wait_until([&] { return ch.waiting_senders() == 1; }));
    ch.close();
    EXPECT_FALSE(s.get());  // the value 2 was dropped
    EXPECT_FALSE(pool().block_on(send_one(ch, 3)));
    EXPECT_EQ(pool().block_on(receive_one(ch)), 1);
    EXPECT_EQ(pool().block_on(receive_one(ch)), std::nullopt);
}

TEST_P(channel_suite, waiters_are_served_in_arrival_order) {
    crew_test::watchdog dog(60s);
    crew::channel<int> ch{1};
    std::vector<crew::join_handle<std::optional<int>>> rs;
    for (int i = 0; i < 8; ++i) {
        rs.push_back(pool().spawn(receive_one(ch)));
        ASSERT_TRUE(wait_until([&] { return ch.waiting_receivers() == static_cast<std::size_t>(i + 1); }));
    }
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(pool().block_on(send_one(ch, i)));
    for (int i = 0; i < 8; ++i) EXPECT_EQ(rs[static_cast<std::size_t>(i)].get(), i);
    // Senders, in arrival order, into a full channel.
    ASSERT_TRUE(ch.try_send(100));
    std::vector<crew::join_handle<bool>> ss;
    for (int i = 0; i < 8; ++i) {
        ss.push_back(pool().spawn(send_one(ch, 101 + i)));
        ASSERT_TRUE(wait_until([&] { return ch.waiting_senders() == static_cast<std::size_t>(i + 1); }));
    }
    for (int i = 0; i < 9; ++i) EXPECT_EQ(pool().block_on(receive_one(ch)), 100 + i);
    for (auto& h : ss) EXPECT_TRUE(h.get());
}

TEST_P(channel_suite, move_only_values_through_suspension) {
    crew_test::watchdog dog(60s);
    crew::channel<std::unique_ptr<std::string>> ch{1};
    auto rx = [](crew::channel<std::unique_ptr<std::string>>& c) -> crew::task<std::string> {
        std::string all;
        while (auto v = co_await c.receive()) all += **v;
        co_return all;
    };
    auto tx = [](crew::channel<std::unique_ptr<std::string>>& c) -> crew::task<void> {
        for (const char* w : {"a", "b", "c", "d"}) EXPECT_TRUE(co_await c.send(std::make_unique<std::string>(w)));
        c.close();
    };
    auto r = pool().spawn(rx(ch));
    pool().block_on(tx(ch));
    EXPECT_EQ(r.get(), "abcd");
}

// Budget: a task looping on an always-ready channel is preempted, so another task on the same
// worker runs (on one worker the victim can only run when the looper yields).
crew::task<long> spin_on_ready_channel(crew::channel<int>& ch, std::atomic<bool>& victim_ran) {
    long rounds = 0;
    while (!victim_ran.load(std::memory_order_acquire) && rounds < 2'000'000) {
        (void)co_await ch.send(1);
        (void)co_await ch.receive();
        ++rounds;
    }
    co_return rounds;
}
crew::task<void> victim(std::atomic<bool>& ran) {
    ran.store(true, std::memory_order_release);
    co_return;
}
crew::task<long> looper_then_victim(crew::channel<int>& ch, std::atomic<bool>& ran) {
    auto v = crew::spawn(victim(ran));  // queued behind the looper on this worker
    long rounds = co_await spin_on_ready_channel(ch, ran);
    co_await v;
    co_return rounds;
}

TEST_P(channel_suite, always_ready_loop_is_preempted_by_the_budget) {
    crew_test::watchdog dog(60s);
    crew::channel<int> ch{4};
    std::atomic<bool> ran{false};
    const long rounds = pool().block_on(looper_then_victim(ch, ran));
    EXPECT_TRUE(ran.load());
    EXPECT_LT(rounds, 2'000'000);
    if (workers() == 1) {
        EXPECT_LE(rounds, 200);  // 2 units per round, 128 per run
    }
}

// Releasing 100,000 suspended receivers by close() goes through the scheduler: none is resumed
// on the closing thread's stack.
crew::task<int> receive_and_check(crew::channel<int>& ch, std::atomic<int>& nested) {
    auto v = co_await ch.receive();
    if (prim_test::inside_release) nested.fetch_add(1);
    co_return v ? 1 : 0;
}
crew::task<void> close_from_task(crew::channel<int>& ch) {
    prim_test::release_scope scope;
    ch.close();
    co_return;
}

TEST_P(channel_suite, close_releases_100k_waiters_without_recursion) {
    crew_test::watchdog dog(120s);
    const long n = crew_test::scaled(100'000);
    crew::channel<int> ch{1};
    std::atomic<int> nested{0};
    std::vector<crew::join_handle<int>> hs;
    hs.reserve(static_cast<std::size_t>(n));
    for (long i = 0; i < n; ++i) hs.push_back(pool().spawn(receive_and_check(ch, nested)));
    ASSERT_TRUE(wait_until([&] { return ch.waiting_receivers() == static_cast<std::size_t>(n); }, 60s));
    pool().block_on(close_from_task(ch));
    long got = 0;
    for (auto& h : hs) got += h.get();
    EXPECT_EQ(got, 0);
    EXPECT_EQ(nested.load(), 0);
    // And 100,000 suspended senders.
    crew::channel<int> full{1};
    ASSERT_TRUE(full.try_send(0));
    std::vector<crew::join_handle<bool>> ss;
    ss.reserve(static_cast<std::size_t>(n));
    for (long i = 0; i < n; ++i) ss.push_back(pool().spawn(send_one(full, 1)));
    ASSERT_TRUE(wait_until([&] { return full.waiting_senders() == static_cast<std::size_t>(n); }, 60s));
    full.close();
    for (auto& h : ss) EXPECT_FALSE(h.get());
}

// Cancellation: a suspended receiver cancelled while a value is sent either gets the value or
// throws cancelled_error with the value still in the channel -- never both, never neither.
TEST_P(channel_suite, cancel_receiver_races_send_loses_no_value) {
    crew_test::watchdog dog(120s);
    const long rounds = crew_test::scaled(2000);
    long received = 0, cancelled = 0;
    for (long r = 0; r < rounds; ++r) {
        crew::channel<int> ch{1};
        auto h = pool().spawn(receive_one(ch));
        ASSERT_TRUE(wait_until([&] { return ch.waiting_receivers() == 1; }));
        std::thread sender([&] { ASSERT_TRUE(ch.try_send(7)); });
        h.cancel();
        sender.join();
        try {
            EXPECT_EQ(h.get(), 7);
            ++received;
            EXPECT_EQ(ch.try_receive(), std::nullopt);
        } catch (const crew::cancelled_error&) {
            ++cancelled;
            EXPECT_EQ(ch.try_receive(), 7);  // stayed in the channel
        }
        EXPECT_EQ(ch.waiting_receivers(), 0u);
    }
    EXPECT_EQ(received + cancelled, rounds);
}

// Two receivers, one cancelled while the value is handed over: the value goes to the other.
TEST_P(channel_suite, cancel_one_of_two_receivers_value_goes_to_the_other) {
    crew_test::watchdog dog(120s);
    const long rounds = crew_test::scaled(1000);
    for (long r = 0; r < rounds; ++r) {
        crew::channel<int> ch{1};
        auto a = pool().spawn(receive_one(ch));
        ASSERT_TRUE(wait_until([&] { return ch.waiting_receivers() == 1; }));
        auto b = pool().spawn(receive_one(ch));
        ASSERT_TRUE(wait_until([&] { return ch.waiting_receivers() == 2; }));
        std::thread canceller([&] { a.cancel(); });
        ASSERT_TRUE(ch.try_send(9));
        canceller.join();
        int values = 0;
        try {
            if (a.get() == 9) ++values;
        } catch (const crew::cancelled_error&) {
        }
        if (values == 0) {
            EXPECT_EQ(b.get(), 9);
        } else {
            ch.close();
            EXPECT_EQ(b.get(), std::nullopt);
        }
    }
}

// A suspended sender cancelled while a receiver frees room: its value is either delivered (send
// returned true) or never taken (cancelled) -- the receiver side sees it exactly when it was sent.
TEST_P(channel_suite, cancel_sender_races_receive) {
    crew_test::watchdog dog(120s);
    const long rounds = crew_test::scaled(2000);
    for (long r = 0; r < rounds; ++r) {
        crew::channel<int> ch{1};
        ASSERT_TRUE(ch.try_send(1));
        auto h = pool().spawn(send_one(ch, 2));
        ASSERT_TRUE(wait_until([&] { return ch.waiting_senders() == 1; }));
        std::thread receiver([&] { EXPECT_EQ(ch.try_receive(), 1); });
        h.cancel();
        receiver.join();
        bool sent = false;
        try {
            sent = h.get();
            EXPECT_TRUE(sent);
        } catch (const crew::cancelled_error&) {
        }
        EXPECT_EQ(ch.try_receive(), sent ? std::optional<int>(2) : std::nullopt);
        EXPECT_EQ(ch.waiting_senders(), 0u);
    }
}

TEST_P(channel_suite, cancel_before_waiting_throws_without_taking_anything) {
    crew_test::watchdog dog(60s);
    crew::channel<int> ch{1};
    auto h = pool().spawn(receive_one(ch));
    h.cancel();
    EXPECT_THROW(h.get(), crew::cancelled_error);
    EXPECT_EQ(ch.waiting_receivers(), 0u);
    ASSERT_TRUE(ch.try_send(3));
    EXPECT_EQ(ch.try_receive(), 3);
}

// Destroying a channel with suspended tasks acts as close() for them.
TEST_P(channel_suite, destroy_with_waiters_acts_as_close) {
    crew_test::watchdog dog(60s);
    auto ch = std::make_unique<crew::channel<int>>(1);
    std::vector<crew::join_handle<std::optional<int>>> rs;
    for (int i = 0; i < 16; ++i) rs.push_back(pool().spawn(receive_one(*ch)));
    ASSERT_TRUE(wait_until([&] { return ch->waiting_receivers() == 16; }));
    ch.reset();
    for (auto& h : rs) EXPECT_EQ(h.get(), std::nullopt);

    auto full = std::make_unique<crew::channel<int>>(1);
    ASSERT_TRUE(full->try_send(0));
    std::vector<crew::join_handle<bool>> ss;
    for (int i = 0; i < 16; ++i) ss.push_back(pool().spawn(send_one(*full, i)));
    ASSERT_TRUE(wait_until([&] { return full->waiting_senders() == 16; }));
    full.reset();
    for (auto& h : ss) EXPECT_FALSE(h.get());
}

// Destruction racing with the cancellation of a waiter: no use-after-free (ASan/TSan).
TEST_P(channel_suite, destroy_races_cancel) {
    crew_test::watchdog dog(120s);
    const long rounds = crew_test::scaled(1000);
    for (long r = 0; r < rounds; ++r) {
        auto ch = std::make_unique<crew::channel<int>>(1);
        auto h = pool().spawn(receive_one(*ch));
        ASSERT_TRUE(wait_until([&] { return ch->waiting_receivers() == 1; }));
        std::thread canceller([&] { h.cancel(); });
        ch.reset();
        canceller.join();
        try {
            EXPECT_EQ(h.get(), std::nullopt);
        } catch (const crew::cancelled_error&) {
        }
    }
}

// A pool shutdown with tasks suspended on channels that outlive it (session 15: the drain settles
// each suspension as cancelled, and the destroyed awaiter unlinks its node and drops its count in
// the block): the channels are usable afterwards, and destroying one frees its block (ASan, TSan).
// Half the receivers' channels are destroyed right away, the others after values went through.
TEST_P(channel_suite, a_pool_shutdown_leaves_channels_usable_and_freeable) {
    crew_test::watchdog dog(60s);
    std::vector<std::unique_ptr<crew::channel<int>>> chs;
    for (int i = 0; i < 8; ++i) chs.push_back(std::make_unique<crew::channel<int>>(1));
    auto full = std::make_unique<crew::channel<int>>(1);
    ASSERT_TRUE(full->try_send(-1));
    crew::join_handle<std::optional<int>> kept;
    {
        crew::pool p(workers());
        for (auto& ch : chs)
            for (int k = 0; k < 3; ++k) p.spawn(receive_one(*ch)).detach();
        for (int i = 0; i < 4; ++i) p.spawn(send_one(*full, i)).detach();
        kept = p.spawn(receive_one(*chs[0]));
        ASSERT_TRUE(wait_until([&] {
            for (std::size_t i = 0; i < chs.size(); ++i)
                if (chs[i]->waiting_receivers() != (i == 0 ? 4u : 3u)) return false;
            return full->waiting_senders() == 4;
        }));
    }  // the drain destroys the suspended frames
    EXPECT_TRUE(kept.done());
    EXPECT_THROW(kept.get(), crew::cancelled_error);
    EXPECT_EQ(full->waiting_senders(), 0u);
    EXPECT_EQ(full->try_receive(), -1);
    for (std::size_t i = 0; i < chs.size(); ++i) {
        EXPECT_EQ(chs[i]->waiting_receivers(), 0u);
        if (i % 2 == 0) continue;
        ASSERT_TRUE(chs[i]->try_send(static_cast<int>(i)));
        EXPECT_EQ(chs[i]->try_receive(), static_cast<int>(i));
    }
    chs.clear();
    full.reset();
}

CREW_ALL_POOL_SIZES(channel_suite);

}  // namespace
