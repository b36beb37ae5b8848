// tests/support/watchdog.hpp -- a hang fails the test with a message (and every thread's stack)
// instead of stalling CI.
//
//   TEST(x, y) { crew_test::watchdog dog(std::chrono::seconds(60)); ... }
//
// On expiry it prints which test hung, asks gdb (when installed) for a backtrace of every thread of
// this process, and exits with status 124.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace crew_test {

inline void dump_all_stacks() {
    std::string cmd = "command -v gdb >/dev/null 2>&1 && gdb -p " + std::to_string(getpid()) +
                      " -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' 2>/dev/null 1>&2";
    int rc = std::system(cmd.c_str());
    (void)rc;
}

class watchdog {
public:
    explicit watchdog(std::chrono::seconds limit) {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        name_ = info ? std::string(info->test_suite_name()) + "." + info->name() : "(no test)";
        thread_ = std::thread([this, limit] {
            std::unique_lock lock(mutex_);
            if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
                std::fprintf(stderr, "\nwatchdog: %s did not finish within %lld s; stacks follow\n", name_.c_str(),
                             static_cast<long long>(limit.count()));
                std::fflush(stderr);
                dump_all_stacks();
                std::fflush(stderr);
                std::_Exit(124);
            }
        });
    }
    watchdog(const watchdog&) = delete;
    watchdog& operator=(const watchdog&) = delete;
    ~watchdog() {
        {
            std::lock_guard lock(mutex_);
            done_ = true;
        }
        cv_.notify_one();
        thread_.join();
    }

private:
    std::string name_;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

// Scale for iteration counts: sanitizer builds run the same scenarios with fewer repetitions.
inline long scaled(long n) {
    static const long divisor = [] {
        const char* s = std::getenv("CREW_TEST_SCALE_DOWN");
        long d = s ? std::atol(s) : 1;
        return d > 0 ? d : 1;
    }();
    return n / divisor > 0 ? n / divisor : 1;
}

}  // namespace crew_test
