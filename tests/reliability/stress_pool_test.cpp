// tests/reliability/stress_pool_test.cpp -- starvation, shutdown under load, exception storms and
// move-only payloads, with real threads, printed seeds and a watchdog (docs/GUARANTEES.md).
//
// Fast tier by default; CREW_STRESS_LONG=1 runs the long tier (10,000 shutdown cycles, more tasks).
#include <crew/crew.hpp>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "reliability/stress_support.hpp"

namespace {

using crew_test::chaos;
using crew_test::chosen;
using crew_test::mix64;

std::chrono::seconds limit() { return std::chrono::seconds(crew_test::long_tier() ? 3000 : 600); }

// ---- starvation ----------------------------------------------------------------------------

// W-1 tasks spin until a flag is set by a task queued *behind* them (pushed before them onto the
// same deque, so the owner's LIFO pops reach it last): some worker must still run it.
TEST(stress_starvation, spinners_wait_for_a_task_queued_behind_them) {
    crew_test::watchdog dog(limit());
    const std::uint64_t seed = crew_test::test_seed();
    const long rounds = crew_test::tier_count(200, 5000);
    for (std::size_t workers : {2u, 3u, 4u}) {
        crew::pool p(workers);
        for (long r = 0; r < rounds; ++r) {
            std::atomic<bool> flag{false};
            std::atomic<unsigned> finished{0};
            const unsigned spinners = static_cast<unsigned>(workers - 1);
            const unsigned setter_at = static_cast<unsigned>(mix64(seed + static_cast<std::uint64_t>(r)) % (spinners + 1));
            p.run([&] {
                for (unsigned i = 0; i <= spinners; ++i) {
                    if (i == setter_at)
                        crew::spawn([&] {
                            flag.store(true, std::memory_order_release);
                            finished.fetch_add(1);
                        });
                    else
                        crew::spawn([&] {
                            while (!flag.load(std::memory_order_acquire)) std::this_thread::yield();
                            finished.fetch_add(1);
                        });
                }
            });
            while (finished.load() != spinners + 1) std::this_thread::yield();
        }
    }
}

// Every worker is busy with a chain of tasks that re-spawns itself until a flag is set; the flag
// is set by a task submitted from outside. The injector must be looked at even though no worker's
// deque ever empties.
TEST(stress_starvation, outside_submission_runs_while_workers_stay_busy) {
    crew_test::watchdog dog(limit());
    (void)crew_test::test_seed();
    const long rounds = crew_test::tier_count(50, 1000);
    for (long r = 0; r < rounds; ++r) {
        crew::pool p(3);
        std::atomic<bool> stop{false};
        std::atomic<int> chains{0};
        struct chain {
            std::atomic<bool>* stop;
            std::atomic<int>* chains;
            void operator()() const {
                if (stop->load(std::memory_order_acquire)) {
                    chains->fetch_sub(1);
                    return;
                }
                crew::spawn(*this);  // an lvalue callable: copied into the task
            }
        };
        for (int i = 0; i < 3; ++i) {
            chains.fetch_add(1);
            p.spawn(chain{&stop, &chains});
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        p.submit([&] { stop.store(true, std::memory_order_release); }).get();
        while (chains.load() != 0) std::this_thread::yield();
    }
}

// ---- shutdown under load -------------------------------------------------------------------

// A pool is destroyed while its workers are busy, tasks spawn tasks, and an outside thread keeps
// submitting. The destructor runs everything queued (and what that spawns); a submission from
// outside either runs or throws pool_closed_error. Nothing is lost, nothing runs twice.
TEST(stress_shutdown, destroy_under_load) {
    crew_test::watchdog dog(limit());
    const std::uint64_t seed = crew_test::test_seed();
    const long cycles = crew_test::tier_count(200, 10'000);
    for (long c = 0; c < cycles; ++c) {
        const std::uint64_t cs = mix64(seed + static_cast<std::uint64_t>(c));
        std::atomic<long> accepted{0}, ran{0}, refused{0};
        std::thread outsider;
        {
            auto p = std::make_unique<crew::pool>(1 + cs % 4);
            const long burst = 50 + static_cast<long>(cs % 200);
            for (long i = 0; i < burst; ++i) {
                accepted.fetch_add(1);
                p->spawn([&ran, &accepted, cs, i] {
                    chaos(cs, static_cast<std::uint64_t>(i));
                    if (i % 4 == 0) {  // a child spawned from inside: runs before the pool is gone
                        accepted.fetch_add(1);
                        crew::spawn([&ran] { ran.fetch_add(1); });
                    }
                    ran.fetch_add(1);
                });
            }
            crew::pool* raw = p.get();
            outsider = std::thread([&ran, &accepted, &refused, raw] {
                for (;;) {  // submits until the destructor's close refuses it
                    try {
                        raw->spawn([&ran] { ran.fetch_add(1); });
                        accepted.fetch_add(1);
                    } catch (const crew::pool_closed_error&) {
                        refused.fetch_add(1);
                        return;
                    }
                }
            });
            // The gate keeps the pool (whose destructor runs all queued work) alive until the
            // outsider was refused, so it never touches a destroyed pool.
            accepted.fetch_add(1);
            p->spawn([&ran, &refused] {
                while (refused.load() == 0) std::this_thread::yield();
                ran.fetch_add(1);
            });
            std::this_thread::sleep_for(std::chrono::microseconds(cs % 300));
            p.reset();  // destroy under load, with the outsider still submitting
            outsider.join();
        }
        EXPECT_EQ(refused.load(), 1);
        ASSERT_EQ(ran.load(), accepted.load()) << "cycle " << c;
    }
}

// ---- exception storms ----------------------------------------------------------------------

struct tagged_error : std::runtime_error {
    explicit tagged_error(long id) : std::runtime_error("task " + std::to_string(id)), id(id) {}
    long id;
};

// Futures: each exception reaches its own future, once. Returns how many threw.
long storm_through_futures(std::uint64_t seed, std::uint64_t per_million, long n) {
    crew::pool p(4);
    std::vector<crew::future<long>> futures;
    futures.reserve(static_cast<std::size_t>(n));
    for (long i = 0; i < n; ++i)
        futures.push_back(p.submit([seed, per_million, i]() -> long {
            chaos(seed, static_cast<std::uint64_t>(i));
            if (chosen(seed, static_cast<std::uint64_t>(i), per_million)) throw tagged_error(i);
            return i;
        }));
    long thrown = 0, wrong = 0;
    for (long i = 0; i < n; ++i) {
        const bool should_throw = chosen(seed, static_cast<std::uint64_t>(i), per_million);
        try {
            wrong += futures[static_cast<std::size_t>(i)].get() != i || should_throw;
        } catch (const tagged_error& e) {
            ++thrown;
            wrong += e.id != i || !should_throw;
        }
        wrong += futures[static_cast<std::size_t>(i)].valid();  // get() consumed it: no second delivery
    }
    EXPECT_EQ(wrong, 0);
    return thrown;
}

// Fire-and-forget: each escaped exception reaches the pool's handler, once.
void storm_through_handler(std::uint64_t seed, std::uint64_t per_million, long n) {
    std::mutex m;
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(n), 0);
    std::atomic<long> handled{0}, finished{0};
    {
        crew::pool_options o;
        o.threads = 4;
        o.on_unhandled_exception = [&](std::exception_ptr e) {
            try {
                std::rethrow_exception(e);
            } catch (const tagged_error& t) {
                std::lock_guard lock(m);
                ++seen[static_cast<std::size_t>(t.id)];
            }
            handled.fetch_add(1);
        };
        crew::pool q(o);
        for (long i = 0; i < n; ++i)
            q.spawn([&finished, seed, per_million, i] {
                finished.fetch_add(1);
                if (chosen(seed, static_cast<std::uint64_t>(i), per_million)) throw tagged_error(i);
            });
    }  // the destructor ran everything
    long expected = 0, bad = 0;
    for (long i = 0; i < n; ++i) {
        const bool should = chosen(seed, static_cast<std::uint64_t>(i), per_million);
        expected += should;
        bad += seen[static_cast<std::size_t>(i)] != (should ? 1 : 0);
    }
    EXPECT_EQ(finished.load(), n);
    EXPECT_EQ(handled.load(), expected);
    EXPECT_EQ(bad, 0);
}

void exception_storm(std::uint64_t per_million) {
    crew_test::watchdog dog(limit());
    const std::uint64_t seed = crew_test::test_seed();
    const long n = crew_test::tier_count(100'000, 1'000'000);
    const long thrown = storm_through_futures(seed, per_million, n);
    long expected = 0;
    for (long i = 0; i < n; ++i) expected += chosen(seed, static_cast<std::uint64_t>(i), per_million);
    EXPECT_EQ(thrown, expected);
    storm_through_handler(seed, per_million, n);
}

TEST(stress_exceptions, storm_0_1_percent) { exception_storm(1'000); }
TEST(stress_exceptions, storm_10_percent) { exception_storm(100'000); }
TEST(stress_exceptions, storm_100_percent) { exception_storm(1'000'000); }

// Exceptions thrown on both sides of nested joins reach the joining caller; the one from the
// first callable wins when both throw (crew::join's documented rule is checked in join_test; here
// only that nothing is lost or crashes under load).
TEST(stress_exceptions, nested_joins_throwing) {
    crew_test::watchdog dog(limit());
    const std::uint64_t seed = crew_test::test_seed();
    crew::pool p(4);
    const long rounds = crew_test::tier_count(2'000, 20'000);
    long caught = 0;
    for (long r = 0; r < rounds; ++r) {
        const bool a = chosen(seed, static_cast<std::uint64_t>(2 * r), 300'000);
        const bool b = chosen(seed, static_cast<std::uint64_t>(2 * r + 1), 300'000);
        try {
            p.run([&] {
                crew::join([&] { if (a) throw tagged_error(2 * r); },
                           [&] { if (b) throw tagged_error(2 * r + 1); });
            });
            EXPECT_FALSE(a || b) << "round " << r;
        } catch (const tagged_error& e) {
            ++caught;
            EXPECT_TRUE(a || b) << "round " << r;
            EXPECT_TRUE(e.id == 2 * r || e.id == 2 * r + 1);
        }
    }
    EXPECT_GE(caught, 0);
}

// ---- move-only payloads --------------------------------------------------------------------

struct payload_counts {
    std::atomic<long> constructed{0}, destroyed{0}, invoked{0};
};

class move_only {
public:
    move_only(payload_counts& c, long id) : c_(&c), data_(std::make_unique<long>(id)) { c_->constructed.fetch_add(1); }
    move_only(move_only&& o) noexcept : c_(o.c_), data_(std::move(o.data_)) { c_->constructed.fetch_add(1); }
    move_only(const move_only&) = delete;
    move_only& operator=(const move_only&) = delete;
    move_only& operator=(move_only&&) = delete;
    ~move_only() { c_->destroyed.fetch_add(1); }
    void operator()() {
        if (data_) c_->invoked.fetch_add(1);
    }
    long value() const { return data_ ? *data_ : -1; }

private:
    payload_counts* c_;
    std::unique_ptr<long> data_;
};

TEST(stress_payloads, move_only_constructions_and_destructions_balance) {
    crew_test::watchdog dog(limit());
    const std::uint64_t seed = crew_test::test_seed();
    const long n = crew_test::tier_count(100'000, 1'000'000);
    payload_counts c;
    {
        crew::pool p(4);
        std::vector<crew::future<long>> futures;
        for (long i = 0; i < n; ++i) {
            switch (mix64(seed + static_cast<std::uint64_t>(i)) % 3) {
                case 0: p.spawn(move_only(c, i)); break;
                case 1:
                    futures.push_back(p.submit([m = move_only(c, i)]() mutable {
                        m();
                        return m.value();
                    }));
                    break;
                default:
                    p.run([&] { crew::spawn(move_only(c, i)); });
                    break;
            }
        }
        for (auto& f : futures) EXPECT_GE(f.get(), 0);
        // Futures never waited on: their payloads must be destroyed too.
        for (long i = 0; i < 100; ++i) (void)p.submit([m = move_only(c, -1)]() mutable { m(); });
    }
    EXPECT_EQ(c.invoked.load(), n + 100);
    EXPECT_EQ(c.constructed.load(), c.destroyed.load());
}

// ---- waiting ------------------------------------------------------------------------------

double cpu_seconds(int who) {
    rusage u{};
    getrusage(who, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// A thread outside every pool that waits sleeps: over a 300 ms wait it uses a small fraction of a
// core (the bound is generous; a spinning waiter would use all 300 ms).
TEST(stress_waiting, outside_waiter_sleeps) {
    crew_test::watchdog dog(limit());
    crew::pool p(2);
    for (int round = 0; round < 3; ++round) {
        auto f = p.submit([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            return 7;
        });
        const double before = cpu_seconds(RUSAGE_THREAD);
        EXPECT_EQ(f.get(), 7);
        const double used = cpu_seconds(RUSAGE_THREAD) - before;
        EXPECT_LT(used, 0.1) << "the waiting thread used " << used << " s of CPU in a 300 ms wait";
    }
}

// Idle workers park: once the pool has had nothing to do, 500 ms of idleness cost the whole
// process a small fraction of a core.
TEST(stress_waiting, idle_workers_park) {
    crew_test::watchdog dog(limit());
    crew::pool p(4);
    for (int i = 0; i < 1000; ++i) p.spawn([] {});
    p.run([] {});
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // past the spin phase
    const double before = cpu_seconds(RUSAGE_SELF);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const double used = cpu_seconds(RUSAGE_SELF) - before;
    EXPECT_LT(used, 0.15) << "4 idle workers used " << used << " s of CPU in 500 ms";
}

// A worker that waits keeps running tasks: on a one-worker pool, a task waits for a future whose
// task sits in the same pool, which only the waiting worker itself can run. (A blocking wait
// would hang here; the watchdog would then print every stack.)
TEST(stress_waiting, waiting_worker_runs_other_tasks) {
    crew_test::watchdog dog(limit());
    const long rounds = crew_test::tier_count(2'000, 50'000);
    crew::pool p(1);
    crew::future<long> outer = p.submit([&p] {
        auto inner = p.submit([] { return 41L; });
        return inner.get() + 1;  // waits on the pool's only worker: it must run `inner` itself
    });
    EXPECT_EQ(outer.get(), 42);
    for (long r = 0; r < rounds; ++r) {
        auto f = p.submit([&p, r] { return p.submit([r] { return r; }).get(); });
        ASSERT_EQ(f.get(), r);
    }
}

}  // namespace
