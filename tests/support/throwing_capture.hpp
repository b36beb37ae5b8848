// tests/support/throwing_capture.hpp -- captured state whose destructor throws.
#pragma once

#include <stdexcept>
#include <utility>

namespace crew_test {

// Throws std::runtime_error("destructor") when destroyed, but only once armed: moving disarms the
// source, so moves and the caller's moved-from copy stay quiet and exactly one destructor throws.
struct throws_on_destruction {
    bool armed = true;
    throws_on_destruction() = default;
    throws_on_destruction(throws_on_destruction&& o) noexcept : armed(std::exchange(o.armed, false)) {}
    ~throws_on_destruction() noexcept(false) {
        if (armed) throw std::runtime_error("destructor");
    }
};

}  // namespace crew_test
