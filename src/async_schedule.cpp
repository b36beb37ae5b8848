// The async seam (crew/detail/async_schedule.hpp): where a coroutine task is queued, and where
// its frame memory comes from. The queues themselves are the worker's (src/worker.cpp: ring,
// LIFO slot, search order); the frame cache is crew/detail/frame_cache.hpp.
#include "crew/detail/async_schedule.hpp"

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

static_assert([] {
    for (std::size_t total = 1; total <= frame_max_block; ++total)
        if (frame_class_fast(total) != frame_class_of(total)) return false;
    return true;
}());

frame_cache* frames_of(worker* w) noexcept { return w == nullptr ? nullptr : &w->frames(); }

void* allocate_frame_large(std::size_t size) { return ::operator new(size); }

void* allocate_frame_outside(unsigned c) { return frame_cache::stamp(new_frame_block(c), nullptr, c); }

void free_frame_large(void* frame) noexcept { ::operator delete(frame); }

// A block that is not this worker's own (free_frame's fast path took those): an ownerless one
// (allocated outside every worker) joins this worker's cache, or goes back to the heap outside
// every worker; another worker's goes back to its owner's depot.
void free_frame_cold(frame_header* h, unsigned c) noexcept {
    frame_depot* const owner = h->owner;
    frame_cache* const fc = current_frames;
    if (owner == nullptr) {
        if (fc != nullptr) fc->put(h, c);  // any cache may adopt it (it has the class size)
        else delete_frame_block(h);        // allocated and freed outside every worker
    } else {
        owner->remote.push(new (h) frame_block{nullptr, c});  // back to its owner
    }
}

}  // namespace crew::detail
