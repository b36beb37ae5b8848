// The async seam (crew/detail/async_schedule.hpp): where a coroutine task is queued, and where
// its frame memory comes from. The queues themselves are the worker's (src/worker.cpp: ring,
// LIFO slot, search order); the frame cache is crew/detail/frame_cache.hpp.
#include "crew/detail/async_schedule.hpp"

#include <bit>
#include <mutex>
#include <new>

#include "crew/detail/frame_cache.hpp"
#include "crew/detail/registry.hpp"

// Where crew::spawn from a coroutine task goes (async_wake::spawn_task). 1 (the default, session
// 12): the spawning worker's LIFO slot, Tokio's shape (a spawn+await leaves no stale entry in the
// ring). 0: the back of the ring, as before session 12 (for side-by-side measurements).
#ifndef CREW_ASYNC_SPAWN_TO_LIFO
#define CREW_ASYNC_SPAWN_TO_LIFO 1
#endif

namespace crew::detail {

namespace {

constexpr bool spawn_to_lifo = CREW_ASYNC_SPAWN_TO_LIFO != 0;

// From outside the pool's workers. Out of line: inlined, the injector's lock and notify made the
// worker path (a spawn or a wake, once or twice per task run) save four registers on every call.
[[gnu::noinline]] bool inject_async(registry& r, task* t) { return r.inject(t); }

}  // namespace

bool schedule_async(registry& r, task* t, async_wake how) {
    worker* w = current_worker;
    if (w != nullptr && &w->owner() == &r) [[likely]] {
        switch (how) {
            case async_wake::wake:
                w->wake_async(t, false);
                break;
            case async_wake::wake_at_end:
                w->wake_async(t, true);
                break;
            case async_wake::yield:
                w->yield_async(t);
                break;
            case async_wake::spawn_task:
                // From a coroutine task's run: the LIFO slot, with a wake's notify (the spawner
                // goes on running). From a worker outside every run: the ring, as spawn.
                if (spawn_to_lifo && current_async_task != nullptr)
                    w->wake_async(t, false);
                else
                    w->push_async(t);
                break;
            case async_wake::spawn:
            default:
                w->push_async(t);
                break;
        }
        return true;  // a worker's own queues: run before it leaves, even during shutdown
    }
    return inject_async(r, t);  // the injector + notify_one; false once the pool refuses work
}

// ---- frames ----

namespace {

// The depot recycling list (see frame_cache.hpp): depots are never freed.
std::mutex depot_mutex;
frame_depot* free_depots = nullptr;  // guarded by depot_mutex

}  // namespace

frame_depot* acquire_frame_depot() {
    {
        std::lock_guard lock(depot_mutex);
        if (frame_depot* d = free_depots) {
            free_depots = d->next_free;
            d->next_free = nullptr;
            return d;
        }
    }
    return new frame_depot();
}

void release_frame_depot(frame_depot* d) noexcept {
    std::lock_guard lock(depot_mutex);
    d->next_free = free_depots;
    free_depots = d;
}

// frame_class_of without its loop (allocate_frame runs once per spawn): the classes double from
// frame_min_block, so the class of `total` is the bit width of (total - 1) / frame_min_block.
constexpr unsigned class_of(std::size_t total) noexcept {
    return static_cast<unsigned>(std::bit_width((total - 1) / frame_min_block));
}
static_assert([] {
    for (std::size_t total = 1; total <= frame_max_block; ++total)
        if (class_of(total) != frame_class_of(total)) return false;
    return true;
}());

namespace {

// A frame allocated outside every worker. Out of line, so the worker's path (once per spawn) is a
// leaf that saves no registers.
[[gnu::noinline]] void* allocate_frame_outside(unsigned c) {
    return frame_cache::stamp(::operator new(frame_block_size(c)), nullptr, c);
}

}  // namespace

void* allocate_frame(std::size_t size) {
    const std::size_t total = size + frame_header_size;
    if (total > frame_max_block || total < size) return ::operator new(size);
    const unsigned c = class_of(total);
    if (worker* w = current_worker) return w->frames().allocate(c);
    return allocate_frame_outside(c);
}

void free_frame(void* frame, std::size_t size) noexcept {
    if (frame == nullptr) return;
    const std::size_t total = size + frame_header_size;
    if (total > frame_max_block || total < size) {
        ::operator delete(frame);
        return;
    }
    frame_header* h = frame_cache::header_of(frame);
    frame_depot* owner = h->owner;
    const unsigned c = h->size_class;
    worker* w = current_worker;
    if (w != nullptr && (owner == nullptr || owner == w->frames().depot())) {
        w->frames().put(h, c);  // ours, or ownerless (any cache may adopt it)
    } else if (owner != nullptr) {
        owner->remote.push(new (h) frame_block{nullptr, c});  // back to its owner
    } else {
        ::operator delete(h);  // allocated and freed outside every worker
    }
}

}  // namespace crew::detail
