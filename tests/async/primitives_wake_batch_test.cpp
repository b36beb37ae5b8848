// The deferred wakes of channel / async_mutex / event (wake_batch, crew/async/detail/wait_list.hpp,
// session 9): a releaser claims a waiter's wake under the primitive's lock and queues the task only
// after unlocking. The race these tests aim at is cancellation arriving in that window (between the
// claim and the queuing) or just before the claim: every suspended co_await must end exactly once
// (a lost wake hangs: the watchdog fails the test; a double wake resumes a coroutine twice: the
// exclusion and exactly-once counters below, and ASan/TSan, catch it), and no grant (a value, the
// lock) is lost or given twice. The releasers run on workers (queue to the LIFO slot after
// unlocking) and on foreign threads (the injector), and the wake-alls exceed the batch's capacity,
// so the overflow path (queued under the lock) races too. Pools of 1, 2, 4, 8.
#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "async/primitives_common.hpp"

namespace {

using namespace std::chrono_literals;
using prim_test::wait_until;

class wake_batch_suite : public crew_test::pool_test {};

// Cancels handles[i] for every i in `which`, spaced by a few random microseconds.
template <class H>
void cancel_some(std::vector<H>& handles, const std::vector<std::size_t>& which, unsigned seed) {
    std::minstd_rand rng(seed);
    for (std::size_t i : which) {
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 50));
        handles[i].cancel();
    }
}

// ---- async_mutex: hand-offs from worker tasks, with cancellations in flight ----

struct mutex_stats {
    std::atomic<int> inside{0};
    std::atomic<long> overlaps{0};
    std::atomic<long> acquired{0};
};

crew::task<long> lock_loop(crew::async_mutex& m, mutex_stats& st, long iters) {
    long mine = 0;
    try {
        for (long i = 0; i < iters; ++i) {
            auto g = co_await m.lock();
            ++mine;
            if (st.inside.fetch_add(1) != 0) st.overlaps.fetch_add(1);
            struct leave {
                std::atomic<int>& inside;
                ~leave() { inside.fetch_sub(1); }  // also when yield_now throws cancelled_error
            } on_exit{st.inside};
            co_await crew::yield_now();  // hold it across a suspension: others queue behind us
        }
    } catch (const crew::cancelled_error&) {
    }
    st.acquired.fetch_add(mine);
    co_return mine;
}

TEST_P(wake_batch_suite, mutex_hand_offs_race_cancels_lock_never_lost_or_doubled) {
    crew_test::watchdog dog(180s);
    const long rounds = crew_test::scaled(200);
    const long iters = 50;
    for (long r = 0; r < rounds; ++r) {
        crew::async_mutex m;
        mutex_stats st;
        std::vector<crew::join_handle<long>> hs;
        for (int t = 0; t < 6; ++t) hs.push_back(pool().spawn(lock_loop(m, st, iters)));
        std::thread canceller([&] { cancel_some(hs, {1, 3, 5}, static_cast<unsigned>(r)); });
        canceller.join();  // before get(): a join_handle is not shared between threads
        long total = 0;
        for (std::size_t t = 0; t < hs.size(); ++t) {
            const long got = hs[t].get();
            if (t % 2 == 0) {
                EXPECT_EQ(got, iters);  // never cancelled: every lock succeeded
            }
            total += got;
        }
        EXPECT_EQ(st.overlaps.load(), 0);
        EXPECT_EQ(total, st.acquired.load());
        EXPECT_EQ(m.waiters(), 0u);
        ASSERT_TRUE(m.try_lock());  // not lost: nobody holds it
        m.unlock();
    }
}

// ---- event: a set() wakes more waiters than the batch holds, cancels race it ----

crew::task<int> wait_once(crew::event& e) {
    co_await e.wait();
    co_return 1;
}

TEST_P(wake_batch_suite, event_set_beyond_batch_capacity_races_cancels) {
    crew_test::watchdog dog(180s);
    const long rounds = crew_test::scaled(300);
    const std::size_t waiters = 3 * crew::detail::wake_batch::capacity + 1;
    long woke = 0, cancelled = 0;
    for (long r = 0; r < rounds; ++r) {
        crew::event e;
        std::vector<crew::join_handle<int>> hs;
        for (std::size_t i = 0; i < waiters; ++i) hs.push_back(pool().spawn(wait_once(e)));
        ASSERT_TRUE(wait_until([&] { return e.waiters() == waiters; }));
        std::vector<std::size_t> odd;
        for (std::size_t i = 1; i < waiters; i += 2) odd.push_back(i);
        std::thread canceller([&] { cancel_some(hs, odd, static_cast<unsigned>(r)); });
        if (r % 2 == 0) {
            e.set();  // from this (foreign) thread: the queuing goes through the injector
        } else {
            pool().block_on([](crew::event& ev) -> crew::task<void> {  // from a worker: the LIFO slot
                ev.set();
                co_return;
            }(e));
        }
        canceller.join();
        for (std::size_t i = 0; i < waiters; ++i) {
            try {
                EXPECT_EQ(hs[i].get(), 1);
                ++woke;
            } catch (const crew::cancelled_error&) {
                EXPECT_EQ(i % 2, 1u);  // only a cancelled waiter may throw
                ++cancelled;
            }
        }
        EXPECT_EQ(e.waiters(), 0u);
    }
    EXPECT_EQ(woke + cancelled, rounds * static_cast<long>(waiters));
}

// ---- channel: values conserved while receivers and senders are cancelled mid-hand-off ----

// status of each value: 0 never offered, 1 send returned true, 2 the sender was cancelled in it.
crew::task<void> send_range(crew::channel<long>& ch, long first, long count, std::vector<std::atomic<int>>& status) {
    for (long v = first; v < first + count; ++v) {
        try {
            const bool ok = co_await ch.send(v);
            status[static_cast<std::size_t>(v)].store(ok ? 1 : 3);
        } catch (const crew::cancelled_error&) {
            status[static_cast<std::size_t>(v)].store(2);
            co_return;
        }
    }
}

crew::task<void> receive_all(crew::channel<long>& ch, std::vector<std::atomic<int>>& seen) {
    try {
        while (std::optional<long> v = co_await ch.receive()) seen[static_cast<std::size_t>(*v)].fetch_add(1);
    } catch (const crew::cancelled_error&) {
    }
}

crew::task<void> close_after(crew::channel<long>& ch, std::vector<crew::join_handle<void>> senders) {
    for (auto& h : senders) co_await h;
    ch.close();
}

TEST_P(wake_batch_suite, channel_hand_offs_race_cancels_values_exactly_once) {
    crew_test::watchdog dog(180s);
    const long rounds = crew_test::scaled(100);
    const long senders = 4, receivers = 4, count = 200;
    for (long r = 0; r < rounds; ++r) {
        crew::channel<long> ch{1};
        std::vector<std::atomic<int>> status(static_cast<std::size_t>(senders * count));
        std::vector<std::atomic<int>> seen(status.size());
        std::vector<crew::join_handle<void>> rs, ss;
        for (long i = 0; i < receivers; ++i) rs.push_back(pool().spawn(receive_all(ch, seen)));
        for (long i = 0; i < senders; ++i) ss.push_back(pool().spawn(send_range(ch, i * count, count, status)));
        // Cancel half the receivers (the others keep draining) and half the senders.
        std::thread canceller([&] {
            cancel_some(rs, {0, 2}, static_cast<unsigned>(r));
            cancel_some(ss, {1, 3}, static_cast<unsigned>(r) + 1);
        });
        canceller.join();
        pool().block_on(close_after(ch, std::move(ss)));
        for (auto& h : rs) h.get();
        for (std::size_t v = 0; v < status.size(); ++v) {
            const int st = status[v].load(), n = seen[v].load();
            ASSERT_NE(st, 3) << "a send returned false before close";
            ASSERT_EQ(n, st == 1 ? 1 : 0) << "value " << v << " (status " << st << ")";
        }
        EXPECT_EQ(ch.waiting_receivers(), 0u);
        EXPECT_EQ(ch.waiting_senders(), 0u);
        EXPECT_EQ(ch.try_receive(), std::nullopt);
    }
}

CREW_ALL_POOL_SIZES(wake_batch_suite);

}  // namespace
