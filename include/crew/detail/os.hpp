// crew/detail/os.hpp -- every operating-system call crew makes, behind a few functions.
// Linux is the first target; a port implements src/os.cpp again and nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace crew::detail::os {

inline constexpr int wake_everyone = 0x7fffffff;

// Sleep while the 32-bit word at `addr` equals `expected` (returns early on wakes and signals).
void futex_wait(const void* addr, std::uint32_t expected) noexcept;
// As futex_wait, for at most `timeout_ns` nanoseconds (relative, CLOCK_MONOTONIC; <= 0 returns at
// once). Returns early on wakes, signals and spuriously: callers re-check their word and deadline.
void futex_wait_for(const void* addr, std::uint32_t expected, std::int64_t timeout_ns) noexcept;
// Wake up to `count` threads sleeping on `addr`. Calling it on an address whose object has since
// been destroyed is harmless: at worst a sleeper elsewhere wakes spuriously and re-checks.
void futex_wake(const void* addr, int count) noexcept;

// The number of CPUs this process may use: the affinity mask, capped by a cgroup (v1 or v2) CPU
// quota, at least 1.
unsigned usable_cpus() noexcept;

// The CPUs of the process's affinity mask (its main thread's, as taskset sets it; the calling
// thread's when that cannot be read), in increasing order; empty when neither can be read.
std::vector<int> process_cpus();
// Restrict the calling thread to `cpu`. Returns false (and changes nothing) when the system refuses.
bool pin_current_thread(int cpu) noexcept;

// A joinable OS thread with an explicit stack size.
class thread {
public:
    using entry_fn = void (*)(void*);
    thread() = default;
    thread(const thread&) = delete;
    thread& operator=(const thread&) = delete;
    // Throws std::system_error when the OS refuses to create the thread.
    void start(entry_fn fn, void* arg, std::size_t stack_bytes);
    void join() noexcept;
    bool joinable() const noexcept { return started_; }
    bool is_current() const noexcept;

private:
    unsigned long handle_ = 0;
    bool started_ = false;
};

void set_current_thread_name(const std::string& name) noexcept;

// Register fork handlers (pthread_atfork): `prepare` runs in the forking thread before fork(),
// `parent` and `child` after it, in the parent and in the (single-threaded) child.
void at_fork(void (*prepare)(), void (*parent)(), void (*child)()) noexcept;

}  // namespace crew::detail::os
