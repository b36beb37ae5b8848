#!/usr/bin/env bash
# The targets crew-bench checks (its "[met]" / "[MISSED]" lines), over many processes and both
# compilers: one crew-bench process per compiler per round, the compilers alternated, and for each
# target the median over processes of the ratio that process measured side by side (crew and the
# peer in the same process), with the range and how many processes met it. One process is one
# sample: on a shared VM single processes run up to 50 % slow, so a target is read off the median.
#   scripts/bench-targets.sh [rounds] [crew-bench args...]
#   default: 9 rounds of --quick --reps 7 --threads 1,2 --problems <the coroutine shapes> --impls crew,tokio,asio
#   CREW_BENCH_PREFIX="chrt -f 10" runs each process under that command (root or CAP_SYS_NICE).
# Builds crew-bench with g++ and clang++ as scripts/bench-compilers.sh does (same build folders);
# CREW_BENCH_DIRS="g++=DIR clang++=DIR" uses existing build folders instead (built, not reconfigured).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-9}; shift || true
args=("$@")
if [ ${#args[@]} -eq 0 ]; then
  args=(--quick --reps 7 --threads 1,2 --impls crew,tokio,asio
        --problems async_spawn_await,async_spawn_many_local,async_yield_many,async_ping_pong,async_chained_spawn,async_channel_round_trip)
fi
read -r -a prefix <<< "${CREW_BENCH_PREFIX:-}"
out=${CREW_BENCH_OUT:-build/bench-targets}
mkdir -p "$out"
rm -f "$out"/*.txt
declare -A dir=([g++]=build/bench-g++ [clang++]=build/bench-clang++)
for d in ${CREW_BENCH_DIRS:-}; do dir[${d%%=*}]=${d#*=}; done
for cc in g++ clang++; do
  if [ -z "${CREW_BENCH_DIRS:-}" ]; then
    cmake -S . -B "${dir[$cc]}" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cc" \
          -DCREW_BUILD_BENCH=ON -DCREW_BUILD_TESTS=OFF >/dev/null
  fi
  cmake --build "${dir[$cc]}" --target crew-bench >/dev/null
done
for r in $(seq 1 "$rounds"); do
  for cc in g++ clang++; do
    ${prefix[@]+"${prefix[@]}"} "${dir[$cc]}/bench/crew-bench" "${args[@]}" --html /dev/null 2>&1 |
      grep -E '^ *\[(met|MISSED)\]' >"$out/$cc-$r.txt" || true
  done
done
# A target line: "  [met] <name>: <detail>: <ratio>x". Key = compiler + name.
for cc in g++ clang++; do
  for f in "$out/$cc"-*.txt; do
    sed -E -n "s/^ *\[(met|MISSED)\] ([^:]*: [^:]*): .*: ([0-9.]+)x$/$cc|\2|\1|\3/p" "$f"
    # The TCP echo targets ("crew R rt/s p99 P us; <peer> R rt/s p99 P us"): two ratios, crew/peer.
    sed -E -n "s/^ *\[(met|MISSED)\] ([^:]*): .*: crew ([0-9.]+) rt\/s p99 ([0-9.]+) us; ([a-z]+) ([0-9.]+) rt\/s p99 ([0-9.]+) us$/\1|\2|\3|\4|\5|\6|\7/p" "$f" |
      awk -F'|' -v cc="$cc" '{ printf "%s|%s, rt/s crew/%s|%s|%.4f\n%s|%s, p99 crew/%s|%s|%.4f\n", cc, $2, $5, $1, $3 / $6, cc, $2, $5, $1, $4 / $7 }'

  done
done | awk -F'|' '
  { key = $1 "|" $2; n[key]++; v[key, n[key]] = $4; if ($3 == "met") met[key]++; keys[key] = 1 }
  END {
    for (key in keys) {
      m = n[key]
      for (i = 1; i <= m; i++) a[i] = v[key, i]
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
      split(key, k, "|")
      printf "%-8s %-100s median %6.2fx  [%5.2f-%5.2f]  met in %d of %d\n", k[1], k[2], med, a[1], a[m], met[key] + 0, m
    }
  }' | sort -k2
echo "(median over $rounds processes per compiler, alternated, of: crew-bench ${args[*]}; target lines in $out/)"
