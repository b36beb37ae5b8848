#!/usr/bin/env bash
# Builds crew-bench with g++ and with clang++ and runs the same problems with both, alternating
# rounds, then prints crew's medians side by side with the clang/g++ ratio. A crew figure measured
# with one compiler only is half a figure (docs/BENCHMARKS.md, "Both compilers").
#   scripts/bench-compilers.sh [rounds] [crew-bench args...]
#   default: 2 rounds of --quick --problems barrier,fib,skynet --threads 1,2 --reps 5
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}; shift || true
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--quick --problems barrier,fib,skynet --threads 1,2 --reps 5)
out=${CREW_BENCH_OUT:-build/bench-compilers}
mkdir -p "$out"
for cc in g++ clang++; do
  cmake -S . -B "build/bench-$cc" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cc" \
        -DCREW_BUILD_BENCH=ON -DCREW_BUILD_TESTS=OFF >/dev/null
  cmake --build "build/bench-$cc" --target crew-bench >/dev/null
done
for r in $(seq 1 "$rounds"); do
  for cc in g++ clang++; do
    "build/bench-$cc/bench/crew-bench" "${args[@]}" --json "$out/$cc-$r.json" >/dev/null
  done
done
# One cell per line in the JSON: pull problem, impl, threads, median (and ns_per_iteration extras).
cells() {
  sed -n 's/.*"problem": "\([^"]*\)", "impl": "\([^"]*\)", "threads": \([0-9]*\), "median_s": \([0-9.e+-]*\).*/\1 \2 \3 \4/p' "$@"
}
{
  for f in "$out"/g++-*.json; do cells "$f" | sed 's/^/g++ /'; done
  for f in "$out"/clang++-*.json; do cells "$f" | sed 's/^/clang /'; done
} | awk '
  { key = $2 " " $3 " " $4; n[$1 SUBSEP key]++; v[$1 SUBSEP key, n[$1 SUBSEP key]] = $5; keys[key] = 1 }
  function median(cc, key,   m, i, j, t, a) {
    m = n[cc SUBSEP key]; if (!m) return 0
    for (i = 1; i <= m; i++) a[i] = v[cc SUBSEP key, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    printf "%-14s %-18s %7s %12s %12s %11s\n", "problem", "impl", "threads", "g++ median", "clang median", "clang/g++"
    for (key in keys) {
      g = median("g++", key); c = median("clang", key); split(key, k, " ")
      printf "%-14s %-18s %7s %10.4g s %10.4g s %10.2fx\n", k[1], k[2], k[3], g, c, (g > 0 ? c / g : 0)
    }
  }' | (read -r header; echo "$header"; sort)
echo "(median over $rounds alternating rounds of: crew-bench ${args[*]}; JSON in $out/)"
