#!/usr/bin/env bash
# Metrics on vs compiled out, with the code layout randomised (docs/OBSERVABILITY.md, "Metrics cost
# over randomised layouts"). A 1 % effect is smaller than what moving functions around does to fib
# and skynet on its own (4 % and more), so one ON and one OFF build compare two layouts as much as
# the metrics. This script builds crew-bench with metrics ON and OFF, each function in its own
# section, relinks each build with lld under several seeds that shuffle the function order
# (--shuffle-sections), and runs ON and OFF of the same seed back to back (ABBA). The ON/OFF ratio
# of a cell is taken per seed; the summary gives the median over seeds and a bootstrap interval over
# seeds, so layout is part of the noise instead of a hidden bias.
#   scripts/metrics-layout.sh [compiler] [seeds] [rounds]
#   default: g++ 8 2 (8 layouts, 2 ABBA rounds each); needs lld (Debian: lld)
#   CREW_LAYOUT_PREFIX="chrt -f 10" runs each process under that command (a real-time priority keeps
#   other processes on a shared host from preempting the workers mid-rep; needs root or CAP_SYS_NICE)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_packages lld
cxx=${1:-g++}; seeds=${2:-8}; rounds=${3:-2}
out=${CREW_LAYOUT_OUT:-build/metrics-layout/$cxx}
read -r -a prefix <<< "${CREW_LAYOUT_PREFIX:-}"
args=(--quick --problems fib,skynet --threads 1,2 --reps 11 --impls crew --html /dev/null)
mkdir -p "$out"
for m in ON OFF; do
  dir=build/layout-$cxx-$m
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
        -DCREW_BUILD_BENCH=ON -DCREW_BUILD_TESTS=OFF -DCREW_METRICS=$m \
        -DCMAKE_CXX_FLAGS="-ffunction-sections" -DCMAKE_EXE_LINKER_FLAGS="-fuse-ld=lld" >/dev/null
  cmake --build "$dir" --target crew-bench >/dev/null
  link=$(ninja -C "$dir" -t commands bench/crew-bench | tail -n 1)
  link=${link% && :}
  for s in $(seq 1 "$seeds"); do  # relink only: the objects are the same, the order differs
    (cd "$dir" && eval "${link/-o bench\/crew-bench / -o bench/crew-bench-s$s } -Wl,--shuffle-sections='.text.*=$s'")
  done
done
for s in $(seq 1 "$seeds"); do
  for r in $(seq 1 "$rounds"); do
    for m in ON OFF OFF ON; do
      ${prefix[@]+"${prefix[@]}"} "build/layout-$cxx-$m/bench/crew-bench-s$s" "${args[@]}" --json "$out/$m-s$s-r$r-$RANDOM.json" >/dev/null
    done
  done
done
python3 - "$out" "$seeds" <<'EOF'
import glob, json, os, random, re, statistics, sys
out, seeds = sys.argv[1], int(sys.argv[2])
cells = {}  # (problem, impl, threads) -> seed -> mode -> [median_s]
for f in glob.glob(os.path.join(out, "*.json")):
    mode, seed = re.match(r"(ON|OFF)-s(\d+)-", os.path.basename(f)).groups()
    text = open(f).read()
    for m in re.finditer(r'"problem": "([^"]*)", "impl": "([^"]*)", "threads": (\d+), "median_s": ([0-9.e+-]+)', text):
        key = (m.group(1), m.group(2), int(m.group(3)))
        cells.setdefault(key, {}).setdefault(int(seed), {}).setdefault(mode, []).append(float(m.group(4)))
print(f"{'problem':8} {'impl':18} {'thr':>3} {'ON/OFF':>8} {'95% over seeds':>18} {'seeds':>5}")
rng = random.Random(1)
for key in sorted(cells):
    ratios = [statistics.median(v["ON"]) / statistics.median(v["OFF"])
              for v in cells[key].values() if v.get("ON") and v.get("OFF")]
    if not ratios:
        continue
    boot = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    lo, hi = boot[50], boot[1949]
    print(f"{key[0]:8} {key[1]:18} {key[2]:3} {100*(statistics.median(ratios)-1):+7.1f}% "
          f"[{100*(lo-1):+5.1f}, {100*(hi-1):+5.1f}] {len(ratios):5}")
EOF
echo "(ON/OFF per seed = median over its processes; $seeds layouts x $rounds ABBA rounds; JSON in $out/)"
