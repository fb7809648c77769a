"""The explorer pages' HTML, CSS and script (`page.page_html` fills in the
title and the data): `TEMPLATE` for poker (rank x rank grids for flop hold'em,
a card list for Kuhn and Leduc: `layout` in the data), `TEAM_TEMPLATE` for
team games. Plain DOM code, no libraries, nothing from the network."""

# the start of both pages: document head and the header bar's style
_HEAD = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>__TITLE__</title>
<style>
body { font: 13px/1.4 system-ui, sans-serif; margin: 0; color: #1f2328; background: #fafafa; }
header { padding: 8px 14px; background: #24292f; color: #fff; }
header h1 { font-size: 15px; margin: 0 0 4px; }
"""

TEMPLATE = _HEAD + r"""header .pol { margin: 2px 0; }
#main { display: flex; align-items: flex-start; }
#tree { width: 300px; max-height: calc(100vh - 90px); overflow: auto; padding: 8px; border-right: 1px solid #ddd; }
#tree .tn { display: flex; justify-content: space-between; padding: 1px 4px; border-radius: 3px; white-space: nowrap; }
#tree .tn a { color: inherit; text-decoration: none; }
#tree .tn.current { outline: 2px solid #24292f; }
#tree .gain { font-variant-numeric: tabular-nums; margin-left: 4px; padding: 0 4px; border-radius: 3px; min-width: 48px; text-align: right; }
#view { padding: 8px 14px; flex: 1; }
#path a { color: #0969da; }
#nodeinfo { margin: 6px 0; font-weight: 600; }
button.act { margin: 2px 4px 2px 0; padding: 3px 10px; border: 1px solid #999; border-radius: 4px; background: #fff; cursor: pointer; }
#boardbar { margin: 6px 0; }
#message { color: #9a3412; margin: 6px 0; }
#grids { display: flex; flex-wrap: wrap; gap: 18px; }
.gridbox h3 { margin: 4px 0; font-size: 13px; }
table.grid { border-collapse: collapse; }
table.grid td { width: 44px; height: 34px; padding: 0; border: 1px solid #fff; position: relative; background: #e5e7eb; cursor: pointer; }
table.grid td.empty { background: #f3f4f6; cursor: default; }
table.grid td.unreached { opacity: 0.35; }
table.grid.list td { width: 260px; height: 24px; }
td .bars { position: absolute; inset: 0; display: flex; }
td .bars span { height: 100%; }
td .lbl { position: absolute; left: 2px; top: 1px; font-size: 11px; font-weight: 600; color: #111; text-shadow: 0 0 2px #fff; }
td .num { position: absolute; right: 2px; bottom: 1px; font-size: 9px; color: #111; text-shadow: 0 0 2px #fff; }
.legend span { display: inline-block; width: 10px; height: 10px; margin: 0 3px 0 10px; }
#detail { margin-top: 10px; }
#detail table { border-collapse: collapse; }
#detail td, #detail th { border: 1px solid #ddd; padding: 2px 6px; text-align: right; font-variant-numeric: tabular-nums; }
#detail th { background: #f0f0f0; }
</style>
</head>
<body>
<header><h1 id="title"></h1><div id="summary"></div></header>
<div id="main">
<nav id="tree"></nav>
<section id="view">
<div id="path"></div>
<div id="nodeinfo"></div>
<div id="actions"></div>
<div id="boardbar"><label><span id="boardname">Board</span> <select id="board"></select></label> <span id="boardnote"></span></div>
<div id="message"></div>
<div class="legend" id="legend"></div>
<div id="grids"></div>
<div id="detail"></div>
</section>
</div>
<script id="data" type="application/json">__DATA__</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const R = D.ranks, NODES = D.nodes, P = D.policies;
const COLORS = ["#3b82f6", "#22c55e", "#ef4444"];
const views = Object.assign({}, D.views);
const pending = {};
const parent = NODES.map(() => -1);
NODES.forEach((node, n) => node.c.forEach(c => { parent[c] = n; }));
const state = { n: 0, b: 0, cell: null };

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
function cardName(c) { return D.card_names[c]; }
function handName(h) { return D.hands[h].map(cardName).join(" "); }
function trim(s) { return s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s; }
function fmt(x, d) {
  const [m, e] = Number(x).toPrecision(d || 4).split("e");
  return trim(m) + (e === undefined ? "" : "e" + e);
}
function fixed(x) { return Number(x).toFixed(6); }
function isDecision(n) { return NODES[n].k === "decision"; }
function actionName(n, i) { return NODES[n].n[i]; }  // the name of the node's i-th legal action
function short(name) { return name === "check" ? "k" : name[0]; }
const labels = NODES.map(() => ""), steps = NODES.map(() => "start");
(function label(n) {
  for (let i = 0; i < NODES[n].c.length; i++) {
    const c = NODES[n].c[i];
    if (NODES[n].k === "deal") { labels[c] = labels[n] + " |"; steps[c] = steps[n] + " · " + D.deal_name; }
    else {
      steps[c] = actionName(n, i);
      labels[c] = (labels[n] ? labels[n] + " " : "") + short(steps[c]);
    }
    label(c);
  }
})(0);
function depth(n) { let d = 0; while (parent[n] >= 0) { n = parent[n]; d++; } return d; }
function viewKey(n) { return NODES[n].r < D.first_deal_round ? "pre" : String(state.b); }
function freeHands(key) {
  if (key === "pre") return D.hands.map((h, i) => i);
  const board = new Set(D.boards[Number(key)]);
  const out = [];
  D.hands.forEach((h, i) => { if (h.every(c => !board.has(c))) out.push(i); });
  return out;
}
function cellOf(h) {
  const [c1, c2] = D.hands[h], S = D.suits;
  const r1 = Math.floor(c1 / S), r2 = Math.floor(c2 / S);
  const hi = Math.max(r1, r2), lo = Math.min(r1, r2);
  if (hi === lo) return [R - 1 - hi, R - 1 - hi];
  return c1 % S === c2 % S ? [R - 1 - hi, R - 1 - lo] : [R - 1 - lo, R - 1 - hi];
}
function cellName(i, j) {
  const a = D.rank_names[R - 1 - Math.min(i, j)], b = D.rank_names[R - 1 - Math.max(i, j)];
  return i === j ? a + b : a + b + (i < j ? "s" : "o");
}
function gainColor(g, max) {
  const t = max > 0 ? Math.min(1, g / max) : 0;
  return "rgba(220, 38, 38, " + (0.08 + 0.8 * t).toFixed(3) + ")";
}
const maxGain = P.map(p => Math.max(0, ...NODES.map((node, n) => isDecision(n) ? p.node_gain[n] : 0)));

function parseHash() {
  const q = new URLSearchParams(location.hash.slice(1));
  const n = Number(q.get("n") || 0), b = Number(q.get("b") || 0);
  state.n = Number.isInteger(n) && n >= 0 && n < NODES.length ? n : 0;
  state.b = Number.isInteger(b) && b >= 0 && b < D.boards.length ? b : 0;
}
function go(n, b) {
  if (NODES[n].k === "deal") n = NODES[n].c[0];
  location.hash = "n=" + n + "&b=" + (b === undefined ? state.b : b);
}

function renderHeader() {
  document.getElementById("title").textContent = P.map(p => p.name).join(" vs ") + " on " + D.game;
  const box = document.getElementById("summary");
  box.textContent = "";
  P.forEach((p, i) => {
    const total = NODES.reduce((sum, node, n) => sum + (isDecision(n) ? p.node_gain[n] : 0), 0);
    const line = el("div", { class: "pol", id: "summary-" + i });
    const mbb = p.nash_conv_mbb === null ? "" : " = " + fmt(p.nash_conv_mbb, 6) + " mbb/g";
    line.textContent = (P.length > 1 ? "ABCD"[i] + ": " : "") + p.name + " (read as " + p.reading + "): NashConv "
      + fmt(p.nash_conv, 8) + " " + D.unit + mbb + "; best response gains P0 "
      + fmt(p.gains_by_player[0], 6) + ", P1 " + fmt(p.gains_by_player[1], 6) + "; sum of the node gains ";
    line.appendChild(el("span", { id: "gainsum-" + i }, fmt(total, 12)));
    box.appendChild(line);
  });
}

function renderTree() {
  const nav = document.getElementById("tree");
  nav.textContent = "";
  const names = new Set(NODES.flatMap(node => node.n || []));
  const keys = [...names].map(name => short(name) + " " + name).concat(D.boards.length ? ["| " + D.deal_name] : []);
  nav.appendChild(el("div", {}, "Decision nodes (" + keys.join(", ") + ") and the best response's gain there ("
                            + D.unit + (D.boards.length ? ", all boards" : "") + "), shaded against each policy's largest:"));
  NODES.forEach((node, n) => {
    if (!isDecision(n)) return;
    const row = el("div", { class: "tn" + (n === state.n ? " current" : ""), id: "tn-" + n, "data-node": n });
    row.style.paddingLeft = (4 + 8 * depth(n)) + "px";
    row.title = "node " + n + ", player " + node.p + " acts; gain of the best response here: "
      + P.map(p => p.name + " " + fmt(p.node_gain[n], 12)).join(", ");
    const a = el("a", { href: "#n=" + n + "&b=" + state.b }, "P" + node.p + ": " + (labels[n] || "(start)"));
    row.appendChild(a);
    P.forEach((p, i) => {
      const span = el("span", { class: "gain", "data-policy": i, "data-gain": p.node_gain[n] }, fmt(p.node_gain[n], 3));
      span.style.background = gainColor(p.node_gain[n], maxGain[i]);  // each policy against its own largest gain
      row.appendChild(span);
    });
    nav.appendChild(row);
  });
}

function renderNavigation() {
  const n = state.n, node = NODES[n];
  const path = document.getElementById("path");
  path.textContent = "";
  const chain = [];
  for (let m = n; m >= 0; m = parent[m]) if (isDecision(m) || m === n) chain.unshift(m);
  chain.forEach((m, i) => {
    if (i) path.appendChild(document.createTextNode(" › "));
    const a = el("a", { href: "#n=" + m + "&b=" + state.b }, steps[m]);
    path.appendChild(a);
  });
  const info = document.getElementById("nodeinfo");
  if (isDecision(n)) {
    info.textContent = "Node " + n + " · " + D.round_names[node.r] + " · player " + node.p + " to act"
      + (node.pot === null ? "" : " · pot " + node.pot) + " · gain of the best response here: "
      + P.map(p => fmt(p.node_gain[n], 6)).join(" / ");
  } else {
    info.textContent = "Node " + n + " · " + node.t;
  }
  const actions = document.getElementById("actions");
  actions.textContent = "";
  node.c.forEach((c, i) => {
    if (!isDecision(n)) return;
    const name = actionName(n, i);
    const end = NODES[c].k === "fold" || NODES[c].k === "showdown";
    const b = el("button", { class: "act", "data-action": name, "data-child": c }, name + (end ? " (ends)" : ""));
    b.style.borderLeft = "6px solid " + COLORS[node.l[i]];
    b.addEventListener("click", () => go(c));
    actions.appendChild(b);
  });
}

function renderBoards() {
  const n = state.n, node = NODES[n];
  const bar = document.getElementById("boardbar");
  const flop = node.r >= D.first_deal_round;
  bar.style.display = flop ? "" : "none";
  if (!flop) return;
  document.getElementById("boardname").textContent = D.board_name;
  const select = document.getElementById("board");
  select.textContent = "";
  D.boards.forEach((cards, b) => {
    const gains = isDecision(n) ? " · gain " + P.map(p => fmt(p.board_gain[n][b], 3)).join(" / ") : "";
    const weight = D.isomorphism ? " ×" + D.board_weights[b] : "";
    select.appendChild(el("option", { value: b }, cards.map(cardName).join(" ") + weight + gains));
  });
  select.value = String(state.b);
  const note = document.getElementById("boardnote");
  note.textContent = D.isomorphism
    ? D.boards.length + " suit-isomorphic classes stand for the " + D.num_all_boards + " boards: a class is shown "
      + "by one board, and its gain counts all ×k boards of the class"
    : D.boards.length + " " + D.board_name.toLowerCase() + "s";
}

function cellStats(view, combos, A) {
  let weight = 0, gain = 0;
  const avg = new Array(A).fill(0);
  combos.forEach(({ k }) => { weight += view.r[k]; gain += view.g ? view.g[k] : 0; });
  combos.forEach(({ k }) => {
    const w = weight > 0 ? view.r[k] / weight : 1 / combos.length;
    for (let a = 0; a < A; a++) avg[a] += w * view.p[k * A + a];
  });
  return { avg: avg, reach: weight, gain: view.g ? gain : undefined };
}

// The cells of a grid, row by row: {name, combos: [{k: index in the view, h: hand}] or null}. Flop hold'em:
// rank x rank (pairs on the diagonal, suited above, offsuit below); Kuhn and Leduc: one row per private card.
function cellRows(key) {
  const free = freeHands(key);
  if (D.layout === "list") return free.map((h, k) => [{ name: handName(h), combos: [{ k: k, h: h }] }]);
  const cells = {};
  free.forEach((h, k) => {
    const [i, j] = cellOf(h);
    (cells[i + "," + j] = cells[i + "," + j] || []).push({ k: k, h: h });
  });
  const rows = [];
  for (let i = 0; i < R; i++) {
    rows.push([]);
    for (let j = 0; j < R; j++) rows[i].push({ name: cellName(i, j), combos: cells[i + "," + j] || null });
  }
  return rows;
}

function renderGrid(title, n, rows, stats, extra) {
  const box = el("div", { class: "gridbox" });
  box.appendChild(el("h3", {}, title));
  const table = el("table", { class: "grid " + D.layout, "data-policy": extra.policy });
  for (const row of rows) {
    const tr = el("tr");
    for (const { name, combos } of row) {
      const td = el("td", { "data-cell": name });
      if (!combos) { td.className = "empty"; tr.appendChild(td); continue; }
      const st = stats(combos);
      const bars = el("div", { class: "bars" });
      if (st.diff === undefined) {
        st.avg.forEach((p, a) => {
          const s = el("span");
          s.style.width = (100 * p).toFixed(2) + "%";
          s.style.background = COLORS[NODES[n].l[a]];
          bars.appendChild(s);
        });
        if (st.reach === 0) td.className = "unreached";
      } else {
        td.style.background = "rgba(124, 58, 237, " + Math.min(1, st.diff * 2).toFixed(3) + ")";
      }
      td.appendChild(bars);
      td.appendChild(el("div", { class: "lbl" }, name));
      if (D.layout === "grid") td.appendChild(el("div", { class: "num" }, String(combos.length)));
      td.title = name + ": " + combos.length + (combos.length === 1 ? " combo" : " combos") + ", reach "
        + fmt(st.reach, 6) + (st.gain === undefined ? "" : ", gain " + fmt(st.gain, 6)) + "; "
        + NODES[n].l.map((a, x) => actionName(n, x) + " " + (st.diff === undefined ? fixed(st.avg[x])
                                                              : (st.delta[x] >= 0 ? "+" : "") + fixed(st.delta[x]))).join(", ");
      td.addEventListener("mouseenter", () => { if (!state.pinned) showDetail(extra.policy, name, combos); });
      td.addEventListener("click", () => { state.pinned = true; showDetail(extra.policy, name, combos); });
      tr.appendChild(td);
    }
    table.appendChild(tr);
  }
  box.appendChild(table);
  return box;
}

function showDetail(policy, name, combos) {
  state.cell = { policy: policy, name: name };
  const n = state.n, node = NODES[n], key = viewKey(n), vs = views[key];
  const A = node.l.length;
  const detail = document.getElementById("detail");
  detail.textContent = "";
  const shown = policy === "diff" ? [0, 1] : [policy];
  const where = key === "pre" ? D.round_names[0] : D.board_name.toLowerCase() + " " + D.boards[state.b].map(cardName).join(" ");
  detail.appendChild(el("div", { id: "detail-title" }, name + " at node " + n + " (" + (labels[n] || "start") + "), "
    + where + ": " + combos.length + (combos.length === 1 ? " combo; " : " combos; ") + shown.map(i => P[i].name).join(" vs ")));
  const table = el("table", { id: "detail-table" });
  const head = el("tr");
  head.appendChild(el("th", {}, "cards"));
  shown.forEach(i => {
    node.l.forEach((a, x) => head.appendChild(el("th", {}, (shown.length > 1 ? "ABCD"[i] + " " : "") + actionName(n, x))));
    head.appendChild(el("th", {}, (shown.length > 1 ? "ABCD"[i] + " " : "") + "reach"));
    head.appendChild(el("th", {}, (shown.length > 1 ? "ABCD"[i] + " " : "") + "gain"));
  });
  table.appendChild(head);
  combos.forEach(({ k, h }) => {
    const tr = el("tr", { class: "combo", "data-hand": h, "data-cards": handName(h) });
    tr.appendChild(el("td", {}, handName(h)));
    shown.forEach(i => {
      const v = vs[i][n];
      node.l.forEach((a, x) => tr.appendChild(el("td", { class: "prob", "data-policy": i, "data-action": a },
                                                 fixed(v.p[k * A + x]))));
      tr.appendChild(el("td", { class: "reach", "data-policy": i }, fmt(v.r[k], 6)));
      tr.appendChild(el("td", { class: "hgain", "data-policy": i }, v.g ? fmt(v.g[k], 6) : "–"));
    });
    table.appendChild(tr);
  });
  detail.appendChild(table);
}

function renderGrids() {
  const n = state.n, grids = document.getElementById("grids");
  grids.textContent = "";
  document.getElementById("detail").textContent = "";
  document.getElementById("message").textContent = "";
  const legend = document.getElementById("legend");
  legend.textContent = "";
  if (!isDecision(n)) return;
  NODES[n].l.forEach((a, x) => {
    legend.appendChild(el("span", { style: "background:" + COLORS[a] }));
    legend.appendChild(document.createTextNode(actionName(n, x)));
  });
  const key = viewKey(n);
  if (!views[key]) { load(key); return; }
  const cells = cellRows(key), A = NODES[n].l.length;
  const vs = views[key];
  vs.forEach((v, i) => {
    grids.appendChild(renderGrid((P.length > 1 ? "ABCD"[i] + ": " : "") + P[i].name + " — player " + NODES[n].p,
                                 n, cells, combos => cellStats(v[n], combos, A), { policy: i }));
  });
  if (vs.length === 2) {
    grids.appendChild(renderGrid("B − A (shade: total variation distance)", n, cells, combos => {
      const a = cellStats(vs[0][n], combos, A), b = cellStats(vs[1][n], combos, A);
      const delta = b.avg.map((x, i) => x - a.avg[i]);
      return { diff: 0.5 * delta.reduce((s, x) => s + Math.abs(x), 0), delta: delta, reach: b.reach };
    }, { policy: "diff" }));
  }
  if (state.cell) {
    const grid = document.querySelector('table.grid[data-policy="' + state.cell.policy + '"]');
    const td = grid && grid.querySelector('td[data-cell="' + state.cell.name + '"]');
    if (td && !td.classList.contains("empty")) td.dispatchEvent(new MouseEvent("click"));
  }
}

function load(key) {
  const message = document.getElementById("message");
  if (D.embedded) { message.textContent = "no data for board " + key; return; }
  message.textContent = "loading board " + key + " …";
  if (pending[key]) return;
  pending[key] = fetch("board/" + key + ".json")
    .then(r => { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
    .then(j => { views[key] = j.views; render(); })
    .catch(e => {
      delete pending[key];
      message.textContent = "this page holds the preflop and the gains; each board's grids come from the explorer's "
        + "server (cfrx-explore --serve): " + e.message;
    });
}

function render() {
  parseHash();
  renderHeader();
  renderTree();
  renderNavigation();
  renderBoards();
  renderGrids();
}
document.getElementById("board").addEventListener("change", e => go(state.n, Number(e.target.value)));
window.addEventListener("hashchange", () => { state.pinned = false; render(); });
render();
</script>
</body>
</html>
"""

TEAM_TEMPLATE = _HEAD + r"""#main { display: flex; align-items: flex-start; }
#list { width: 360px; max-height: calc(100vh - 80px); overflow: auto; padding: 8px; border-right: 1px solid #ddd; }
#list h2 { font-size: 13px; margin: 8px 0 4px; }
#list a { display: block; padding: 1px 4px; border-radius: 3px; color: inherit; text-decoration: none; white-space: nowrap;
          overflow: hidden; text-overflow: ellipsis; }
#list a.current { outline: 2px solid #24292f; }
#view { padding: 8px 14px; flex: 1; }
#infoset { font-weight: 600; margin: 6px 0; }
#key { background: #f0f0f0; padding: 6px; margin: 6px 0; }
table.agent { border-collapse: collapse; margin: 8px 0 14px; }
table.agent td, table.agent th { border: 1px solid #ddd; padding: 2px 8px; text-align: right; font-variant-numeric: tabular-nums; }
table.agent th { background: #f0f0f0; }
td .bar { display: inline-block; height: 8px; background: #3b82f6; vertical-align: middle; margin-left: 6px; }
</style>
</head>
<body>
<header><h1 id="title"></h1><div id="summary"></div></header>
<div id="main">
<nav id="list"></nav>
<section id="view">
<div id="infoset"></div>
<pre id="key"></pre>
<div id="reach"></div>
<div id="tables"></div>
</section>
</div>
<script id="data" type="application/json">__DATA__</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const P = D.policies, INFOSETS = D.infosets;
const state = { i: 0 };

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
function fixed(x) { return Number(x).toFixed(6); }
function letter(k) { return P.length > 1 ? "ABCD"[k] + ": " : ""; }
function label(info) { return info.key.split("\n").filter(s => s.trim()).join(" · "); }

function parseHash() {
  const i = Number(new URLSearchParams(location.hash.slice(1)).get("i") || 0);
  state.i = Number.isInteger(i) && i >= 0 && i < INFOSETS.length ? i : 0;
}

function renderHeader() {
  document.getElementById("title").textContent = P.map(p => p.name).join(" vs ") + " on " + D.game;
  const count = p => INFOSETS.filter(info => info.p === p).length;
  document.getElementById("summary").textContent = INFOSETS.length + " infosets (" + D.player_names[0] + " "
    + count(0) + ", " + D.player_names[1] + " " + count(1) + "): each agent's action probabilities (the team's: "
    + "marginals of its joint action) and the infoset's own reach";
}

function renderList() {
  const nav = document.getElementById("list");
  nav.textContent = "";
  [0, 1].forEach(p => {
    nav.appendChild(el("h2", {}, D.player_names[p] + " (player " + p + ")"));
    INFOSETS.forEach((info, i) => {
      if (info.p !== p) return;
      const a = el("a", { href: "#i=" + i, id: "in-" + i, class: i === state.i ? "current" : "", title: info.key }, label(info));
      a.style.paddingLeft = (4 + 10 * info.d) + "px";
      nav.appendChild(a);
    });
  });
}

function renderInfoset() {
  const info = INFOSETS[state.i];
  document.getElementById("infoset").textContent = "Infoset " + state.i + " · " + D.player_names[info.p]
    + " (player " + info.p + ") · own depth " + info.d;
  document.getElementById("key").textContent = info.key;
  document.getElementById("reach").textContent = "own reach: " + P.map((p, k) => letter(k) + fixed(info.reach[k])).join(", ");
  const tables = document.getElementById("tables");
  tables.textContent = "";
  info.agents.forEach((agent, j) => {
    const table = el("table", { class: "agent", "data-agent": j });
    const head = el("tr");
    head.appendChild(el("th", {}, agent));
    info.names[j].forEach(name => head.appendChild(el("th", {}, name)));
    table.appendChild(head);
    P.forEach((p, k) => {
      const tr = el("tr", { "data-policy": k });
      tr.appendChild(el("th", {}, letter(k) + p.name));
      info.probs[k][j].forEach((x, d) => {
        const td = el("td", { class: "prob", "data-policy": k, "data-action": info.actions[j][d] }, fixed(x));
        const bar = el("span", { class: "bar" });
        bar.style.width = Math.round(60 * x) + "px";
        td.appendChild(bar);
        td.title = agent + " " + info.names[j][d] + ": " + x;
        tr.appendChild(td);
      });
      table.appendChild(tr);
    });
    tables.appendChild(table);
  });
}

function render() {
  parseHash();
  renderHeader();
  renderList();
  renderInfoset();
}
window.addEventListener("hashchange", render);
render();
</script>
</body>
</html>
"""
