// The intpath live view: plain JavaScript drawing SVG and canvas by hand,
// reading the JSON API of `intpath serve` (web/src/api/) and its live
// stream of server-sent events. Every text from the database goes in as
// textContent, never as markup.
"use strict";

// Any error of the page itself is written into the page (and counted in
// body[data-errors]), where a person and the browser test both see it.
let pageErrors = 0;
function pageError(msg) {
  pageErrors += 1;
  document.body.dataset.errors = String(pageErrors);
  const box = document.getElementById("page-errors");
  box.hidden = false;
  box.textContent += msg + "\n";
}
window.addEventListener("error", (e) => pageError("error: " + e.message));
window.addEventListener("unhandledrejection", (e) =>
  pageError("unhandled: " + (e.reason && e.reason.message ? e.reason.message : e.reason)));

const state = {
  run: null,        // null: follow the newest run
  shownRun: null,   // the run on screen
  metric: "qdepth",
  runs: [],
  topo: null,
  rows: [],         // the heatmap rows on screen
  link: null,       // the selected link's name
  culprit: null,    // the selected culprit's index
  source: null,     // the EventSource
  lastSide: 0,      // when the snapshot and paths were last refreshed
  lastRuns: 0,      // when the run list was
  lastDiagnosis: 0, // and the diagnosis
  updates: 0,
};

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

// An answer of the API; its `{"error": ...}` becomes the thrown message.
async function api(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== null && v !== undefined) q.set(k, v);
  }
  const r = await fetch(path + (q.toString() ? "?" + q : ""));
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

// Shows an API failure where the panel's content would be.
function failed(node, e) {
  clear(node).appendChild(el("p", { class: "muted" }, "cannot read: " + e.message));
}

// A number with `digits` decimals (1 by default); no "-0.0".
function fmt(v, digits) {
  if (v === null || v === undefined) return "–";
  const d = digits === undefined ? 1 : digits;
  const s = Number(v).toFixed(d);
  return Number(s) === 0 ? (0).toFixed(d) : s;
}

// Viridis, sampled: dark blue (low) to yellow (high).
const STOPS = [[68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
  [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37]];
function colour(t) {
  const x = Math.max(0, Math.min(1, t)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const c = STOPS[i].map((a, k) => Math.round(a + (STOPS[i + 1][k] - a) * f));
  return "rgb(" + c.join(",") + ")";
}

function legend(max, unit) {
  const box = el("div", { class: "legend" });
  box.appendChild(el("span", {}, "0"));
  const c = el("canvas", { width: 120, height: 10 });
  const g = c.getContext("2d");
  for (let x = 0; x < 120; x++) {
    g.fillStyle = colour(x / 119);
    g.fillRect(x, 0, 1, 10);
  }
  box.appendChild(c);
  box.appendChild(el("span", {}, fmt(max) + " " + unit));
  box.appendChild(el("span", { class: "muted" }, "grey: no probe crossed the link"));
  return box;
}

// ---- links × time ---------------------------------------------------------

function drawHeatmap(h) {
  const box = clear($("heatmap"));
  state.rows = h.rows;
  $("hm-title").textContent = h.title + " (" + h.unit + "), run " + h.run +
    (h.columns ? ", " + fmt(h.t0) + "–" + fmt(h.t0 + h.columns * h.column_s) + " s" : "");
  box.dataset.run = String(h.run);
  box.dataset.end = h.end_s === null ? "" : String(h.end_s);
  if (!h.columns) {
    box.appendChild(el("p", { class: "muted" }, "no telemetry in run " + h.run + " yet"));
    delete box.dataset.hottest;
    return;
  }
  let hottest = null;
  let max = 0;
  for (const r of h.rows) {
    if (r.mean !== null && (hottest === null || r.mean > hottest.mean)) hottest = r;
    if (r.max !== null) max = Math.max(max, r.max);
  }
  box.dataset.hottest = hottest ? hottest.name : "";
  // Links no probe crossed in the range (host links of a plan without
  // them) are listed in one line rather than drawn as grey rows.
  const rows = h.rows.filter((r) => r.mean !== null);
  const idle = h.rows.filter((r) => r.mean === null).map((r) => r.name);
  const rowH = rows.length > 40 ? 8 : 12;
  const labels = el("div", { class: "hm-labels" + (rowH < 12 ? " small" : "") });
  for (const r of rows) {
    const row = el("div", { class: "hm-row", "data-link": r.name, "data-mean": r.mean === null ? "" : String(r.mean) },
      (r === hottest ? "★ " : "") + r.name);
    if (r === hottest) row.classList.add("hottest");
    if (r.name === state.link) row.classList.add("selected");
    row.title = r.name + ": mean " + fmt(r.mean) + ", max " + fmt(r.max) + " " + h.unit;
    row.addEventListener("click", () => selectLink(r.name));
    labels.appendChild(row);
  }
  const plot = el("div", { class: "hm-plot" });
  box.appendChild(labels);
  box.appendChild(plot);
  const width = Math.max(200, (plot.clientWidth || 600) - 4);
  const height = rows.length * rowH + 18;
  const c = el("canvas", { width: width, height: height });
  plot.appendChild(c);
  const g = c.getContext("2d");
  const cw = width / h.columns;
  rows.forEach((r, y) => {
    r.values.forEach((v, x) => {
      g.fillStyle = v === null ? "#ddd" : colour(max > 0 ? v / max : 0);
      g.fillRect(Math.floor(x * cw), y * rowH, Math.ceil(cw), rowH - 1);
    });
  });
  // Time axis: about six ticks, in seconds after the run's first probe.
  g.fillStyle = "#444";
  g.font = "10px sans-serif";
  const span = h.columns * h.column_s;
  const step = niceStep(span / 6);
  for (let t = Math.ceil(h.t0 / step) * step; t < h.t0 + span; t += step) {
    const x = ((t - h.t0) / span) * width;
    g.fillRect(x, rows.length * rowH, 1, 4);
    g.fillText(fmt(t, step < 1 ? 1 : 0) + " s", x + 2, rows.length * rowH + 14);
  }
  c.addEventListener("click", (ev) => {
    const r = rows[Math.floor(ev.offsetY / rowH)];
    if (r) selectLink(r.name);
  });
  box.parentNode.querySelectorAll(".legend, .idle").forEach((n) => n.remove());
  const key = legend(max, h.unit);
  box.after(key);
  if (idle.length) key.after(el("p", { class: "muted idle" }, "no probe crossed " + idle.length + " links: " + idle.join(" ")));
  paintCables();
}

function niceStep(raw) {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-3))));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

// ---- live -----------------------------------------------------------------

function follow() {
  if (state.source) state.source.close();
  const q = new URLSearchParams({ metric: state.metric });
  if (state.run !== null) q.set("run", state.run);
  const es = new EventSource("/api/live?" + q);
  state.source = es;
  es.addEventListener("update", (ev) => {
    const u = JSON.parse(ev.data);
    state.updates += 1;
    document.body.dataset.updates = String(state.updates);
    const live = $("live");
    live.className = state.run === null ? "on" : "";
    live.textContent = (state.run === null ? "live: " : "") + "run " + u.run +
      (u.probes === null ? "" : ", " + u.probes + " probes") + ", " + new Date().toLocaleTimeString();
    const newRun = u.run !== state.shownRun;
    state.shownRun = u.run;
    drawHeatmap(u.heatmap);
    if (newRun || !state.runs.some((r) => r.run === u.newest_run)) {
      loadRuns();
      loadRun();
    } else if (Date.now() - state.lastSide > 2000) {
      loadSide();
    }
    // While a run grows, its spans do too: diagnose it again now and then.
    if (state.run === null && Date.now() - state.lastDiagnosis > 30000) loadDiagnosis();
  });
  es.addEventListener("waiting", (ev) => {
    $("live").className = "";
    $("live").textContent = "waiting: " + ev.data;
  });
  es.addEventListener("problem", (ev) => {
    $("live").className = "";
    $("live").textContent = "problem: " + ev.data;
  });
}

// ---- runs -----------------------------------------------------------------

async function loadRuns() {
  state.lastRuns = Date.now();
  let body;
  try {
    body = await api("/api/runs");
  } catch (e) {
    failed($("runs"), e);
    return;
  }
  $("db").textContent = body.db;
  state.runs = body.runs;
  const sel = $("run");
  const keep = sel.value;
  clear(sel).appendChild(el("option", { value: "" }, "newest (live)"));
  for (const r of body.runs) sel.appendChild(el("option", { value: String(r.run) }, "run " + r.run));
  sel.value = keep;
  const box = clear($("runs"));
  if (body.waiting) box.appendChild(el("p", { class: "muted" }, "waiting: " + body.waiting));
  const t = el("table");
  const head = el("tr");
  for (const c of ["run", "topology", "plan", "bucket ms", "store", "probes", "raw probes", "hop records"]) {
    head.appendChild(el("th", { class: c.includes("probes") || c.includes("records") ? "num" : "" }, c));
  }
  t.appendChild(head);
  for (const r of body.runs.slice().reverse()) {
    const tr = el("tr", { class: "clickable", "data-run": String(r.run) });
    if (r.run === state.shownRun) tr.classList.add("selected");
    for (const [v, num] of [[r.run], [r.topology], [r.plan], [r.bucket_ms], [r.store], [r.probes, 1], [r.raw_probes, 1], [r.hops, 1]]) {
      tr.appendChild(el("td", { class: num ? "num" : "" }, v));
    }
    tr.addEventListener("click", () => chooseRun(String(r.run)));
    t.appendChild(tr);
  }
  box.appendChild(t);
}

function chooseRun(value) {
  $("run").value = value;
  state.run = value === "" ? null : Number(value);
  state.shownRun = null;
  state.link = null;
  follow();
}

// Everything drawn per run: topology, snapshot, paths, diagnosis.
function loadRun() {
  loadTopology();
  loadSide();
  loadDiagnosis();
}

function loadSide() {
  if (Date.now() - state.lastRuns > 10000) loadRuns();
  state.lastSide = Date.now();
  loadSnapshot();
  loadPaths();
  if (state.link) loadLink();
}

function runParam() {
  return state.shownRun === null ? null : state.shownRun;
}

// ---- topology -------------------------------------------------------------

async function loadTopology() {
  try {
    state.topo = await api("/api/topology", { run: runParam() });
  } catch (e) {
    failed($("topology"), e);
    return;
  }
  drawTopology();
}

// Layered layout: hosts at the bottom, each switch one row above its
// nearest host (edge, aggregation, core in a FatTree); within a row, nodes
// ordered by the mean position of their neighbours below.
function layout(topo, width, height) {
  const adj = new Map(topo.nodes.map((n) => [n.name, []]));
  for (const c of topo.cables) {
    if (adj.has(c.a) && adj.has(c.b)) {
      adj.get(c.a).push(c.b);
      adj.get(c.b).push(c.a);
    }
  }
  const level = new Map();
  let frontier = topo.nodes.filter((n) => !n.switch).map((n) => n.name);
  if (frontier.length === 0 && topo.nodes.length) frontier = [topo.nodes[0].name];
  frontier.forEach((n) => level.set(n, 0));
  while (frontier.length) {
    const next = [];
    for (const n of frontier) {
      for (const m of adj.get(n)) {
        if (!level.has(m)) {
          level.set(m, level.get(n) + 1);
          next.push(m);
        }
      }
    }
    frontier = next;
  }
  for (const n of topo.nodes) if (!level.has(n.name)) level.set(n.name, 0);
  const top = Math.max(0, ...level.values());
  const rows = [];
  for (const n of topo.nodes) (rows[level.get(n.name)] = rows[level.get(n.name)] || []).push(n.name);
  const pos = new Map();
  const place = (row, y) => row.forEach((n, i) => pos.set(n, [((i + 0.5) / row.length) * width, y]));
  const rowY = (l) => (top === 0 ? height / 2 : 20 + ((top - l) / top) * (height - 40));
  for (let l = 0; l <= top; l++) {
    const row = rows[l] || [];
    if (l > 0) {
      const bary = (n) => {
        const below = adj.get(n).filter((m) => level.get(m) < l && pos.has(m));
        return below.length ? below.reduce((s, m) => s + pos.get(m)[0], 0) / below.length : width / 2;
      };
      row.sort((a, b) => bary(a) - bary(b));
    }
    place(row, rowY(l));
  }
  return pos;
}

const PATH_COLOURS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324"];

function drawTopology() {
  const topo = state.topo;
  $("topo-origin").textContent = "run " + topo.run + (topo.origin === "run " + topo.run ? "" : ", " + topo.origin);
  const box = clear($("topology"));
  const width = Math.max(300, box.clientWidth || 500);
  const height = 320;
  const pos = layout(topo, width, height);
  const s = svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height });
  for (const c of topo.cables) {
    const a = pos.get(c.a);
    const b = pos.get(c.b);
    if (!a || !b) continue;
    const line = svg("line", { class: "cable", x1: a[0], y1: a[1], x2: b[0], y2: b[1], "data-a": c.a, "data-b": c.b });
    line.appendChild(svg("title", {}, c.a + ":" + c.a_port + " — " + c.b + ":" + c.b_port));
    line.addEventListener("click", () => {
      const d = topo.links.find((l) => l.src === c.a && l.dst === c.b) || topo.links.find((l) => l.src === c.b && l.dst === c.a);
      if (d) selectLink(d.name);
    });
    s.appendChild(line);
  }
  topo.paths.forEach((p, k) => {
    const off = (k - (topo.paths.length - 1) / 2) * 3;
    const pts = p.nodes.map((n) => pos.get(n)).filter((q) => q).map((q) => (q[0] + off) + "," + (q[1] + off));
    const line = svg("polyline", { class: "path-line", points: pts.join(" "), stroke: PATH_COLOURS[k % PATH_COLOURS.length], "data-path": String(p.id) });
    s.appendChild(line);
  });
  for (const n of topo.nodes) {
    const q = pos.get(n.name);
    if (n.switch) {
      s.appendChild(svg("rect", { class: "node-switch", x: q[0] - 9, y: q[1] - 7, width: 18, height: 14, rx: 2 }));
      s.appendChild(svg("text", { x: q[0], y: q[1] + 3.5, "text-anchor": "middle", fill: "#fff" }, n.name));
    } else {
      s.appendChild(svg("circle", { class: "node-host", cx: q[0], cy: q[1], r: 3 }));
      const label = svg("title", {}, n.name);
      s.lastChild.appendChild(label);
    }
  }
  box.appendChild(s);
  const keyBox = el("div", { class: "legend" });
  topo.paths.forEach((p, k) => {
    const sw = el("span", {}, "━ path " + p.id + " (" + p.links.length + " links)");
    sw.style.color = PATH_COLOURS[k % PATH_COLOURS.length];
    keyBox.appendChild(sw);
  });
  box.appendChild(keyBox);
  paintCables();
}

// Cables coloured by the hotter direction's mean in the heatmap on screen.
function paintCables() {
  const mean = new Map();
  let max = 0;
  for (const r of state.rows) {
    if (r.mean === null) continue;
    const m = /^(.*):\d+->(.*)$/.exec(r.name);
    if (!m) continue;
    const key = [m[1], m[2]].sort().join("|");
    mean.set(key, Math.max(mean.get(key) || 0, r.mean));
    max = Math.max(max, r.mean);
  }
  document.querySelectorAll("#topology .cable").forEach((line) => {
    const v = mean.get([line.dataset.a, line.dataset.b].sort().join("|"));
    line.style.stroke = v === undefined ? "" : colour(max > 0 ? v / max : 0);
  });
}

// ---- switch × switch --------------------------------------------------------

async function loadSnapshot() {
  let snap;
  try {
    snap = await api("/api/snapshot", { run: runParam(), metric: state.metric });
  } catch (e) {
    failed($("snapshot"), e);
    return;
  }
  $("snap-title").textContent = snap.title + " (" + snap.unit + "), mean over the run";
  const box = clear($("snapshot"));
  const n = snap.switches.length;
  if (!n) return;
  const cell = Math.max(6, Math.min(18, Math.floor(380 / n)));
  const margin = 34;
  const size = margin + n * cell;
  const s = svg("svg", { width: size, height: size });
  const idx = new Map(snap.switches.map((name, i) => [name, i]));
  let max = 0;
  for (const c of snap.cells) max = Math.max(max, c.value);
  snap.switches.forEach((name, i) => {
    if (cell >= 10 || i % 2 === 0) {
      s.appendChild(svg("text", { x: margin - 3, y: margin + i * cell + cell * 0.75, "text-anchor": "end" }, name));
      s.appendChild(svg("text", { x: margin + i * cell + cell / 2, y: margin - 4, "text-anchor": "middle" }, name));
    }
  });
  s.appendChild(svg("rect", { x: margin, y: margin, width: n * cell, height: n * cell, fill: "#eee" }));
  for (const c of snap.cells) {
    const r = svg("rect", {
      x: margin + idx.get(c.dst) * cell, y: margin + idx.get(c.src) * cell, width: cell - 1, height: cell - 1,
      fill: colour(max > 0 ? c.value / max : 0), "data-link": c.name, "data-value": String(c.value),
    });
    r.appendChild(svg("title", {}, c.name + ": " + fmt(c.value) + " " + snap.unit));
    r.style.cursor = "pointer";
    r.addEventListener("click", () => selectLink(c.name));
    s.appendChild(r);
  }
  box.appendChild(s);
  box.appendChild(el("p", { class: "muted" }, "row: sending switch, column: receiving switch"));
  box.appendChild(legend(max, snap.unit));
}

// ---- paths ------------------------------------------------------------------

async function loadPaths() {
  let body;
  try {
    body = await api("/api/paths", { run: runParam() });
  } catch (e) {
    failed($("paths"), e);
    return;
  }
  const box = clear($("paths"));
  const t = el("table");
  const head = el("tr");
  for (const c of ["path", "probes", "lost", "loss %", "e2e mean µs", "e2e max µs"]) head.appendChild(el("th", { class: c === "path" ? "" : "num" }, c));
  t.appendChild(head);
  for (const p of body.paths) {
    const tr = el("tr");
    for (const [v, d] of [[p.path], [p.probes], [p.lost], [fmt(p.loss_pct, 2)], [fmt(p.e2e_mean_us, 0)], [fmt(p.e2e_max_us, 0)]]) {
      tr.appendChild(el("td", { class: d === undefined && v !== p.path ? "num" : "" }, v));
    }
    t.appendChild(tr);
  }
  box.appendChild(t);
}

// ---- link detail --------------------------------------------------------------

function selectLink(name) {
  state.link = name;
  document.querySelectorAll(".hm-row").forEach((r) => r.classList.toggle("selected", r.dataset.link === name));
  loadLink();
}

async function loadLink() {
  const box = $("detail");
  let d;
  try {
    d = await api("/api/link", { run: runParam(), link: state.link });
  } catch (e) {
    failed(box, e);
    return;
  }
  $("detail-name").textContent = d.name + " (run " + d.run + ")";
  clear(box).dataset.link = d.name;
  for (const s of d.series) box.appendChild(lineChart(s));
  if (state.topo) {
    const crossing = state.topo.paths.filter((p) => p.links.includes(d.link)).map((p) => p.id);
    box.appendChild(el("p", { class: "muted" }, crossing.length ? "crossed by probe path " + crossing.join(", ") : "no probe path crosses it"));
  }
}

// Mean as a line, min–max as a band, over the run's seconds.
function lineChart(series) {
  const w = 420, h = 90, l = 44, b = 16;
  const s = svg("svg", { width: w, height: h + 4, class: "chart" });
  s.appendChild(svg("text", { x: l, y: 10 }, series.title + " (" + series.unit + ")"));
  const pts = series.points;
  if (!pts.length) {
    s.appendChild(svg("text", { x: l, y: 40, fill: "#888" }, "no samples"));
    return s;
  }
  const t0 = pts[0].t, t1 = pts[pts.length - 1].t || t0 + 1;
  const vmax = Math.max(1e-9, ...pts.map((p) => p.max));
  const x = (t) => l + ((t - t0) / Math.max(t1 - t0, 1e-9)) * (w - l - 6);
  const y = (v) => h - b - (v / vmax) * (h - b - 16);
  const band = pts.map((p) => x(p.t) + "," + y(p.max)).concat(pts.slice().reverse().map((p) => x(p.t) + "," + y(p.min)));
  s.appendChild(svg("polygon", { points: band.join(" "), fill: "#cde", stroke: "none" }));
  s.appendChild(svg("polyline", { points: pts.map((p) => x(p.t) + "," + y(p.mean)).join(" "), fill: "none", stroke: "#236", "stroke-width": 1.2 }));
  s.appendChild(svg("line", { x1: l, y1: h - b, x2: w - 6, y2: h - b, stroke: "#999" }));
  s.appendChild(svg("text", { x: l - 3, y: y(vmax) + 4, "text-anchor": "end" }, fmt(vmax)));
  s.appendChild(svg("text", { x: l - 3, y: h - b, "text-anchor": "end" }, "0"));
  s.appendChild(svg("text", { x: l, y: h - 2 }, fmt(t0) + " s"));
  s.appendChild(svg("text", { x: w - 6, y: h - 2, "text-anchor": "end" }, fmt(t1) + " s"));
  return s;
}

// ---- diagnosis ----------------------------------------------------------------

async function loadDiagnosis() {
  state.lastDiagnosis = Date.now();
  const box = $("diagnosis");
  clear(box).appendChild(el("p", { class: "muted" }, "diagnosing…"));
  let d;
  try {
    d = await api("/api/diagnosis", { run: state.run });
  } catch (e) {
    failed(box, e);
    return;
  }
  clear(box);
  box.dataset.available = String(d.available);
  if (!d.available) {
    box.appendChild(el("p", { class: "muted" }, "no diagnosis: " + d.why));
    return;
  }
  const verdicts = Object.entries(d.verdicts).map(([k, v]) => k + " " + v).join(", ");
  box.appendChild(el("p", {}, d.spans + " spans → " + d.edges + " calls, " + d.slow_edges + " slow; " +
    d.slow_traces + " of " + d.traces + " requests slow" + (verdicts ? " (" + verdicts + ")" : "") +
    (d.int ? ", INT of run " + d.run : ", no INT: " + d.without_int)));
  if (!d.culprits.length) {
    box.appendChild(el("p", {}, "culprits: none; nothing stands out of this run's own variation (" + d.tested + " candidates tested)"));
  }
  const t = el("table", { id: "culprits" });
  const head = el("tr");
  for (const c of ["#", "kind", "culprit", "ms/request", "q", "slow requests", "evidence"]) head.appendChild(el("th", {}, c));
  t.appendChild(head);
  d.culprits.forEach((c, i) => {
    const tr = el("tr", { class: "clickable", "data-kind": c.kind, "data-name": c.name });
    for (const v of [i + 1, c.kind, c.name, fmt(c.score, 3), c.q_value === undefined ? "–" : Number(c.q_value).toExponential(1), c.traces.count]) tr.appendChild(el("td", {}, v));
    const evidence = el("td");
    evidence.appendChild(el("code", {}, JSON.stringify(c.evidence)));
    tr.appendChild(evidence);
    tr.addEventListener("click", () => {
      state.culprit = i;
      t.querySelectorAll("tr").forEach((r) => r.classList.remove("selected"));
      tr.classList.add("selected");
      drawTraces(c);
      if (c.kind === "link" || c.kind === "loss") selectLink(c.name);
    });
    t.appendChild(tr);
  });
  if (d.culprits.length) box.appendChild(t);
  if (d.not_named.length) {
    box.appendChild(el("p", { class: "muted" }, "tested, not named: " +
      d.not_named.slice(0, 5).map((c) => c.kind + " " + c.name + " (q " + (c.q_value === undefined ? "–" : Number(c.q_value).toFixed(2)) + ")").join(", ")));
  }
  box.appendChild(el("div", { id: "traces" }));
  if (d.culprits.length) drawTraces(d.culprits[Math.min(state.culprit || 0, d.culprits.length - 1)]);
}

// The slow requests a culprit explains: each one's critical path, and the
// slow calls the culprit accounts for (a call off the critical path ran
// beside a longer one and held the request up less).
function drawTraces(c) {
  const box = clear($("traces"));
  box.dataset.culprit = c.name;
  box.appendChild(el("h3", {}, c.traces.count + " slow requests with calls " + c.kind + " " + c.name + " slowed, " +
    c.traces.on_critical_path + " of them on the critical path" +
    (c.traces.count > c.traces.worst.length ? " (the " + c.traces.worst.length + " most affected)" : "")));
  const t = el("table");
  const head = el("tr");
  for (const h of ["trace", "ms", "by it", "critical path (callee ms [verdict: culprit])", "its calls"]) head.appendChild(el("th", {}, h));
  t.appendChild(head);
  for (const tr of c.traces.worst) {
    const row = el("tr", { class: "trace", "data-trace": tr.trace });
    row.appendChild(el("td", { class: "chain" }, tr.trace.slice(0, 16)));
    row.appendChild(el("td", { class: "num" }, fmt(tr.span_ms, 2)));
    row.appendChild(el("td", { class: "num" }, fmt(tr.explained_ms, 2)));
    const chain = el("td", { class: "chain" });
    tr.critical_path.forEach((e, k) => {
      if (k) chain.appendChild(document.createTextNode(" → "));
      chain.appendChild(hop(e));
    });
    row.appendChild(chain);
    const calls = el("td", { class: "chain" });
    tr.calls.forEach((e, k) => {
      if (k) calls.appendChild(document.createTextNode(", "));
      calls.appendChild(hop(e));
      calls.appendChild(document.createTextNode(" +" + fmt(e.explained_ms, 2) + (e.on_critical_path ? "" : " (off the critical path)")));
    });
    row.appendChild(calls);
    t.appendChild(row);
  }
  box.appendChild(t);
}

// One call: its callee and time, coloured by its verdict; the split and
// the links it crossed on hover.
function hop(e) {
  const s = el("span", { class: "verdict-" + e.verdict }, e.caller + "→" + e.callee + " " + fmt(e.total_ms, 2) +
    (e.verdict === "ok" ? "" : " [" + e.verdict + (e.culprit ? ": " + e.culprit : "") + "]"));
  s.title = "service " + fmt(e.service_ms, 2) + " ms, network " + fmt(e.network_ms, 2) + " ms, fabric excess " +
    fmt(e.fabric_ms, 2) + " ms" + (e.forward ? "\nforward: " + e.forward.join(" ") + "\nreverse: " + e.reverse.join(" ") : "");
  return s;
}

// ---- start ----------------------------------------------------------------------

$("metric").addEventListener("change", (e) => {
  state.metric = e.target.value;
  follow();
  loadSnapshot();
});
$("run").addEventListener("change", (e) => chooseRun(e.target.value));
$("diagnose").addEventListener("click", () => loadDiagnosis());
loadRuns();
follow();
