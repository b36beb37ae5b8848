# shellcheck shell=bash disable=SC2154 # sourced by scripts/test.sh (defines jobs, run_ctest, build)
# Sourced by scripts/test.sh: the reliability suite's fast tier (issue 5; docs/GUARANTEES.md).
#   - Relacy model checks of the production deque and sleep/wake protocol (label model, 5,000,000
#     random schedules per scenario) and the teeth (label teeth: each re-introduced bug must be
#     caught), from the g++ build test.sh made above (crew_model is built with the tests);
#   - the deque fuzzer for 60 s under ASan+UBSan (clang, -fsanitize=fuzzer), added to the ASan
#     build and built alone.
# The stress tests (label stress) already ran in the g++ step and, scaled down, under the
# sanitizers. The long tier is scripts/test-long.sh.
echo "-- model checks and teeth (Relacy)"
run_ctest build/gcc -L 'model|teeth' -j "$jobs"

echo "-- deque fuzzer, ${CREW_FUZZ_SECONDS:-60} s under ASan+UBSan"
cmake -S . -B build/asan -DCREW_BUILD_FUZZ=ON -DCREW_FUZZ_SECONDS="${CREW_FUZZ_SECONDS:-60}" >/dev/null
cmake --build build/asan -j "$jobs" --target deque_fuzz
ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1" run_ctest build/asan -L fuzz
