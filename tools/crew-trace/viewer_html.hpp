// tools/crew-trace/viewer_html.hpp -- the page `crew-trace view` writes: inline style and script,
// no network. @TITLE@ is replaced by the trace's file name, @TRACE_JSON@ by the trace itself.
//
// What the script draws (an SVG): one lane per worker (class "lane"), tasks as bars (class
// "task", coloured by where the task came from; nested tasks -- run by a worker waiting in a
// join or task_group -- drawn thinner below their parent; bars thinner than a pixel merged), steals
// as arrows from the victim's lane to the thief's (class "steal"), parked time shaded (class
// "park"), a time axis; the mouse wheel zooms around the pointer, a drag pans, "reset" shows all.
// Below: a summary table per worker computed from the trace. For tests, <body> gets
// data-lanes, data-lanes-laid-out, data-task-bars, data-steal-arrows and data-rendered="yes".
#pragma once

namespace crew_trace {

inline constexpr const char* viewer_html = R"crewhtml(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>crew trace: @TITLE@</title>
<style>
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; margin: 0 0 4px 0; }
#controls { margin: 6px 0; }
#chart { border: 1px solid #ccc; background: #fff; cursor: grab; display: block; }
.lane-bg { fill: #fafafa; stroke: #eee; }
.lane-label { font-size: 12px; fill: #333; }
.park { fill: #9aa3ad; opacity: 0.35; }
.park.join-wait { fill: #c9a0dc; }
.task { stroke: none; }
.task-local { fill: #4c9a5b; }
.task-stolen { fill: #e8871e; }
.task-injected { fill: #3a76c4; }
.steal { stroke: #c0392b; stroke-width: 1.5; }
.axis text { font-size: 11px; fill: #555; }
.axis line { stroke: #ccc; }
.legend span { display: inline-block; width: 12px; height: 12px; vertical-align: middle; margin: 0 4px 0 12px; }
table { border-collapse: collapse; margin-top: 12px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f0f0f0; }
td:first-child, th:first-child { text-align: left; }
#notes { color: #7a4b00; margin-top: 8px; }
#error { color: #b00020; font-weight: bold; }
</style></head>
<body data-rendered="no">
<h1>crew trace: @TITLE@</h1>
<div class="legend">
  <span style="background:#4c9a5b"></span>local task (popped from its own deque)
  <span style="background:#e8871e"></span>stolen task
  <span style="background:#3a76c4"></span>injected task (submitted from outside)
  <span style="background:#9aa3ad;opacity:.5"></span>parked (idle)
  <span style="background:#c9a0dc;opacity:.5"></span>blocked in a join/wait
  <span style="background:#c0392b;height:3px"></span>steal: victim &rarr; thief
</div>
<div id="controls"><button id="reset">reset zoom</button> <span id="window"></span>
  &nbsp; (mouse wheel: zoom, drag: pan; hover a bar for details)</div>
<div id="error"></div>
<svg id="chart" xmlns="http://www.w3.org/2000/svg"></svg>
<div id="notes"></div>
<table id="summary"></table>
<script id="trace-data" type="application/json">@TRACE_JSON@</script>
<script>
"use strict";
const SVG = "http://www.w3.org/2000/svg";
const LANE_H = 46, TOP = 24, LEFT = 120, RIGHT = 16;

function load() {
  const raw = JSON.parse(document.getElementById("trace-data").textContent);
  const events = Array.isArray(raw) ? raw : (raw.traceEvents || []);
  const other = raw.otherData || {};
  const names = new Map(), tids = new Set();
  const tasks = [], parks = [], starts = new Map(), ends = new Map();
  let tmin = Infinity, tmax = -Infinity;
  for (const e of events) {
    if (e.ph === "M") { if (e.name === "thread_name") { names.set(e.tid, e.args.name); tids.add(e.tid); } continue; }
    if (typeof e.ts !== "number") continue;
    tids.add(e.tid);
    tmin = Math.min(tmin, e.ts);
    tmax = Math.max(tmax, e.ts + (e.ph === "X" ? e.dur : 0));
    if (e.ph === "X" || e.ph === "B") {
      const s = { tid: e.tid, ts: e.ts, end: e.ph === "X" ? e.ts + e.dur : null, name: e.name, args: e.args || {} };
      if (e.cat === "task") tasks.push(s); else if (e.cat === "park") parks.push(s);
    } else if (e.ph === "s") starts.set(e.id, e);
    else if (e.ph === "f") ends.set(e.id, e);
  }
  if (tmin === Infinity) { tmin = 0; tmax = 1; }
  if (tmax <= tmin) tmax = tmin + 1;
  for (const s of tasks.concat(parks)) if (s.end === null) s.end = tmax;  // still open at dump time
  const steals = [];
  for (const [id, f] of ends) { const s = starts.get(id); if (s) steals.push({ ts: f.ts, victim: s.tid, thief: f.tid }); }
  const lanes = [...tids].sort((a, b) => a - b);
  // Nesting depth of each task within its lane (a waiting worker runs tasks inside a task).
  const byLane = new Map(lanes.map(t => [t, []]));
  for (const s of tasks) byLane.get(s.tid).push(s);
  for (const list of byLane.values()) {
    list.sort((a, b) => a.ts - b.ts || b.end - a.end);
    const stack = [];
    for (const s of list) {
      while (stack.length && stack[stack.length - 1] <= s.ts) stack.pop();
      s.depth = stack.length;
      stack.push(s.end);
    }
  }
  return { names, lanes, tasks, parks, steals, tmin, tmax, other, byLane };
}

function fmt(us) {
  const trim = v => String(Number(v.toPrecision(4)));
  if (us >= 1e6) return trim(us / 1e6) + " s";
  if (us >= 1e3) return trim(us / 1e3) + " ms";
  if (us >= 1) return trim(us) + " \u00b5s";
  return (us * 1e3).toFixed(0) + " ns";
}

function el(name, attrs, parent) {
  const n = document.createElementNS(SVG, name);
  for (const k in attrs) n.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(n);
  return n;
}

function kindClass(name) {
  return name.startsWith("stolen") ? "task-stolen" : name.startsWith("injected") ? "task-injected" : "task-local";
}

function render(T, t0, t1) {
  const svg = document.getElementById("chart");
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const width = Math.max(900, window.innerWidth - 40);
  const height = TOP + T.lanes.length * LANE_H + 8;
  svg.setAttribute("width", width); svg.setAttribute("height", height);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const span = t1 - t0, plotW = width - LEFT - RIGHT;
  const x = t => LEFT + (t - t0) / span * plotW;
  const laneIndex = new Map(T.lanes.map((t, i) => [t, i]));
  const laneTop = tid => TOP + laneIndex.get(tid) * LANE_H;
  el("defs", {}, svg).innerHTML =
    '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">' +
    '<path d="M0,0 L10,5 L0,10 z" fill="#c0392b"/></marker>' +
    `<clipPath id="plot"><rect x="${LEFT}" y="0" width="${plotW}" height="${height}"/></clipPath>`;
  // Axis.
  const axis = el("g", { class: "axis" }, svg);
  const rough = span / 8, pow = Math.pow(10, Math.floor(Math.log10(rough)));
  const step = [1, 2, 5, 10].map(m => m * pow).find(s => s >= rough) || rough;
  for (let t = Math.ceil((t0 - T.tmin) / step) * step; T.tmin + t <= t1; t += step) {
    const px = x(T.tmin + t);
    el("line", { x1: px, x2: px, y1: TOP - 4, y2: height - 8 }, axis);
    el("text", { x: px + 2, y: TOP - 8 }, axis).textContent = fmt(t);
  }
  let bars = 0, laidOut = 0;
  for (const tid of T.lanes) {
    const top = laneTop(tid);
    const lane = el("g", { class: "lane", "data-worker": tid - 1 }, svg);
    el("rect", { class: "lane-bg", x: LEFT, y: top, width: plotW, height: LANE_H - 4 }, lane);
    el("text", { class: "lane-label", x: 6, y: top + LANE_H / 2 + 2 }, lane).textContent = T.names.get(tid) || ("worker " + (tid - 1));
  }
  const plot = el("g", { "clip-path": "url(#plot)" }, svg);
  for (const tid of T.lanes) {
    const top = laneTop(tid);
    const g = el("g", { class: "lane-plot", "data-worker": tid - 1 }, plot);
    for (const p of T.parks) {
      if (p.tid !== tid || p.end < t0 || p.ts > t1) continue;
      const r = el("rect", { class: "park" + (p.args.on === "join wait" ? " join-wait" : ""), x: x(p.ts), y: top,
                             width: Math.max(1, x(p.end) - x(p.ts)), height: LANE_H - 4 }, g);
      el("title", {}, r).textContent = `parked (${p.args.on || "idle"}) ${fmt(p.end - p.ts)}` +
        (p.args.wake_latency_ns ? `, woken ${fmt(p.args.wake_latency_ns / 1000)} after the wake request` : "");
    }
    // Bars, merged while they fall within the same pixel at the same depth.
    const open = [], done = [];
    const flush = b => done.push(b);
    for (const s of T.byLane.get(tid)) {
      if (s.end < t0 || s.ts > t1) continue;
      const x0 = x(s.ts), x1 = x(s.end), cls = kindClass(s.name), d = s.depth;
      const cur = open[d];
      if (cur && x0 <= cur.x1 + 0.5 && (cur.x1 - cur.x0 < 2 || x1 - x0 < 2)) {
        cur.x1 = Math.max(cur.x1, x1); cur.n++; cur.busy += s.end - s.ts;
        if (cls === "task-stolen") cur.cls = cls;
        continue;
      }
      if (cur) flush(cur);
      for (let k = d + 1; k < open.length; ++k) if (open[k]) { flush(open[k]); open[k] = null; }
      open[d] = { x0, x1, cls, n: 1, busy: s.end - s.ts, name: s.name, ts: s.ts, depth: d };
    }
    for (const b of open) if (b) flush(b);
    done.sort((p, q) => p.depth - q.depth);  // a parent under its nested tasks
    for (const b of done) {
      const r = el("rect", { class: "task " + b.cls + (b.n > 1 ? " merged" : ""), x: b.x0, width: Math.max(1, b.x1 - b.x0),
                             y: top + 3 + Math.min(b.depth, 4) * 5, height: Math.max(6, LANE_H - 10 - Math.min(b.depth, 4) * 8) }, g);
      el("title", {}, r).textContent = b.n > 1 ? `${b.n} tasks, ${fmt(b.busy)} in all` : `${b.name} ${fmt(b.busy)} at ${fmt(b.ts - T.tmin)}`;
      ++bars;
    }
    const box = g.getBBox();  // laid out: the lane has drawn content with a non-empty box
    if (box.width > 0 && box.height > 0) ++laidOut;
  }
  // Steal arrows, at most one per pixel column and lane pair.
  let arrows = 0;
  const seen = new Set();
  for (const s of T.steals) {
    if (s.ts < t0 || s.ts > t1 || !laneIndex.has(s.victim) || !laneIndex.has(s.thief)) continue;
    const px = Math.round(x(s.ts)), key = px + ":" + s.victim + ":" + s.thief;
    if (seen.has(key)) continue;
    seen.add(key);
    const down = laneIndex.get(s.thief) > laneIndex.get(s.victim);
    const y1 = laneTop(s.victim) + (down ? LANE_H - 8 : 4), y2 = laneTop(s.thief) + (down ? 4 : LANE_H - 8);
    const line = el("line", { class: "steal", x1: px, y1, x2: px + 4, y2, "marker-end": "url(#arrow)" }, plot);
    el("title", {}, line).textContent = `steal at ${fmt(s.ts - T.tmin)}: worker ${s.victim - 1} \u2192 worker ${s.thief - 1}`;
    ++arrows;
  }
  document.getElementById("window").textContent = `showing ${fmt(t0 - T.tmin)} to ${fmt(t1 - T.tmin)} of ${fmt(T.tmax - T.tmin)}`;
  const b = document.body.dataset;
  b.lanes = T.lanes.length; b.lanesLaidOut = laidOut; b.taskBars = bars; b.stealArrows = arrows;
}

function summarize(T) {
  const table = document.getElementById("summary");
  const total = T.tmax - T.tmin;
  const dropped = T.other.dropped_events || [];
  let html = "<tr><th>worker</th><th>tasks</th><th>local</th><th>stolen</th><th>injected</th><th>steals (as thief)</th>" +
             "<th>stolen from it</th><th>busy</th><th>parked</th><th>blocked in joins</th><th>busy %</th><th>dropped events</th></tr>";
  const notes = [];
  for (const tid of T.lanes) {
    const list = T.byLane.get(tid);
    const count = k => list.filter(s => kindClass(s.name) === k).length;
    let busy = 0, parked = 0, blocked = 0;
    for (const s of list) if (s.depth === 0) busy += s.end - s.ts;
    for (const p of T.parks) if (p.tid === tid) { if (p.args.on === "join wait") blocked += p.end - p.ts; else parked += p.end - p.ts; }
    busy = Math.max(0, busy - blocked);
    const thief = T.steals.filter(s => s.thief === tid).length, victim = T.steals.filter(s => s.victim === tid).length;
    const d = dropped[tid - 1] || 0;
    if (d > 0) notes.push(`${T.names.get(tid) || tid}: the oldest ${d} events were overwritten (ring full); its lane starts late.`);
    html += `<tr class='worker-row'><td>${T.names.get(tid) || ("worker " + (tid - 1))}</td><td>${list.length}</td>` +
            `<td>${count("task-local")}</td><td>${count("task-stolen")}</td><td>${count("task-injected")}</td>` +
            `<td>${thief}</td><td>${victim}</td><td>${fmt(busy)}</td><td>${fmt(parked)}</td><td>${fmt(blocked)}</td>` +
            `<td>${(100 * busy / total).toFixed(1)} %</td><td>${d}</td></tr>`;
  }
  table.innerHTML = html;
  document.getElementById("notes").textContent = notes.join(" ") +
    ` Busy = time in top-level tasks minus time blocked in joins; percentages are of the ${fmt(total)} the trace covers.`;
}

try {
  const T = load();
  let t0 = T.tmin, t1 = T.tmax;
  const draw = () => render(T, t0, t1);
  draw();
  summarize(T);
  const svg = document.getElementById("chart");
  svg.addEventListener("wheel", ev => {
    ev.preventDefault();
    const rect = svg.getBoundingClientRect(), plotW = rect.width - LEFT - RIGHT;
    const at = t0 + Math.min(1, Math.max(0, (ev.clientX - rect.left - LEFT) / plotW)) * (t1 - t0);
    const f = ev.deltaY < 0 ? 0.8 : 1.25;
    t0 = Math.max(T.tmin, at - (at - t0) * f); t1 = Math.min(T.tmax, at + (t1 - at) * f);
    if (t1 - t0 < 0.01) t1 = t0 + 0.01;
    draw();
  }, { passive: false });
  let dragX = null;
  svg.addEventListener("mousedown", ev => { dragX = ev.clientX; });
  window.addEventListener("mouseup", () => { dragX = null; });
  window.addEventListener("mousemove", ev => {
    if (dragX === null) return;
    const plotW = svg.getBoundingClientRect().width - LEFT - RIGHT;
    let dt = -(ev.clientX - dragX) / plotW * (t1 - t0);
    dt = Math.max(T.tmin - t0, Math.min(T.tmax - t1, dt));
    t0 += dt; t1 += dt; dragX = ev.clientX;
    draw();
  });
  document.getElementById("reset").addEventListener("click", () => { t0 = T.tmin; t1 = T.tmax; draw(); });
  document.body.dataset.rendered = "yes";
} catch (err) {
  document.getElementById("error").textContent = "This trace could not be shown: " + err;
  document.body.dataset.rendered = "error";
}
</script>
</body></html>
)crewhtml";

}  // namespace crew_trace
