// Linux implementation of crew/detail/os.hpp.
#include "crew/detail/os.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <fstream>
#include <sstream>
#include <system_error>

namespace crew::detail::os {

void futex_wait(const void* addr, std::uint32_t expected) noexcept {
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wait_for(const void* addr, std::uint32_t expected, std::int64_t timeout_ns) noexcept {
    if (timeout_ns <= 0) return;
    timespec relative{};
    relative.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000);
    relative.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000);
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, &relative, nullptr, 0);
}

void futex_wake(const void* addr, int count) noexcept {
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

namespace {

unsigned affinity_cpus() noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        return n > 0 ? static_cast<unsigned>(n) : 1u;
    }
    int n = CPU_COUNT(&set);
    return n > 0 ? static_cast<unsigned>(n) : 1u;
}

// The cgroup path of this process ("/" when unknown), from /proc/self/cgroup.
std::string own_cgroup(bool v2) {
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {
        // v2: "0::/path"; v1: "N:cpu,cpuacct:/path"
        auto first = line.find(':');
        auto second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) continue;
        std::string controllers = line.substr(first + 1, second - first - 1);
        bool is_v2_line = controllers.empty();
        bool has_cpu = controllers.find("cpu") != std::string::npos;
        if ((v2 && is_v2_line) || (!v2 && has_cpu && !is_v2_line)) return line.substr(second + 1);
    }
    return "/";
}

// CPUs allowed by a quota/period pair, rounded up; 0 when there is no quota.
unsigned quota_cpus(double quota, double period) {
    if (quota <= 0 || period <= 0) return 0;
    return static_cast<unsigned>(std::ceil(quota / period));
}

unsigned cgroup_v2_cpus() {
    for (std::string dir : {"/sys/fs/cgroup" + own_cgroup(true), std::string("/sys/fs/cgroup")}) {
        std::ifstream in(dir + "/cpu.max");
        std::string quota;
        double period = 0;
        if (!(in >> quota >> period)) continue;
        if (quota == "max") return 0;
        return quota_cpus(std::stod(quota), period);
    }
    return 0;
}

unsigned cgroup_v1_cpus() {
    for (std::string dir : {"/sys/fs/cgroup/cpu" + own_cgroup(false), std::string("/sys/fs/cgroup/cpu")}) {
        std::ifstream q(dir + "/cpu.cfs_quota_us"), p(dir + "/cpu.cfs_period_us");
        double quota = 0, period = 0;
        if (q >> quota && p >> period) return quota_cpus(quota, period);
    }
    return 0;
}

struct start_block {
    thread::entry_fn fn;
    void* arg;
};

extern "C" void* crew_thread_entry(void* p) {
    start_block block = *static_cast<start_block*>(p);
    delete static_cast<start_block*>(p);
    block.fn(block.arg);
    return nullptr;
}

}  // namespace

unsigned usable_cpus() noexcept {
    unsigned n = affinity_cpus();
    try {
        unsigned quota = cgroup_v2_cpus();
        if (quota == 0) quota = cgroup_v1_cpus();
        if (quota != 0 && quota < n) n = quota;
    } catch (...) {
        // An unreadable or malformed cgroup file means "no quota".
    }
    return n == 0 ? 1u : n;
}

std::vector<int> process_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(getpid(), sizeof(set), &set) != 0 && sched_getaffinity(0, sizeof(set), &set) != 0)
        return {};
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    return cpus;
}

bool pin_current_thread(int cpu) noexcept {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

void thread::start(entry_fn fn, void* arg, std::size_t stack_bytes) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (stack_bytes != 0) pthread_attr_setstacksize(&attr, stack_bytes);
    auto* block = new start_block{fn, arg};
    pthread_t handle;
    int rc = pthread_create(&handle, &attr, crew_thread_entry, block);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        delete block;
        throw std::system_error(rc, std::generic_category(), "crew: cannot start a worker thread");
    }
    handle_ = handle;
    started_ = true;
}

void thread::join() noexcept {
    if (!started_) return;
    pthread_join(static_cast<pthread_t>(handle_), nullptr);
    started_ = false;
}

bool thread::is_current() const noexcept {
    return started_ && pthread_equal(static_cast<pthread_t>(handle_), pthread_self());
}

void set_current_thread_name(const std::string& name) noexcept {
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

void at_fork(void (*prepare)(), void (*parent)(), void (*child)()) noexcept {
    pthread_atfork(prepare, parent, child);
}

}  // namespace crew::detail::os
