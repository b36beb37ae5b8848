// tests/edge/child.hpp -- run a scenario in a child process and look at how it ended, with a
// watchdog: a child that hangs is killed and reported, so a regression fails instead of stalling.
//
//   child_result r = run_helper({"static_destructor"});          // fork + exec crew_edge_child
//   int status = fork_and_wait([] { ...; return 0; });           // fork only; the lambda's value is
//                                                                // the child's exit status (_exit)
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#ifndef CREW_EDGE_CHILD
#error "CREW_EDGE_CHILD (the path of crew_edge_child) must be defined by the build"
#endif

namespace edge {

inline constexpr std::chrono::seconds child_limit{60};

struct child_result {
    bool timed_out = false;
    int status = -1;  // raw waitpid status
    std::string output;  // stdout and stderr, interleaved

    bool exited() const { return !timed_out && WIFEXITED(status); }
    int exit_code() const { return exited() ? WEXITSTATUS(status) : -1; }
    bool signalled() const { return !timed_out && WIFSIGNALED(status); }
    std::string describe() const {
        std::string s = timed_out ? "timed out (killed)"
                        : WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                        : WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                              : "status " + std::to_string(status);
        return s + "; output:\n" + output;
    }
};

// Reap `pid`, killing it when it is still running at `deadline`.
inline void reap(pid_t pid, std::chrono::steady_clock::time_point deadline, child_result& r) {
    for (;;) {
        pid_t got = waitpid(pid, &r.status, WNOHANG);
        if (got == pid) return;
        if (got < 0) return;
        if (std::chrono::steady_clock::now() >= deadline) {
            r.timed_out = true;
            kill(pid, SIGKILL);
            waitpid(pid, &r.status, 0);
            return;
        }
        usleep(2000);
    }
}

// fork + exec the helper with `args`; `env` entries ("NAME=value") are added to the environment.
inline child_result run_helper(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    child_result r;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        r.output = "pipe failed";
        return r;
    }
    std::fflush(nullptr);
    const auto deadline = std::chrono::steady_clock::now() + child_limit;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
        std::vector<char*> argv;
        std::string path = CREW_EDGE_CHILD;
        argv.push_back(path.data());
        std::vector<std::string> copy = args;
        for (auto& a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(path.c_str(), argv.data());
        _exit(127);
    }
    close(fds[1]);
    char buffer[4096];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{fds[0], POLLIN, 0};
        int ready = poll(&p, 1, static_cast<int>(left.count()));
        if (ready <= 0) break;
        ssize_t n = read(fds[0], buffer, sizeof buffer);
        if (n <= 0) break;  // EOF: every copy of the write end is closed
        r.output.append(buffer, static_cast<std::size_t>(n));
    }
    close(fds[0]);
    reap(pid, deadline, r);
    return r;
}

// fork only: the child runs `body` and _exits with its value (an escaping exception: status 99).
inline child_result fork_and_wait(const std::function<int()>& body) {
    child_result r;
    std::fflush(nullptr);
    const auto deadline = std::chrono::steady_clock::now() + child_limit;
    pid_t pid = fork();
    if (pid == 0) {
        int code = 99;
        try {
            code = body();
        } catch (...) {
        }
        _exit(code);
    }
    if (pid < 0) {
        r.output = "fork failed";
        return r;
    }
    reap(pid, deadline, r);
    return r;
}

}  // namespace edge
