// tests/detail/task_state_stress.hpp -- the races of async-notes.md §3.3 on the task state word,
// as stress tests over a mock runtime (included by task_state_test.cpp).
//
// The mock task: a heap object holding the state word, an "in run" counter (two concurrent runs
// fail at once), a message count that senders bump before they wake it (the run consumes them;
// the task completes after `to_consume`), a result slot (plain data, written by the run that
// completes, destroyed by whoever the state word names: TSan checks the hand-over), a join flag
// (the join waker), and an optional parent that each child wakes by value when it completes.
// Frames are freed with delete when a transition says so; ASan catches any touch after that.
#pragma once

namespace {

std::atomic<long> g_frees{0};
std::atomic<long> g_results_destroyed{0};

struct mock_task {
    state st;
    std::atomic<int> in_run{0};
    std::atomic<long> pending{0};
    std::atomic<bool> joined{false};
    long to_consume;
    long consumed = 0;        // touched only while RUNNING
    bool result_alive = false;  // the result slot
    mock_task* parent = nullptr;

    mock_task(std::uint64_t refs, long need) : st(refs), to_consume(need) {}
    ~mock_task() { g_frees.fetch_add(1, std::memory_order_relaxed); }

    void destroy_result() {
        EXPECT_TRUE(result_alive);
        result_alive = false;
        g_results_destroyed.fetch_add(1, std::memory_order_relaxed);
    }
};

class mock_runtime {
public:
    explicit mock_runtime(int workers) {
        for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
    }
    ~mock_runtime() { stop(); }
    void stop() {
        stop_.store(true);
        for (auto& t : threads_) t.join();
        threads_.clear();
    }
    void submit(mock_task* t) {
        std::lock_guard lock(m_);
        q_.push_back(t);
    }
    bool queue_empty() {
        std::lock_guard lock(m_);
        return q_.empty();
    }
    long completed() const { return completed_.load(); }

    // A waker: by value (owns a reference) or by reference.
    void wake(mock_task* t, bool by_val) {
        notify_result r = by_val ? t->st.transition_to_notified_by_val() : t->st.transition_to_notified_by_ref();
        if (r == notify_result::submit) submit(t);
        if (r == notify_result::dealloc) delete t;
    }
    void cancel(mock_task* t) {
        if (t->st.cancel() == notify_result::submit) submit(t);
    }

private:
    void work() {
        while (!stop_.load(std::memory_order_relaxed)) {
            mock_task* t = nullptr;
            {
                std::lock_guard lock(m_);
                if (!q_.empty()) {
                    t = q_.front();
                    q_.pop_front();
                }
            }
            if (t != nullptr)
                run(t);
            else
                std::this_thread::yield();
        }
    }

    void run(mock_task* t) {
        switch (t->st.transition_to_running()) {
            case run_result::failed: return;
            case run_result::dealloc: delete t; return;
            case run_result::cancelled: complete(t); return;
            case run_result::success: break;
        }
        EXPECT_EQ(t->in_run.fetch_add(1), 0) << "resumed on two threads at once";
        t->consumed += t->pending.exchange(0, std::memory_order_acquire);
        const bool done = t->consumed >= t->to_consume;
        t->in_run.fetch_sub(1);
        if (done) return complete(t);
        switch (t->st.transition_to_idle()) {
            case idle_result::ok: return;
            case idle_result::ok_notified: submit(t); return;  // to the back: a yield
            case idle_result::ok_dealloc: delete t; return;
            case idle_result::cancelled: complete(t); return;
        }
    }

    // RUNNING held: write the result, wake the parent, then complete as async_task::complete does:
    // one CAS while no join waker is installed (a detached task's result dropped first), else the
    // long way (tell the joiner or drop the result, then drop the entry's reference).
    void complete(mock_task* t) {
        t->result_alive = true;
        mock_task* parent = t->parent;
        completed_.fetch_add(1);
        if (parent != nullptr) {
            parent->pending.fetch_add(1, std::memory_order_release);
            wake(parent, true);  // the child's reference to its parent
        }
        bool dropped = false;
        for (;;) {
            switch (t->st.transition_to_complete_unwatched(1, dropped)) {
                case crew::detail::complete_result::done: return;
                case crew::detail::complete_result::done_dealloc: delete t; return;
                case crew::detail::complete_result::drop_output:
                    t->destroy_result();
                    dropped = true;
                    break;
                case crew::detail::complete_result::join_waker: return complete_watched(t);
            }
        }
    }
    void complete_watched(mock_task* t) {
        std::uint64_t snap = t->st.transition_to_complete();
        bool fired = false;
        if ((snap & state::join_interest) == 0) {
            t->destroy_result();
        } else if ((snap & state::join_waker) != 0) {
            t->joined.store(true, std::memory_order_release);  // "wake the joiner"
            fired = true;  // the slot goes back in the terminal RMW
        }
        if (t->st.transition_to_terminal(1, fired)) delete t;
    }

    std::mutex m_;
    std::deque<mock_task*> q_;
    std::atomic<bool> stop_{false};
    std::atomic<long> completed_{0};
    std::vector<std::thread> threads_;
};

enum class handle_mode { drop_at_once, join_then_drop, drop_at_random };

struct race_config {
    int tasks = 200;
    int senders = 2;            // each sends msgs messages to every leaf task, the last by value
    int msgs = 3;
    double consume_share = 1.0;  // the task completes after this share of all messages
    int storm = 0;              // threads waking every task by reference without a message
    bool cancel = false;        // a thread cancels every task at a random moment
    handle_mode handle = handle_mode::drop_at_random;
    bool siblings = false;      // tasks in triples: a parent and two children that wake it
};

// Runs one race on `workers` mock workers; every task must complete once and be freed once, every
// result destroyed once.
void run_race(const race_config& c, int workers, std::uint64_t seed) {
    const long freed_before = g_frees.load(), destroyed_before = g_results_destroyed.load();
    const int n = c.tasks;
    const long total_msgs = static_cast<long>(c.senders) * c.msgs;
    std::vector<mock_task*> tasks(static_cast<std::size_t>(n));
    auto is_parent = [&](int i) { return c.siblings && i % 3 == 0; };
    for (int i = 0; i < n; ++i) {
        const long need = is_parent(i) ? 2 : static_cast<long>(static_cast<double>(total_msgs) * c.consume_share);
        // references: the first entry, the handle, one per by-value sender (or two children), the
        // canceller's, and the storm's (a storm waker holds none; the test holds one for it)
        const std::uint64_t r = 2 + (is_parent(i) ? 2 : static_cast<std::uint64_t>(c.senders)) + (c.cancel ? 1 : 0) +
                                (c.storm > 0 ? 1 : 0);
        tasks[static_cast<std::size_t>(i)] = new mock_task(r, need);
    }
    if (c.siblings)
        for (int i = 0; i < n; ++i)
            if (!is_parent(i)) tasks[static_cast<std::size_t>(i)]->parent = tasks[static_cast<std::size_t>(i - i % 3)];

    mock_runtime rt(workers);
    for (mock_task* t : tasks) rt.submit(t);  // born queued
    std::vector<std::thread> threads;
    for (int s = 0; s < c.senders; ++s)
        threads.emplace_back([&, s] {
            std::mt19937_64 rng(seed + static_cast<std::uint64_t>(s));
            for (int m = 0; m < c.msgs; ++m)
                for (int i = 0; i < n; ++i) {
                    if (is_parent(i)) continue;
                    mock_task* t = tasks[static_cast<std::size_t>(i)];
                    t->pending.fetch_add(1, std::memory_order_release);
                    rt.wake(t, m + 1 == c.msgs);  // the last wake gives the sender's reference up
                    if ((rng() & 63) == 0) std::this_thread::yield();
                }
        });
    // Handles: each holds a reference until it drops; join_then_drop waits for the result.
    threads.emplace_back([&] {
        std::mt19937_64 rng(seed ^ 0x5bd1e995u);
        for (int i = 0; i < n; ++i) {
            mock_task* t = tasks[static_cast<std::size_t>(i)];
            bool join = c.handle == handle_mode::join_then_drop ||
                        (c.handle == handle_mode::drop_at_random && (rng() & 1) != 0);
            if (join && t->st.set_join_waker()) {
                while (!t->joined.load(std::memory_order_acquire)) std::this_thread::yield();
            }
            if (join) {
                EXPECT_TRUE(t->result_alive);  // COMPLETE (acquire) or the join flag orders it
            }
            crew::detail::join_drop d = t->st.unset_join_interested();
            if (join) {
                EXPECT_TRUE(d.drop_output);
            }
            if (d.drop_output) t->destroy_result();
            if (t->st.ref_dec()) delete t;
        }
    });
    std::atomic<bool> all_done{false};
    for (int s = 0; s < c.storm; ++s)
        threads.emplace_back([&] {  // wake storms while the tasks run: never two runs at once
            // A storm waker holds no reference of its own: the test's extra one (dropped after the
            // storm) keeps every task alive meanwhile.
            while (!all_done.load(std::memory_order_acquire)) {
                for (mock_task* t : tasks) rt.wake(t, false);
                std::this_thread::yield();  // two cores: let the workers run too
            }
        });
    if (c.cancel)
        threads.emplace_back([&] {
            std::mt19937_64 rng(seed * 3 + 1);
            for (mock_task* t : tasks) {
                if ((rng() & 3) == 0) std::this_thread::yield();
                rt.cancel(t);
                if (t->st.ref_dec()) delete t;  // the canceller's reference
            }
        });
    crew_test::watchdog dog(std::chrono::seconds(120));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (rt.completed() < n && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    EXPECT_EQ(rt.completed(), n) << "a task never completed: a lost wake";
    all_done.store(true, std::memory_order_release);
    for (auto& t : threads) t.join();
    if (c.storm > 0)
        for (mock_task* t : tasks)
            if (t->st.ref_dec()) delete t;
    rt.stop();
    EXPECT_TRUE(rt.queue_empty());
    EXPECT_EQ(g_frees.load() - freed_before, n) << "frames freed != frames made";
    EXPECT_EQ(g_results_destroyed.load() - destroyed_before, n) << "results destroyed != results made";
}

class task_state_race : public ::testing::TestWithParam<int> {};

std::uint64_t race_seed() {
    std::uint64_t s = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
    std::printf("[ seed     ] %llu\n", static_cast<unsigned long long>(s));
    return s;
}

int rounds() { return static_cast<int>(crew_test::scaled(20)); }

// Lost wake: a message sent while the task runs (after its run consumed the earlier ones) must
// give another run; the task needs every message, so a lost wake leaves it unfinished.
TEST_P(task_state_race, lost_wake) {
    const std::uint64_t seed = race_seed();
    race_config c;
    c.senders = 3;
    c.msgs = 20;
    for (int r = 0; r < rounds(); ++r) run_race(c, GetParam(), seed + static_cast<std::uint64_t>(r));
}

// Wake after completion: the task completes after half the messages; the rest wake a finished
// task (no-op) and the senders' by-value wakes free it when they are the last.
TEST_P(task_state_race, wake_after_completion) {
    const std::uint64_t seed = race_seed();
    race_config c;
    c.senders = 3;
    c.msgs = 10;
    c.consume_share = 0.5;
    c.handle = handle_mode::drop_at_once;
    for (int r = 0; r < rounds(); ++r) run_race(c, GetParam(), seed + static_cast<std::uint64_t>(r));
}

// Cancel against wake: every task is cancelled at a random moment while senders wake it.
TEST_P(task_state_race, cancel_against_wake) {
    const std::uint64_t seed = race_seed();
    race_config c;
    c.cancel = true;
    c.msgs = 10;
    for (int r = 0; r < rounds(); ++r) run_race(c, GetParam(), seed + static_cast<std::uint64_t>(r));
}

// Handles dropped before and after completion (joined through the waker slot).
TEST_P(task_state_race, handle_dropped_before_or_after_completion) {
    const std::uint64_t seed = race_seed();
    race_config c;
    for (handle_mode h : {handle_mode::drop_at_once, handle_mode::join_then_drop, handle_mode::drop_at_random}) {
        c.handle = h;
        for (int r = 0; r < rounds(); ++r) run_race(c, GetParam(), seed + static_cast<std::uint64_t>(r));
    }
}

// A parent freed while a sibling completes: two children complete on different workers and
// each wakes the parent by value; the parent completes on the second message, and whichever
// reference is last frees it (ASan: nobody touches it after).
TEST_P(task_state_race, frame_freed_while_a_sibling_completes) {
    const std::uint64_t seed = race_seed();
    race_config c;
    c.tasks = 300;
    c.siblings = true;
    c.msgs = 2;
    for (int r = 0; r < rounds(); ++r) run_race(c, GetParam(), seed + static_cast<std::uint64_t>(r));
}

// Double resume: wake storms from several threads while the tasks run; a second concurrent run
// fails in run() at once.
TEST_P(task_state_race, double_resume_under_a_wake_storm) {
    const std::uint64_t seed = race_seed();
    race_config c;
    c.tasks = 64;
    c.storm = 2;
    c.msgs = 10;
    for (int r = 0; r < (rounds() + 3) / 4; ++r) run_race(c, GetParam(), seed + static_cast<std::uint64_t>(r));
}

INSTANTIATE_TEST_SUITE_P(workers, task_state_race, ::testing::Values(1, 2, 4, 8));

}  // namespace
