// crew/detail/atomics.hpp -- the one place where crew names its atomic types, fences, futex calls
// and sanitizer workarounds.
//
// Every lock-free structure in crew (chase_lev.hpp, parking.hpp, injector.hpp, group_count.hpp) is
// a template over an atomics *policy*. `std_atomics` below is the production policy; a model-checker
// build supplies a policy with the same members backed by its own types (Relacy's rl::atomic,
// rl::atomic_thread_fence) and instantiates the very same headers. A policy provides:
//
//   template <class T> using atomic = ...;     // std::atomic-like: load/store/exchange/CAS/fetch_*
//   using mutex = ...;                         // BasicLockable
//   static void fence(std::memory_order);      // std::atomic_thread_fence
//   static void pause();                       // spin-wait hint
//   static void yield();                       // give the core away for a moment
//   static void wait(atomic<std::uint32_t>&, std::uint32_t expected);  // sleep while value == expected
//   static void wake_one(atomic<std::uint32_t>&); static void wake_all(atomic<std::uint32_t>&);
//   static constexpr bug injected_bug;         // bug::none in production (see below)
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

#include "crew/detail/os.hpp"

#if defined(__SANITIZE_THREAD__)
#define CREW_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CREW_TSAN 1
#endif
#endif

namespace crew::detail {

// Cache-line size used to keep owner-written and thief-written fields apart.
inline constexpr std::size_t cache_line = 64;

// Known bugs that the model-check build re-introduces one at a time, to prove that the model
// checker catches them (tests/reliability, label `teeth`). The lock-free code tests
// `Policy::injected_bug` with `if constexpr`, so with bug::none (every production policy) the
// code is exactly the correct algorithm.
enum class bug : unsigned {
    none,
    no_pop_fence,          // chase_lev pop(): no seq_cst fence between the bottom store and the top load
    no_steal_fence,        // chase_lev steal(): no seq_cst fence between the top load and the bottom load
    take_before_cas,       // chase_lev steal(): remove the item from its slot before winning the CAS
    last_without_cas,      // chase_lev pop(): take the last item without racing thieves through top
    relaxed_grow_publish,  // chase_lev grow: publish the bigger buffer with a relaxed store
    no_park_fence,         // parking prepare_park(): no seq_cst fence between announcing and reading
    park_without_recheck,  // the worker-loop model parks without re-checking the queues
    group_lost_increment,  // group_count begin_wait(): retract with a plain store, not a CAS (the old reset)
    group_relaxed_fold,    // group_count finish(n): a drain's fold of n > 1 children is a relaxed RMW
    ring_no_room_check,         // async_ring steal_into(): no check that the destination has room (seed 002)
    ring_lost_cas_is_empty,     // async_ring steal_into(): a failed claim CAS reports "empty" (seed 002)
    ring_capacity_vs_real_head, // async_ring push_back(): capacity checked against the real head, not the steal head
    ring_wide_index_math,       // async_ring push_back(): tail - steal computed in 64 bits (wrong across the wrap)
    ring_overflow_without_claim,// async_ring overflow: shrink the tail without the CAS on head that orders it
    state_wake_running_no_notify,  // task_state: a wake while RUNNING does not set NOTIFIED (lost wake)
    state_fold_ignores_join_waker,  // task_state: the one-CAS completion also folds when a join waker is installed (never fired)
    state_claim_unmarked,          // task_state claim_to_run_inline(): the queue entry is not marked stale (it runs the task again)
    state_stale_keeps_claim,       // task_state: a stale entry's pop leaves CLAIMED set (the next real entry is dropped too)
    state_claim_second_entry,      // task_state: a wake of a CLAIMED task queues a second entry (two entries: intrusive links break)
    state_detach_fast_when_complete,  // task_state drop_join_interest_unwatched(): the one-CAS drop also when COMPLETE (the result is never dropped)
    state_detach_fast_ignores_waker,  // task_state drop_join_interest_unwatched(): the one-CAS drop also with a join waker installed (never released)
    state_displace_drops_live,   // task_state drop_stale_entry(): CLAIMED checked on a snapshot, then a blind RMW (drops an entry a wake made live: lost task)
    state_displace_keeps_claim,  // task_state drop_stale_entry(): drops the stale entry's reference but leaves CLAIMED set (a later wake queues nothing)
    state_displace_double_drop,  // task_state drop_stale_entry(): drops the stale entry and still reports it live (it is queued too: dropped twice)
    state_exclusive_ignores_refs,  // task_state: the RMW-free exclusive completion ignores the reference count (frees while a waker or entry holds one)
    remote_push_relaxed,   // frame_cache remote list: push publishes the node with a relaxed CAS
    lifo_hidden_from_recheck,  // the LIFO-slot sleep/wake model: the park re-check ignores LIFO slots
    lifo_take_back_store,      // the take-back model: the owner empties its LIFO slot with a store, not a CAS (a thief's take races it)
    fork_promoted_run_inline,  // fork_stack take_back(): a promoted job is also taken back inline
    fork_top_not_lowered,      // fork_stack take_back(): top_ is not lowered after a promoted take-back
    fork_wrap_torn,            // fork_stack: the count's wrap rewrites the depth word without the wraps_ seqlock
    susp_wake_ignores_generation,  // suspension_word resolve(): the CAS does not compare the generation
    susp_relaxed_arm,              // suspension_word arm(): a relaxed CAS (a refused arm misses the canceller's writes)
    no_driver_wake,        // parking notify: a notify that finds only the driver sleeper does not wake it
    driver_not_counted,    // parking prepare_park_driver(): the driver sleeper is not marked
    async_running_hinted_notify,  // the coroutine notify-rule model: a put by a task that goes on running gets the hinted notify
    wait_claim_after_unlock,      // the wait-list model: a releaser claims the wake after unlocking (take-back reads a dead node)
    wait_idle_ignores_lock,       // wait_lock idle(): the destructor's fast path reads only the count, not the lock bit (frees under a finishing awaiter)
    wait_failed_claim_uncounts,   // the wait-block model: a releaser drops the node's count even when cancellation won the claim (frees before the cancelled awaiter unlinks)
    group_token_not_held,      // group_count hold_token(): no add (private children do not keep the word above zero)
    group_promote_uncounted,   // group_count count_promoted(): a promoted child is pushed without its add()
    fork_take_back_no_identity,  // fork_stack take_back(item, ...): the newest private entry is taken back without comparing it to item
    group_boundary_no_publish,   // group_fork end_private_children(): the token is dropped without publishing the leftovers
    fork_wake_relaxed_clear,     // fork_stack clear_request(): a relaxed exchange (the push's wake check misses the sleeper)
    fork_steal_request_store,    // fork_stack request(): a plain store of the steal bit (overwrites a wake request)
    fork_limit_restore_store,    // fork_stack restore_limit(): a plain store (overwrites a request's zero unseen: the request is lost)
    fork_request_zero_store,     // fork_stack send_owner_cold(): a plain store of zero (cuts an earlier requester's release sequence: its bit unseen, lost)
    park_ignores_token,          // parking park(): a wake that leaves the epoch at the sleeper's key sleeps again, token or not (the wake meant for another sleeper is lost)
    oneshot_close_relaxed,            // oneshot_word close(): a relaxed RMW (the value is not published to the receiver)
    oneshot_publish_ignores_closed,   // oneshot_word publish(): a blind fetch_or (a waker published after the close is never woken)
    oneshot_withdraw_blind,           // oneshot_word withdraw(): the receiver takes its waker back even when the close took it (both use it)
    oneshot_close_drops_ref_waiting,  // oneshot_word close(): the sender lets go of the block while it still has to read the waker (use after free)
    oneshot_sole_free_relaxed,        // oneshot_word release_receiver(): the sole-holder check is a relaxed load (frees before the sender's last touch is ordered)
    oneshot_hand_off_touches,         // the oneshot model: the sender writes the block after its wake resolved the receiver's suspension (the receiver frees it)
};

struct std_atomics {
    template <class T>
    using atomic = std::atomic<T>;
    using mutex = std::mutex;
    static constexpr bug injected_bug = bug::none;

    // A seq_cst fence is a full barrier; every other order only restrains the compiler on the
    // architectures crew runs on. On x86-64 crew emits the barrier itself: a locked RMW of zero on
    // the top of the stack (what g++ >= 11 and the Linux kernel's smp_mb() emit) costs 5.8 ns here,
    // the `mfence` clang emits for std::atomic_thread_fence costs 23 ns (../docs/BENCHMARKS.md,
    // "barrier"). The "memory" clobber keeps the compiler from moving any access across it. TSan
    // builds keep the std fence so the sanitizer sees a fence call; the model-check policy keeps
    // its own rl::atomic_thread_fence.
    static void fence(std::memory_order order) noexcept {
#if defined(__x86_64__) && !defined(CREW_TSAN)
        if (order == std::memory_order_seq_cst) {
            asm volatile("lock orq $0, (%%rsp)" ::: "memory", "cc");
            return;
        }
#endif
        std::atomic_thread_fence(order);
    }

    static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        asm volatile("yield" ::: "memory");
#endif
    }

    static void yield() noexcept { std::this_thread::yield(); }

    // Futex-style sleep: returns when the value differs from `expected`, on a wake, or spuriously.
    static void wait(atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
        os::futex_wait(&word, expected);
    }
    static void wake_one(atomic<std::uint32_t>& word) noexcept { os::futex_wake(&word, 1); }
    static void wake_all(atomic<std::uint32_t>& word) noexcept { os::futex_wake(&word, os::wake_everyone); }
};

// ThreadSanitizer does not model std::atomic_thread_fence. Where a fence is the only thing that
// publishes data, crew uses a release store instead (see chase_lev.hpp); this constant lets code
// state that choice once. The seq_cst fences that order a store before a load (Dekker style) stay
// in every build: TSan cannot check them, the model checker does.
inline constexpr bool under_tsan =
#if defined(CREW_TSAN)
    true;
#else
    false;
#endif

// AddressSanitizer: its allocator's lock is copied into a forked child (tests that fork know it).
inline constexpr bool under_asan =
#if defined(__SANITIZE_ADDRESS__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif

}  // namespace crew::detail
