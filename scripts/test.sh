#!/usr/bin/env bash
# The whole test suite: builds crew with g++ and with clang (-Wall -Wextra -Werror), runs every
# test, then runs the concurrency tests again under ThreadSanitizer and under ASan+UBSan, then the
# extra tiers in scripts/ci.d/ (model checks, fuzzing, report rendering).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
# shellcheck disable=SC2086
ensure_packages $CREW_PACKAGES_BUILD $CREW_PACKAGES_TEST $CREW_PACKAGES_BENCH

jobs=$(nproc)
total_passed=0
total_failed=0

# run_ctest <build dir> [ctest args...]: runs ctest, adds its counts to the totals.
run_ctest() {
  local dir=$1; shift
  local log; log=$(mktemp)
  set +e
  ctest --test-dir "$dir" --output-on-failure "$@" 2>&1 | tee "$log"
  set -e
  local line; line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -n 1)
  rm -f "$log"
  if [ -z "$line" ]; then
    total_failed=$((total_failed + 1)); echo "ctest in $dir printed no summary"; return
  fi
  local failed all
  failed=$(echo "$line" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/')
  all=$(echo "$line" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\2/')
  total_passed=$((total_passed + all - failed))
  total_failed=$((total_failed + failed))
}

# section <title>: prints the title and the minutes since the start (the CI's budget is 45).
section() { echo "== $1 (at $((SECONDS / 60)) min $((SECONDS % 60)) s)"; }

# build <dir> <cmake args...>
build() {
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DCREW_WERROR=ON -DCREW_BUILD_BENCH=ON "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

section "g++ (Release, -Werror)"
build build/gcc -DCMAKE_CXX_COMPILER=g++
# Two tests at a time: most of them wait as much as they compute (parks, timers, sockets).
run_ctest build/gcc -LE 'long|model|teeth|fuzz' -j "$jobs"

section "clang (Release, -Werror)"
# The Relacy model checks and the Rust peer run from the g++ build; building them twice costs
# about four minutes of the CI's budget and checks nothing more. The algorithms' type matrices
# (about 3.5 minutes of CPU) are compiled and run by clang in the ASan+UBSan build below, at -O0.
build build/clang -DCMAKE_CXX_COMPILER=clang++ -DCREW_BUILD_MODEL_CHECKS=OFF -DCREW_BENCH_PEERS_RUST=OFF -DCREW_BUILD_TYPE_MATRIX_TESTS=OFF
run_ctest build/clang -L 'concurrency|codegen' -j "$jobs"

# The sanitizer builds run every test but the long, model, fuzz and heavy tiers: the heavy test
# (10,000,000-element differential runs and a range past 2^32 indices) runs in the
# g++ build; under TSan it took 66-108 s of the CI's 45-minute budget.
# The TSan build leaves out the algorithms' type matrices (tests/algorithms/CMakeLists.txt says
# why; they run in the three other builds). The sanitizer builds carry no debug info: their
# reports name functions (symbol table and llvm-symbolizer) but not lines; -g made the heaviest test file's ASan compile about 45 % slower
# (223 s against 153 s of CPU for tests/algorithms/edge_index_types_test.cpp). Reproduce a report
# with lines by configuring with -DCREW_SANITIZE_DEBUG_INFO=ON (the default).
section "ThreadSanitizer"
build build/tsan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCREW_SANITIZE=thread -DCREW_SANITIZE_DEBUG_INFO=OFF -DCREW_BUILD_TYPE_MATRIX_TESTS=OFF -DCREW_BUILD_BENCH=OFF
CREW_TEST_SCALE_DOWN=10 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" run_ctest build/tsan -LE 'long|model|teeth|fuzz|heavy'

# -O1, as the ASan documentation advises: the heaviest test file compiles ~15 % faster than at -O2.
section "AddressSanitizer + UndefinedBehaviorSanitizer"
build build/asan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g -DNDEBUG" -DCREW_SANITIZE=address,undefined -DCREW_SANITIZE_DEBUG_INFO=OFF -DCREW_BUILD_BENCH=OFF
CREW_TEST_SCALE_DOWN=10 ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1" run_ctest build/asan -LE 'long|model|teeth|fuzz|heavy'

# Extra tiers register themselves as scripts/ci.d/*.sh; each may call build and run_ctest.
for tier in scripts/ci.d/*.sh; do
  [ -e "$tier" ] || continue
  section "$(basename "$tier" .sh)"
  # shellcheck disable=SC1090
  . "$tier"
done

echo
echo "crew: the whole run took $((SECONDS / 60)) min $((SECONDS % 60)) s"
echo "crew: $total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
