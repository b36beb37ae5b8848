// tests/support/child_probe.hpp -- tells whether a task's closure ran or was dropped unrun.
//
//   crew_test::child_tally tally;
//   g.run([p = tally.probe()]() mutable { p.ran(); ... });
//   ... g.wait(); EXPECT_EQ(tally.ran + tally.dropped, submitted);
//
// A probe counts, when its last live copy is destroyed, as `dropped` unless ran() was called on
// it. Moves hand the duty over (the moved-from probe counts nothing), so copies made on the way
// into the task do not count.
#pragma once

#include <atomic>
#include <utility>

namespace crew_test {

struct child_tally {
    std::atomic<long> ran{0};
    std::atomic<long> dropped{0};
    std::atomic<long> ran_twice{0};

    struct probe_t {
        child_tally* tally;
        bool has_run = false;
        explicit probe_t(child_tally* t) noexcept : tally(t) {}
        probe_t(probe_t&& o) noexcept : tally(std::exchange(o.tally, nullptr)), has_run(o.has_run) {}
        probe_t(const probe_t&) = delete;
        probe_t& operator=(const probe_t&) = delete;
        probe_t& operator=(probe_t&&) = delete;
        ~probe_t() {
            if (tally != nullptr && !has_run) tally->dropped.fetch_add(1);
        }
        void ran() noexcept {
            if (has_run) tally->ran_twice.fetch_add(1);
            has_run = true;
            tally->ran.fetch_add(1);
        }
    };

    probe_t probe() noexcept { return probe_t(this); }
};

}  // namespace crew_test
