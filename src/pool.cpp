// crew::pool, the default pool, and the cold half of join (task_group's is in task_group.cpp).
#include "crew/pool.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "crew/join.hpp"

namespace crew {

namespace {

void check_threads(std::optional<std::size_t> threads, const char* who) {
    if (!threads) return;
    if (*threads == 0) throw std::invalid_argument(std::string(who) + ": a pool needs at least one worker thread");
    if (*threads > max_threads)
        throw std::invalid_argument(std::string(who) + ": at most crew::max_threads (" + std::to_string(max_threads) +
                                    ") worker threads, asked for " + std::to_string(*threads));
}

detail::registry_config make_config(pool_options options) {
    static_assert(max_threads <= detail::parking::max_workers);
    check_threads(options.threads, "crew::pool");
    std::size_t n = options.threads.value_or(std::min(default_concurrency(), max_threads));
    return {static_cast<unsigned>(n),
            std::move(options.on_unhandled_exception),
            options.stack_size,
            std::move(options.name),
            std::move(options.on_thread_start),
            std::move(options.on_thread_stop),
            options.pin_threads,
            std::move(options.trace),
            options.trace_events};
}

// `options` with its size taken from CREW_NUM_THREADS when the code left it empty.
pool_options options_from_environment(pool_options options = {}) {
    if (options.threads) return options;  // set in code: the environment is not read
    const char* text = std::getenv("CREW_NUM_THREADS");
    if (text == nullptr) return options;
    // Surrounding whitespace is ignored on both sides; empty or blank means unset.
    std::string_view digits(text);
    auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    while (!digits.empty() && blank(digits.front())) digits.remove_prefix(1);
    while (!digits.empty() && blank(digits.back())) digits.remove_suffix(1);
    if (digits.empty()) return options;
    std::size_t n = 0;
    bool ok = digits.size() <= 6;  // no overflow below; anything longer is out of range anyway
    for (char c : digits) {
        ok = ok && c >= '0' && c <= '9';
        n = n * 10 + static_cast<std::size_t>(c - '0');
    }
    if (!ok || n < 1 || n > max_threads)
        throw std::invalid_argument(std::string("crew: CREW_NUM_THREADS must be a whole number from 1 to ") +
                                    std::to_string(max_threads) + ", got '" + text + "'");
    options.threads = n;
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

// ---- the default pool and fork() ----
//
// The default pool is created with `new` on first use and never destroyed: a static object's
// destructor, an atexit handler or a task calling std::exit() may still use it, and process exit
// must not wait for detached work. The pointer stays reachable (LeakSanitizer stays quiet).

namespace {

// default_instance: null until the first use; written under default_mutex, read without it.
detail::std_atomics::atomic<pool*> default_instance{nullptr};
detail::std_atomics::mutex default_mutex;
// What configure_default_pool() asked for (guarded by default_mutex). Never destroyed: a static
// object's destructor may still create the default pool. Kept after the creation, for a fork()ed
// child's fresh default pool.
pool_options& configured_options() {
    static pool_options* options = new pool_options;
    return *options;
}

// The options the default pool is (or would be) created with; throws std::invalid_argument for a
// bad CREW_NUM_THREADS the configuration did not override. Call with default_mutex held.
pool_options default_options_locked() { return options_from_environment(configured_options()); }

// Default pools abandoned by fork() in this process's ancestors: kept reachable, never used.
pool* abandoned_defaults[64];
std::size_t abandoned_count = 0;

// fork() while another thread creates the default pool must not copy a half-made pool or a locked
// mutex into the child: the prepare handler holds default_mutex across the fork.
void fork_prepare() { default_mutex.lock(); }
void fork_parent() { default_mutex.unlock(); }
// The child has one thread, the forking one. The parent's workers do not exist here, so its pools
// are abandoned: the default pool starts afresh on first use; explicit pools refuse work
// (registry::forked_away); and if the forking thread was a worker, it is not one in the child.
void fork_child() {
    detail::set_current_worker(nullptr);
    detail::note_fork_in_child();
    // relaxed: the child is single-threaded until it starts a new pool.
    if (pool* old = default_instance.load(std::memory_order_relaxed)) {
        if (abandoned_count < std::size(abandoned_defaults)) abandoned_defaults[abandoned_count++] = old;
        default_instance.store(nullptr, std::memory_order_relaxed);
    }
    default_mutex.unlock();
}

void register_fork_handlers() {
    static const bool registered = [] {
        detail::os::at_fork(&fork_prepare, &fork_parent, &fork_child);
        return true;
    }();
    (void)registered;
}

pool& create_default_pool() {
    std::lock_guard lock(default_mutex);
    // relaxed: under default_mutex, which orders it after any earlier creation.
    if (pool* p = default_instance.load(std::memory_order_relaxed)) return *p;
    pool* p = new pool(default_options_locked());
    // release: pairs with the acquire load in default_pool(); a thread that sees the pointer sees
    // the finished pool.
    default_instance.store(p, std::memory_order_release);
    return *p;
}

}  // namespace

pool::pool(pool_options options) {
    register_fork_handlers();  // before the first thread exists, so every later fork() is seen
    registry_ = std::make_unique<detail::registry>(make_config(std::move(options)));
}

// In a forked child the registry frees its memory without joining (the threads are the parent's).
pool::~pool() = default;

void configure_default_pool(pool_options options) {
    check_threads(options.threads, "crew::configure_default_pool");
    register_fork_handlers();  // default_mutex must be held across any fork() from now on
    pool_options previous;  // destroyed after the unlock: its callables' destructors are user code
    std::lock_guard lock(default_mutex);
    // relaxed: under default_mutex, as every store of it.
    if (default_instance.load(std::memory_order_relaxed) != nullptr)
        throw usage_error(
            "crew::configure_default_pool: the default pool already exists (it is created by the first "
            "crew::join, spawn, task_group, algorithm or default_pool() call outside an explicit pool); "
            "configure it before that");
    previous = std::exchange(configured_options(), std::move(options));
}

pool& default_pool() {
    // acquire: pairs with the release store in create_default_pool().
    if (pool* p = default_instance.load(std::memory_order_acquire)) [[likely]] return *p;
    return create_default_pool();
}

std::size_t current_pool_size() { return detail::current_registry().size(); }

namespace detail {

registry& registry_of(const pool& p) noexcept { return *p.registry_; }

registry& current_registry() {
    if (worker* w = current_worker) return w->owner();
    return registry_of(default_pool());
}

void check_default_pool_environment() {
    // acquire: pairs with the release store in create_default_pool() (the pool exists: all is well).
    if (default_instance.load(std::memory_order_acquire) != nullptr) return;
    std::lock_guard lock(default_mutex);
    (void)default_options_locked();
}

// The outside spawner's chain: blocks taken from a depot (any pool's: every block is a plain
// ::operator new(block_size) block, so a chain taken from one pool may serve spawns into another).
// Holds at most one chain (depot_batch blocks); never receives frees (an outside thread frees to
// the heap); freed with the thread.
namespace {
struct outside_chain {
    task_block* head = nullptr;
    outside_chain() = default;
    outside_chain(const outside_chain&) = delete;
    outside_chain& operator=(const outside_chain&) = delete;
    ~outside_chain() { task_depot::free_chain(head); }
};
thread_local outside_chain outside_blocks;
}  // namespace

void* outside_task_block(task_depot& depot) {
    outside_chain& c = outside_blocks;
    if (c.head == nullptr) {
        c.head = depot.take();
        if (c.head == nullptr) return ::operator new(task_cache::block_size);
    }
    task_block* b = c.head;
    c.head = b->next;
    // A worker freed the next block last (its line is in that worker's cache): fetch it for
    // writing now, while this spawn goes on, rather than miss on it at the next one.
    if (c.head != nullptr) __builtin_prefetch(c.head, 1);
    return b;
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
