// tests/support/watchdog.hpp -- a hang fails the test with a message (and every thread's stack)
// instead of stalling CI.
//
//   TEST(x, y) { crew_test::watchdog dog(std::chrono::seconds(60)); ... }
//
// On expiry it prints which test hung and every thread's stack, then exits with status 124. Stacks
// come from each thread itself (a signal makes it print its backtrace(); link with -rdynamic for
// function names, else `addr2line -e <binary> <offset>` resolves them), which works where ptrace is
// forbidden (containers), and then from gdb when it is installed and allowed to attach.
#pragma once

#include <dirent.h>
#include <execinfo.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace crew_test {

namespace detail {

inline std::atomic<int> stacks_printed{0};

// Runs on the signalled thread: print its own stack (write(2) and backtrace_symbols_fd do not
// allocate; backtrace() was called once before, so its lazy loading is done).
inline void print_own_stack(int) {
    void* frames[64];
    int n = backtrace(frames, 64);
    char header[64];
    int len = std::snprintf(header, sizeof header, "\n--- thread %ld ---\n", static_cast<long>(syscall(SYS_gettid)));
    if (len > 0) (void)!write(2, header, static_cast<std::size_t>(len));
    backtrace_symbols_fd(frames, n, 2);
    stacks_printed.fetch_add(1);
}

inline int stack_signal() { return SIGRTMIN + 5; }

// Asks every other thread of the process, one at a time, to print its stack.
inline void dump_stacks_in_process() {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = &print_own_stack;
    sigemptyset(&sa.sa_mask);
    sigaction(stack_signal(), &sa, nullptr);
    const long self = syscall(SYS_gettid);
    DIR* dir = opendir("/proc/self/task");
    if (dir == nullptr) return;
    while (dirent* e = readdir(dir)) {
        const long tid = std::atol(e->d_name);
        if (tid <= 0 || tid == self) continue;
        const int before = stacks_printed.load();
        if (syscall(SYS_tgkill, static_cast<long>(getpid()), tid, stack_signal()) != 0) continue;
        for (int i = 0; i < 200 && stacks_printed.load() == before; ++i) usleep(1000);  // one at a time
    }
    closedir(dir);
}

}  // namespace detail

inline void dump_all_stacks() {
    detail::dump_stacks_in_process();
    std::fflush(stderr);
    // Where Yama restricts ptrace to ancestors, let our own child (gdb) attach to us.
#if defined(PR_SET_PTRACER)
    (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    std::string cmd = "command -v gdb >/dev/null 2>&1 && gdb -p " + std::to_string(getpid()) +
                      " -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' 2>/dev/null 1>&2";
    int rc = std::system(cmd.c_str());
    (void)rc;
}

class watchdog {
public:
    explicit watchdog(std::chrono::seconds limit) {
        void* warm[1];
        (void)backtrace(warm, 1);  // loads the unwinder now, not inside a signal handler later
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
