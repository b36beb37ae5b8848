// crew/detail/frame_cache.hpp -- per-worker memory for coroutine frames (allocate_frame /
// free_frame in async_schedule.hpp).
//
// Shape: five size classes of blocks, 64, 128, 256, 512 and 1024 bytes; a block begins with a
// 16-byte header (the owning depot and the class), the frame follows it (so frames stay 16-byte
// aligned, __STDCPP_DEFAULT_NEW_ALIGNMENT__). A frame whose size plus header exceeds 1024 bytes
// comes from ::operator new with no header: free_frame receives the same size and knows.
//
//   * A worker allocates from its own free list of the class (owner-only, no atomics). When it is
//     empty, it first takes back everything other threads returned (one exchange, see below), then
//     falls back to ::operator new of the class size.
//   * A frame freed on its owning worker goes back on that worker's list while the worker caches
//     less than frame_cache_bytes in all (4 MiB: 16,384 frames of 256 bytes); beyond, to the heap.
//     The cache only holds what the worker once had live at the same time. Why that much: a worker that spawns
//     10,000 tasks before it runs them (a 1-worker pool) frees them all in one burst; with 128
//     blocks per class nearly all of it went back to the heap, glibc trimmed the worker's arena,
//     and the next burst page-faulted it back in (sysmalloc and page faults were 65 % of the
//     time: async_spawn_many_local at 1 worker ran 10x slower than with the blocks kept).
//   * A frame freed on any other thread (another worker, an outside thread) goes back to its OWNER:
//     pushed onto the owner's depot, a multi-producer single-consumer list (basic_remote_list).
//   * A frame allocated on a thread that is no worker has a header with no owner; it goes back to
//     the heap when freed outside, or joins the freeing worker's cache (the block has the class
//     size, so any cache can adopt it).
//
// The depot outlives its worker: a frame may be freed after its pool is gone (a join handle
// dropped late). Depots are therefore never freed: a worker takes one from a process-wide
// recycling list when it starts and puts it back when it is destroyed; the next worker adopts it
// with whatever was returned to it meanwhile (the blocks are ordinary heap blocks of their class,
// so the new owner just caches them). The number of depots is the largest number of workers that
// ever existed at once, and every block on a depot stays reachable (no leak for LSan).
//
// Who may call what: frame_cache members on the owning worker's thread only; depot().remote.push
// from any thread; remote.take_all by the depot's current owner only (or under the recycling lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

#include "crew/detail/atomics.hpp"

namespace crew::detail {

// A lock-free MPSC list (Treiber push, take-everything pop). Node needs a `Node* next` member.
// No ABA: the consumer never removes a single node, it swaps the whole list out.
//
// Orderings: push's CAS release -- pairs with take_all's acquire exchange: the node's contents
// (written before the push, including `next`) are visible to the consumer. Every write of head_ is
// an RMW, so the consumer's acquire also synchronizes with every earlier push in the release
// sequence (C++20 keeps RMWs in it). The relaxed load in take_all's fast check only decides
// whether to do the exchange; nothing is read on its strength.
template <class Node, class Policy = std_atomics>
class basic_remote_list {
public:
    void push(Node* n) noexcept {
        Node* head = head_.load(std::memory_order_relaxed);
        do {
            n->next = head;
            // release: see above (partner: take_all's acquire exchange).
        } while (!head_.compare_exchange_weak(head, n, push_order(), std::memory_order_relaxed));
    }

    // Everything pushed so far (the newest first), or nullptr. One consumer at a time.
    Node* take_all() noexcept {
        if (head_.load(std::memory_order_relaxed) == nullptr) return nullptr;
        return head_.exchange(nullptr, std::memory_order_acquire);  // acquire: pairs with push
    }

    bool empty_hint() const noexcept { return head_.load(std::memory_order_relaxed) == nullptr; }

private:
    static constexpr std::memory_order push_order() noexcept {
        return Policy::injected_bug == bug::remote_push_relaxed ? std::memory_order_relaxed
                                                                : std::memory_order_release;
    }
    typename Policy::template atomic<Node*> head_{nullptr};
};

inline constexpr std::size_t frame_header_size = 16;
inline constexpr unsigned frame_class_count = 5;
inline constexpr std::size_t frame_min_block = 64;
inline constexpr std::size_t frame_max_block = frame_min_block << (frame_class_count - 1);  // 1024
inline constexpr std::size_t frame_cache_bytes = std::size_t{4} << 20;

// A cached or returned block: the header's place, reused (the class kept where it was).
struct frame_block {
    frame_block* next;
    std::uint32_t size_class;
};

// A worker's return address for frames freed elsewhere; never freed (see above).
struct alignas(cache_line) frame_depot {
    basic_remote_list<frame_block> remote;
    frame_depot* next_free = nullptr;  // the recycling list (under its lock)
};

struct frame_header {
    frame_depot* owner;  // nullptr: allocated outside every worker
    std::uint32_t size_class;
};
static_assert(sizeof(frame_header) <= frame_header_size);

// The class of a block holding `total` bytes (header included), total <= frame_max_block.
constexpr unsigned frame_class_of(std::size_t total) noexcept {
    unsigned c = 0;
    while ((frame_min_block << c) < total) ++c;
    return c;
}
constexpr std::size_t frame_block_size(unsigned size_class) noexcept { return frame_min_block << size_class; }

// Blocks start on a 128-byte boundary (every class above 64 bytes is a whole number of such pairs of
// lines), so two frames never share a line nor the line pair that x86's adjacent-line prefetcher
// fetches together (Tokio aligns its task cells to 128 bytes on x86-64 for the same reason). Tasks
// whose frames were cut from neighbouring heap blocks may run on different workers, and each run
// writes its task's state word and frame. With the heap's 16-byte alignment they shared lines:
// yield_many at 2 workers ran no faster than at 1 once a few bursts had scrambled which worker's
// task sat next to which; 64-byte alignment recovered part of it, 128 more (docs/BENCHMARKS.md,
// "Session 23").
inline constexpr std::align_val_t frame_block_align{2 * cache_line};
inline void* new_frame_block(unsigned size_class) { return ::operator new(frame_block_size(size_class), frame_block_align); }
inline void delete_frame_block(void* block) noexcept { ::operator delete(block, frame_block_align); }


// The process-wide depot recycling list (src/async_schedule.cpp).
frame_depot* acquire_frame_depot();
void release_frame_depot(frame_depot* d) noexcept;

class frame_cache {
public:
    frame_cache() : depot_(acquire_frame_depot()) {}
    ~frame_cache() {
        for (unsigned c = 0; c < frame_class_count; ++c) {
            while (frame_block* b = free_[c]) {
                free_[c] = b->next;
                delete_frame_block(b);
            }
        }
        release_frame_depot(depot_);  // later remote frees wait there for the next owner
    }
    frame_cache(const frame_cache&) = delete;
    frame_cache& operator=(const frame_cache&) = delete;

    frame_depot* depot() const noexcept { return depot_; }

    // A block of `size_class` with its header written; returns the frame (after the header).
    void* allocate(unsigned size_class) {
        frame_block* b = free_[size_class];
        if (b == nullptr) [[unlikely]] return allocate_cold(size_class);  // a tail call
        free_[size_class] = b->next;
        bytes_ -= frame_block_size(size_class);
        return stamp(b, depot_, size_class);
    }

    // A block this cache may keep (its own, or an ownerless one of the class size).
    void put(void* block, unsigned size_class) noexcept {
        if (bytes_ >= frame_cache_bytes) {
            delete_frame_block(block);
            return;
        }
        free_[size_class] = new (block) frame_block{free_[size_class], size_class};
        bytes_ += frame_block_size(size_class);
    }

    static void* stamp(void* block, frame_depot* owner, unsigned size_class) noexcept {
        new (block) frame_header{owner, size_class};
        return static_cast<unsigned char*>(block) + frame_header_size;
    }
    static frame_header* header_of(void* frame) noexcept {
        return reinterpret_cast<frame_header*>(static_cast<unsigned char*>(frame) - frame_header_size);
    }

private:
    // Take back what other threads returned, then, if the class is still empty, ask the heap;
    // returns the stamped frame. Not inlined: inlined, its loop made allocate() (once per spawn)
    // save six registers on every call; out of line the hit path needs none (callgrind: 52 -> 38
    // instructions), and returning the frame itself (session 16) makes it a tail call, so the hit
    // path keeps no register alive across it either.
    [[gnu::noinline]] void* allocate_cold(unsigned size_class) {
        frame_block* returned = depot_->remote.take_all();
        while (returned != nullptr) {
            frame_block* next = returned->next;
            put(returned, returned->size_class);
            returned = next;
        }
        frame_block* b = free_[size_class];
        if (b == nullptr) return stamp(new_frame_block(size_class), depot_, size_class);
        free_[size_class] = b->next;
        bytes_ -= frame_block_size(size_class);
        return stamp(b, depot_, size_class);
    }

    frame_depot* depot_;
    frame_block* free_[frame_class_count] = {};
    std::size_t bytes_ = 0;  // the blocks on free_, in bytes
};

}  // namespace crew::detail
