#!/usr/bin/env bash
# usage: render_trace.sh <trace_skynet> <crew-trace> <chromium>
# Traces a 2-worker skynet on the default pool (CREW_TRACE, written at process exit), renders it
# with `crew-trace view`, and checks the page in headless Chromium:
#   - the DOM Chromium builds has both worker lanes, task bars, and at least one steal arrow;
#   - the page's own script laid out both lanes with a non-empty box and drew the summary rows;
#   - a screenshot renders to a real PNG (kept as trace_view_render.png, with the page as
#     trace_view_render.html, in the working directory).
set -euo pipefail
skynet=$1
viewer=$2
chromium=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

CREW_TRACE="$work/trace.json" CREW_NUM_THREADS=2 "$skynet" || fail "trace_skynet failed"
[ -s "$work/trace.json" ] || fail "no trace written at exit"
"$viewer" check "$work/trace.json" | tee "$work/check.txt"
grep -q ': 2 workers' "$work/check.txt" || fail "the trace does not name 2 workers"
"$viewer" view "$work/trace.json" > "$work/trace.html" || fail "crew-trace view failed"
[ -s "$work/trace.html" ] || fail "no HTML written"
if grep -qiE '(src|href)=["'"'"']?https?:|<link|@import' "$work/trace.html"; then fail "the page loads something from the network"; fi
# Bad input is refused with a message, not rendered.
echo '{"not": "a trace"}' > "$work/bad.json"
if "$viewer" view "$work/bad.json" > /dev/null 2> "$work/bad.txt"; then fail "crew-trace accepted a file without traceEvents"; fi
grep -q 'traceEvents' "$work/bad.txt" || fail "crew-trace did not say what is wrong with the bad file"

run_chromium() {
  local profile; profile=$(mktemp -d "$work/profile.XXXX")
  timeout 180 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" "$@" 2> "$work/chromium.log"
}

run_chromium --window-size=1400,900 --dump-dom "file://$work/trace.html" > "$work/dom.html" || { cat "$work/chromium.log" >&2; fail "chromium --dump-dom failed"; }
count() { grep -o "$1" "$work/dom.html" | wc -l; }
attr() { grep -o "$1=\"[^\"]*\"" "$work/dom.html" | head -1 | sed -E 's/.*="([^"]*)"/\1/'; }
grep -q 'data-rendered="yes"' "$work/dom.html" || fail "the page's script did not finish: $(grep -o 'id="error">[^<]*' "$work/dom.html")"
lanes=$(count 'class="lane"')
plots=$(count 'class="lane-plot"')
bars=$(count 'class="task task-')
arrows=$(count 'class="steal"')
rows=$(count 'class="worker-row"')
laid_out=$(attr data-lanes-laid-out)
echo "lanes: $lanes (laid out: $laid_out), task bars: $bars, steal arrows: $arrows, summary rows: $rows"
[ "$lanes" -eq 2 ] || fail "expected 2 worker lanes, found $lanes"
[ "$plots" -eq 2 ] || fail "expected 2 lane plots, found $plots"
[ "$laid_out" = 2 ] || fail "expected both lanes laid out with content, got '$laid_out'"
[ "$bars" -ge 2 ] || fail "expected task bars, found $bars"
[ "$arrows" -ge 1 ] || fail "expected at least one steal arrow, found $arrows"
[ "$rows" -eq 2 ] || fail "expected 2 rows in the summary table, found $rows"
[ "$(attr data-steal-arrows)" = "$arrows" ] || fail "the page counted $(attr data-steal-arrows) arrows, the DOM has $arrows"
grep -q 'stolen task' "$work/dom.html" || fail "no stolen task in the page"

run_chromium --window-size=1400,900 --screenshot="$work/shot.png" "file://$work/trace.html" > /dev/null || fail "chromium --screenshot failed"
[ -s "$work/shot.png" ] || fail "no screenshot"
[ "$(head -c 8 "$work/shot.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "the screenshot is not a PNG"
[ "$(stat -c %s "$work/shot.png")" -gt 20000 ] || fail "the screenshot is suspiciously small"
cp "$work/shot.png" trace_view_render.png
cp "$work/trace.html" trace_view_render.html
echo "PASS: trace rendered with $lanes lanes, $bars task bars and $arrows steal arrows (screenshot: $PWD/trace_view_render.png)"
