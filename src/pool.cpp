// crew::pool, the default pool, and the cold half of join (task_group's is in task_group.cpp).
#include "crew/pool.hpp"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "crew/join.hpp"

namespace crew {

namespace {

detail::registry_config make_config(pool_options options) {
    std::size_t n = options.threads.value_or(default_concurrency());
    if (n == 0) throw std::invalid_argument("crew::pool: a pool needs at least one worker thread");
    if (n > detail::parking::max_workers)
        throw std::invalid_argument("crew::pool: at most " + std::to_string(detail::parking::max_workers) +
                                    " worker threads, asked for " + std::to_string(n));
    return {static_cast<unsigned>(n), std::move(options.on_unhandled_exception), options.stack_size,
            std::move(options.name)};
}

pool_options options_from_environment() {
    pool_options options;
    const char* text = std::getenv("CREW_NUM_THREADS");
    if (text == nullptr || *text == '\0') return options;
    char* end = nullptr;
    errno = 0;
    long long n = std::strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0' || n < 1 || n > static_cast<long long>(detail::parking::max_workers))
        throw std::invalid_argument(std::string("crew: CREW_NUM_THREADS must be a whole number from 1 to ") +
                                    std::to_string(detail::parking::max_workers) + ", got '" + text + "'");
    options.threads = static_cast<std::size_t>(n);
    return options;
}

}  // namespace

std::size_t default_concurrency() noexcept { return detail::os::usable_cpus(); }

pool::pool() : pool(pool_options{}) {}

pool::pool(std::size_t threads) : pool([threads] {
      pool_options options;
      options.threads = threads;
      return options;
  }()) {}

pool::pool(pool_options options) : registry_(std::make_unique<detail::registry>(make_config(std::move(options)))) {}

pool::~pool() = default;

pool& default_pool() {
    static pool instance(options_from_environment());
    return instance;
}

namespace detail {

registry& registry_of(const pool& p) noexcept { return *p.registry_; }

registry& current_registry() {
    if (worker* w = current_worker) return w->owner();
    return registry_of(default_pool());
}

void check_default_pool_environment() {
    // A static initialised by an exception is tried again next time; success is remembered.
    static const bool valid = (options_from_environment(), true);
    (void)valid;
}

bool join_reclaim_cold(worker& w, task* job, completion& done, task* popped) {
    while (popped != nullptr) {
        w.execute(popped);
        popped = w.pop();
        if (popped == job) return true;
    }
    // The deque is empty, so the job was stolen. f has finished and everything it pushed was
    // taken, so nothing of ours is below: wait for the thief, running other work meanwhile.
    w.wait_until(done);
    return false;
}

}  // namespace detail

}  // namespace crew
