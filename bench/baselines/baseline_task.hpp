// bench/baselines/baseline_task.hpp -- the task records both seed baselines share.
//
// The baselines are written the way a careful programmer would write the seeds' two designs, so
// that they measure the designs and not sloppiness: a join's second half lives on the joiner's
// stack (no allocation), queues hold plain pointers, and sleeping workers are woken only when some
// are asleep. Exceptions are not propagated (the benchmark bodies never throw).
#pragma once

#include <pthread.h>

#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
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

// A joinable thread with a 64 MiB stack, like crew's workers: a joiner that helps while it waits
// nests the tasks it runs on its own stack, and deep, unbalanced trees (uts) need the room.
class worker_thread {
public:
    explicit worker_thread(std::function<void()> body) : body_(std::make_unique<std::function<void()>>(std::move(body))) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, std::size_t{64} << 20);
        int rc = pthread_create(&id_, &attr, &entry, body_.get());
        pthread_attr_destroy(&attr);
        if (rc != 0) throw std::runtime_error("baseline pool: pthread_create failed");
    }
    worker_thread(worker_thread&& o) noexcept : id_(o.id_), body_(std::move(o.body_)) {}
    worker_thread(const worker_thread&) = delete;
    worker_thread& operator=(const worker_thread&) = delete;
    ~worker_thread() = default;
    void join() {
        if (body_) pthread_join(id_, nullptr);
    }

private:
    static void* entry(void* p) {
        (*static_cast<std::function<void()>*>(p))();
        return nullptr;
    }
    pthread_t id_{};
    std::unique_ptr<std::function<void()>> body_;
};

}  // namespace crew_bench::baseline
