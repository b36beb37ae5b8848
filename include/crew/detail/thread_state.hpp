// crew/detail/thread_state.hpp -- what a fork point reads first: the thread's worker and measured strand.
//
// Three thread-locals, each a single %fs-relative load (initial-exec; fork_worker local-exec in a
// position-independent executable, see CREW_FORK_TLS_MODEL):
// - current_worker: the worker running on this thread, nullptr outside every pool;
// - ws_current: the crew::workspan strand measured on this thread, nullptr when none (or while it
//   waits at a fork point: detail/workspan_hooks.hpp);
// - fork_worker: current_worker when ws_current is nullptr, else nullptr. crew::join, fork_join and
//   task_group::run read only this word on their fast path (one load, one branch); everything else
//   (measuring, outside every pool) takes their cold path, which reads the other two.
// The invariant fork_worker == (ws_current == nullptr ? current_worker : nullptr) holds at every
// point where a fork may run: current_worker and ws_current are written only through the setters
// below, which write fork_worker as well.
#pragma once

// The fork points' thread-locals (fork_worker here, current_context in task.hpp; both inline, so
// defined in every translation unit that reads them): local-exec in a position-independent
// executable (its own TLS block: the offset is a constant in the load), initial-exec elsewhere (a
// shared library: the offset comes from the GOT). clang 14 already uses local-exec for them in a
// PIE; g++ 12 kept initial-exec, two instructions per load (the offset moved into a register
// first): fib through crew::join 68.0 -> 66.0 instructions per join with g++, clang's 59.6 unchanged
// (docs/BENCHMARKS.md, "Session 17: the fork's instructions"). A shared libcrew still reads the
// executable's copy (the dynamic linker binds its initial-exec reference to the executable's
// definition).
#if defined(__PIE__)
#define CREW_FORK_TLS_MODEL "local-exec"
#else
#define CREW_FORK_TLS_MODEL "initial-exec"
#endif

namespace crew::detail {

class worker;
struct ws_strand;
class frame_cache;

extern constinit thread_local worker* current_worker __attribute__((tls_model("initial-exec")));
inline constinit thread_local ws_strand* ws_current __attribute__((tls_model("initial-exec"))) = nullptr;
inline constinit thread_local worker* fork_worker __attribute__((tls_model(CREW_FORK_TLS_MODEL))) = nullptr;
// current_worker's frame cache (worker::frames()), nullptr outside every pool: the coroutine frame
// allocator's one load (async_schedule.hpp). frames_of(w): w's cache, nullptr for nullptr.
inline constinit thread_local frame_cache* current_frames __attribute__((tls_model("initial-exec"))) = nullptr;
frame_cache* frames_of(worker* w) noexcept;

// A worker thread entering (w) or leaving (nullptr) its pool, or a forked child dropping its
// parent's worker.
inline void set_current_worker(worker* w) noexcept {
    current_worker = w;
    fork_worker = ws_current == nullptr ? w : nullptr;
    current_frames = frames_of(w);
}

// A measured strand starting, pausing (nullptr) or resuming on this thread.
inline void set_ws_current(ws_strand* s) noexcept {
    ws_current = s;
    fork_worker = s == nullptr ? current_worker : nullptr;
}

inline bool workspan_active() noexcept { return ws_current != nullptr; }

}  // namespace crew::detail
