// tests/reliability/deque_fuzz.cpp -- libFuzzer target: random single-threaded operation sequences
// on crew's Chase-Lev deque, checked against a std::deque model.
//
// Each input byte is one operation: push (the next id), pop (newest), steal (oldest), or a check of
// size_hint(). The deque starts at capacity 1 (the first input byte picks 1, 2 or 4), so growth is
// exercised from the smallest buffer. Every result must match the model exactly; ASan+UBSan catch
// memory errors in growth and retired-buffer handling. Build: -DCREW_BUILD_FUZZ=ON with clang.
//   ./deque_fuzz fuzz_corpus/ -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <vector>

#include "crew/detail/chase_lev.hpp"

namespace {

// A mismatch aborts: libFuzzer then saves the input that caused it (crash-<hash>).
void check(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "deque_fuzz: deque and model disagree: %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::int64_t initial = std::int64_t{1} << (data[0] % 3);
    crew::detail::chase_lev_deque<int> deque(initial);
    std::deque<int*> model;
    std::vector<int> ids(size);  // stable addresses: the deque stores pointers
    int next = 0;
    for (std::size_t i = 1; i < size; ++i) {
        const std::uint8_t op = data[i];
        switch (op % 4) {
            case 0:
            case 1: {  // push: twice as likely, so the deque grows
                int* p = &ids[static_cast<std::size_t>(next)];
                *p = next++;
                const std::int64_t depth = deque.push(p);
                model.push_back(p);
                check(depth == static_cast<std::int64_t>(model.size()), "push depth");
                check(deque.capacity() >= depth, "capacity below depth");
                break;
            }
            case 2: {  // pop: newest
                int* got = deque.pop();
                if (model.empty()) {
                    check(got == nullptr, "pop from empty");
                } else {
                    check(got == model.back(), "pop order");
                    model.pop_back();
                }
                break;
            }
            default: {  // steal: oldest; single-threaded it never loses a race
                crew::detail::steal_result<int> r = deque.steal();
                if (model.empty()) {
                    check(r.status == crew::detail::steal_status::empty && r.item == nullptr, "steal from empty");
                } else {
                    check(r.status == crew::detail::steal_status::success, "steal status");
                    check(r.item == model.front(), "steal order");
                    check(*r.item == static_cast<int>(r.item - ids.data()), "item value");
                    model.pop_front();
                }
                break;
            }
        }
        check(deque.size_hint() == static_cast<std::int64_t>(model.size()), "size_hint");
    }
    // Drain from both ends alternately; the model must agree to the end.
    for (bool back = true; !model.empty(); back = !back) {
        if (back) {
            check(deque.pop() == model.back(), "drain pop");
            model.pop_back();
        } else {
            check(deque.steal().item == model.front(), "drain steal");
            model.pop_front();
        }
    }
    check(deque.pop() == nullptr && deque.steal().status == crew::detail::steal_status::empty, "empty at end");
    return 0;
}
