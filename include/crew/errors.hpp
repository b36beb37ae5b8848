// crew/errors.hpp -- the exceptions crew itself throws.
#pragma once

#include <stdexcept>

namespace crew {

// Work was submitted to a pool that is shutting down (its destructor has started). The work was
// not queued and nothing of it ran; the caller still owns whatever it meant to hand over.
class pool_closed_error : public std::runtime_error {
public:
    pool_closed_error() : std::runtime_error("crew: the pool is shutting down and accepts no new work") {}
};

// A coroutine task was cancelled (crew/async.hpp): thrown by the crew co_await the task was
// suspended in (or about to suspend in) after join_handle::cancel(), and by co_await/get() on the
// handle of a task that ended cancelled (it let the exception escape, or the pool shut down while
// it was suspended).
class cancelled_error : public std::runtime_error {
public:
    cancelled_error() : std::runtime_error("crew: the coroutine task was cancelled") {}
};

// crew::timeout(d, task): the task did not finish within d (it was cancelled and awaited first).
class timeout_error : public std::runtime_error {
public:
    timeout_error() : std::runtime_error("crew: the operation timed out") {}
};

// The program used crew in a way that cannot work, e.g. a task waiting for the group it belongs
// to (it would wait for itself). Thrown before anything is changed.
class usage_error : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

}  // namespace crew
