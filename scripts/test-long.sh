#!/usr/bin/env bash
# The long tier of crew's reliability suite, for before a release (about 2-3 hours on 2 cores):
#   scripts/test-long.sh
# - Relacy model checks with 100,000,000 random schedules per scenario (label long, model_*_long);
# - stress tests in long mode (CREW_STRESS_LONG=1): 10,000,000 ids exactly once, 10,000 shutdown
#   cycles under load, larger exception storms and payload counts;
# - the memory-bound tests at 10,000,000 tasks;
# - the deque fuzzer for an hour under ASan+UBSan.
# Each stress test prints its seed; CREW_STRESS_SEED=<seed> replays its decisions.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/deps.sh
. scripts/deps.sh
# shellcheck disable=SC2086
ensure_packages $CREW_PACKAGES_BUILD $CREW_PACKAGES_TEST
jobs=$(nproc)

cmake -S . -B build/long-gcc -G Ninja -DCREW_WERROR=ON -DCMAKE_CXX_COMPILER=g++ >/dev/null
cmake --build build/long-gcc -j "$jobs"
cmake -S . -B build/long-fuzz -G Ninja -DCREW_WERROR=ON -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCREW_SANITIZE=address,undefined -DCREW_BUILD_FUZZ=ON >/dev/null
cmake --build build/long-fuzz -j "$jobs" --target deque_fuzz

status=0
ctest --test-dir build/long-gcc --output-on-failure -j "$jobs" -L long || status=1
ctest --test-dir build/long-fuzz --output-on-failure -R '^fuzz_deque_long$' || status=1
if [ "$status" -eq 0 ]; then echo "crew long tier: passed"; else echo "crew long tier: FAILED"; fi
exit "$status"
