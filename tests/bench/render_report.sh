#!/usr/bin/env bash
# usage: render_report.sh <crew-bench> <chromium>
# Runs crew-bench on a tiny configuration, then checks the HTML report in headless Chromium:
#   - the DOM Chromium builds has one time chart per problem, speed-up and overhead charts, bars;
#   - the page's own script counted the charts that were actually laid out (non-empty boxes);
#   - a screenshot renders to a real PNG;
#   - the JSON has one cell per (problem, implementation, thread count) and no failed cell.
set -euo pipefail
bench=$1
chromium=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

"$bench" --quick --problems skynet,imbalanced_for,deque --threads 1,2 --reps 1 --budget 5 \
  --html "$work/report.html" --json "$work/report.json" > "$work/table.txt"
cat "$work/table.txt"
[ -s "$work/report.html" ] || fail "no HTML report written"
grep -q 'report: ' "$work/table.txt" || fail "crew-bench did not say where the report is"
if grep -qE 'https?://' "$work/report.html"; then fail "the report references the network"; fi

run_chromium() {
  local profile; profile=$(mktemp -d "$work/profile.XXXX")
  timeout 180 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" "$@" 2> "$work/chromium.log"
}

run_chromium --dump-dom "file://$work/report.html" > "$work/dom.html" || { cat "$work/chromium.log" >&2; fail "chromium --dump-dom failed"; }
count() { grep -o "$1" "$work/dom.html" | wc -l; }
time_charts=$(count 'class="chart chart-time"')
speedup_charts=$(count 'class="chart chart-speedup"')
overhead_charts=$(count 'class="chart chart-overhead"')
bars=$(count 'class="bar"')
echo "time charts: $time_charts, speed-up charts: $speedup_charts, overhead charts: $overhead_charts, bars: $bars"
[ "$time_charts" -eq 3 ] || fail "expected 3 time charts (one per problem), found $time_charts"
[ "$speedup_charts" -ge 2 ] || fail "expected speed-up charts for skynet and imbalanced_for, found $speedup_charts"
[ "$overhead_charts" -ge 1 ] || fail "expected a per-task overhead chart, found $overhead_charts"
[ "$bars" -ge 10 ] || fail "expected bars in the charts, found $bars"
for p in skynet imbalanced_for deque; do
  grep -q "data-problem=\"$p\"" "$work/dom.html" || fail "no chart for $p"
done
grep -q 'Machine:' "$work/dom.html" || fail "no machine description"
grep -q -- '--problems skynet,imbalanced_for,deque' "$work/dom.html" || fail "the exact command is missing"
rendered=$(grep -o 'data-charts-rendered="[0-9]*"' "$work/dom.html" | grep -o '[0-9]*' || echo 0)
total=$((time_charts + speedup_charts + overhead_charts))
echo "charts laid out by the browser: $rendered of $total"
[ "$rendered" -eq "$total" ] || fail "only $rendered of $total charts were laid out with a non-empty box"

run_chromium --window-size=1200,1600 --screenshot="$work/shot.png" "file://$work/report.html" > /dev/null || fail "chromium --screenshot failed"
[ -s "$work/shot.png" ] || fail "no screenshot"
[ "$(head -c 8 "$work/shot.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "the screenshot is not a PNG"
[ "$(stat -c %s "$work/shot.png")" -gt 20000 ] || fail "the screenshot is suspiciously small"

cells=$(grep -o '"impl": ' "$work/report.json" | wc -l)
# At least: skynet serial + (crew + 2 baselines) x 2 threads = 7, imbalanced_for serial + (crew + static) x 2 = 5, deque 2.
[ "$cells" -ge 14 ] || fail "expected at least 14 cells in the JSON, found $cells"
if grep -q '"error": "[^"]' "$work/report.json"; then fail "a cell failed: $(grep -o '"error": "[^"]*"' "$work/report.json" | head -1)"; fi
echo "PASS: report rendered with $total charts"
