// tests/async/primitives_common.hpp -- shared helpers of the channel / async_mutex / event tests.
#pragma once

#include <crew/async.hpp>
#include <crew/async/yield.hpp>
#include <crew/async/async_mutex.hpp>
#include <crew/async/channel.hpp>
#include <crew/async/event.hpp>
#include <crew/crew.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace prim_test {

using namespace std::chrono_literals;

// Spin (politely) until pred() holds; fails the test after `limit`.
template <class P>
bool wait_until(P pred, std::chrono::seconds limit = std::chrono::seconds(30)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::yield();
    }
    return true;
}

// Set on a thread while it is inside a releasing call (set(), close(), unlock()). A waiter that
// resumes and finds it set on its own thread was resumed on the releaser's stack (recursion).
inline thread_local bool inside_release = false;

struct release_scope {
    release_scope() noexcept { inside_release = true; }
    ~release_scope() { inside_release = false; }
    release_scope(const release_scope&) = delete;
    release_scope& operator=(const release_scope&) = delete;
};

}  // namespace prim_test
