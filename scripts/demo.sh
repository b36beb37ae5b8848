#!/usr/bin/env bash
# scripts/demo.sh -- the README's first command: build crew in Release with its benchmarks, run
# crew-bench --quick (about two minutes on 2 cores) and say where the HTML report was written.
#   usage: scripts/demo.sh [extra crew-bench arguments, e.g. --full or --threads 1,2,4]
# Environment: BUILD_DIR (default build/demo), JOBS (default: the number of CPUs).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
# shellcheck disable=SC2086
ensure_packages $CREW_PACKAGES_BUILD $CREW_PACKAGES_BENCH

build_dir=${BUILD_DIR:-build/demo}
jobs=${JOBS:-$(nproc)}
echo "== building crew and crew-bench (Release) in $build_dir"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCREW_BUILD_BENCH=ON \
  -DCREW_BUILD_TESTS=OFF -DCREW_BUILD_EXAMPLES=OFF > /dev/null
cmake --build "$build_dir" -j "$jobs" --target crew-bench

report="$PWD/$build_dir/crew-bench-report.html"
json="$PWD/$build_dir/crew-bench-report.json"
if [ $# -eq 0 ]; then set -- --quick; fi
echo "== crew-bench $* (the table prints when every cell has run)"
status=0
"$build_dir/bench/crew-bench" "$@" --html "$report" --json "$json" || status=$?
echo
if [ -s "$report" ]; then
  echo "HTML report: $report"
  echo "  open it in a browser, e.g.: xdg-open '$report'"
  echo "JSON:        $json"
fi
exit "$status"
