// The baseline of the async seam (crew/detail/async_schedule.hpp): every coroutine task goes
// through the pool's ordinary schedule() (the worker's deque, or the injector from outside), and
// frames come from the heap. The async scheduler replaces both with the ring, the LIFO slot and
// the frame cache.
#include "crew/detail/async_schedule.hpp"

#include <new>

#include "crew/detail/registry.hpp"

namespace crew::detail {

bool schedule_async(registry& r, task* t, async_wake) { return r.schedule(t); }

void* allocate_frame(std::size_t size) { return ::operator new(size); }

void free_frame(void* frame, std::size_t) noexcept { ::operator delete(frame); }

}  // namespace crew::detail
