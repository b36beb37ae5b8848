// bench/baselines/baseline_task.hpp -- the task records both seed baselines share.
//
// The baselines are written the way a careful programmer would write the seeds' two designs, so
// that they measure the designs and not sloppiness: a join's second half lives on the joiner's
// stack (no allocation), queues hold plain pointers, and sleeping workers are woken only when some
// are asleep. Exceptions are not propagated (the benchmark bodies never throw).
#pragma once

#include <atomic>
#include <utility>

namespace crew_bench::baseline {

struct task {
    void (*execute)(task*);
};

// A closure on the heap that deletes itself after running (spawn, outside submission).
template <class F>
struct heap_task final : task {
    F fn;
    explicit heap_task(F f) : task{&run}, fn(std::move(f)) {}
    static void run(task* t) {
        auto* self = static_cast<heap_task*>(t);
        self->fn();
        delete self;
    }
};

template <class F>
task* make_heap_task(F&& f) {
    return new heap_task<std::decay_t<F>>(std::forward<F>(f));
}

// The second half of a join, on the joiner's stack.
template <class G>
struct stack_job final : task {
    G* fn;
    std::atomic<bool> done{false};
    explicit stack_job(G& g) : task{&run}, fn(&g) {}
    static void run(task* t) {
        auto* self = static_cast<stack_job*>(t);
        (*self->fn)();
        // release: the joiner's acquire load of `done` sees the job's effects (its result).
        self->done.store(true, std::memory_order_release);
    }
};

}  // namespace crew_bench::baseline
