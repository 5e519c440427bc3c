# ruff: noqa: E501 - the page's script and markup keep their own line lengths
"""The page of ``kgc explore``: one HTML document with its style and script inline (it loads
nothing from the network). It asks the server it came from for a node (``/api/node?path=3.0.5``,
:func:`kgc.diagrams.explore.node_json`) and shows it: the steps so far (each one a link back to
that state), the per-role panels (coordinator, each consumer, purgatory, requests and answers in
flight) with what the last step changed highlighted, the enabled successors as buttons, and the
sequence chart of the path. The node's path is the URL's fragment (``#path=3.0.5``), so a URL is
shareable and the browser's back and forward buttons step through the history; "◀ back" goes to
the previous state, "next on trace ▶" follows the opened trace. ``kgc explore --html FILE`` writes
the same page with the nodes it can show embedded (no server; :func:`explore_page`'s ``embedded``:
the trace and its neighbourhood to a bounded depth, :func:`kgc.diagrams.explore.embedded_nodes`),
as gzip-compressed JSON in base64 that the page inflates with the browser's own
``DecompressionStream``; the file states its bound in a section of its own (``#bound``)."""

from __future__ import annotations

import base64
import gzip
import json
from html import escape

from kgc.diagrams.explore import Embedded

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kgc explore: TITLE</title>
<style>
body { font-family: "DejaVu Sans", Verdana, Arial, sans-serif; margin: 0; font-size: 13px; color: #212121;
       background: #fafafa; }
header { background: #263238; color: #fff; padding: 8px 16px; display: flex; gap: 12px; align-items: center; }
header h1 { font-size: 16px; margin: 0; flex: 1; }
header button { font-size: 13px; padding: 4px 10px; }
main { display: grid; grid-template-columns: 300px 1fr; gap: 12px; padding: 12px; max-width: 1280px;
       box-sizing: border-box; }
section { background: #fff; border: 1px solid #cfd8dc; border-radius: 6px; padding: 8px 10px; margin-bottom: 10px;
          overflow-wrap: anywhere; }
h2 { font-size: 14px; margin: 0 0 6px; }
ol#steps { padding-left: 22px; margin: 0; }
ol#steps li { margin: 2px 0; }
ol#steps li.current { font-weight: bold; }
ol#steps a, #successors button { font-family: "DejaVu Sans Mono", monospace; font-size: 11.5px; }
#successors button { display: block; width: 100%; text-align: left; margin: 2px 0; padding: 3px 6px;
                     background: #eceff1; border: 1px solid #b0bec5; border-radius: 4px; cursor: pointer; }
#successors button.trace { background: #fff3e0; border-color: #ffb300; }
.roles { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: 10px; }
table { border-collapse: collapse; width: 100%; }
td, th { border-bottom: 1px solid #eceff1; padding: 2px 4px; text-align: left; vertical-align: top; }
.changed { background: #fff59d; }
#chart svg { max-width: 100%; height: auto; }
.muted { color: #78909c; }
</style></head>
<body>
<header><h1>kgc explore: TITLE</h1>
<button id="back" title="the previous state">◀ back</button>
<button id="next" title="the next step of the opened trace">next on trace ▶</button>
<button id="home" title="the initial state">⟲ initial</button>
<button id="notation" title="what c1#0, ∅, gen … mean">notation</button></header>
<main>
<div>
<section><h2>Steps</h2><ol id="steps" start="0"></ol></section>
<section><h2>Enabled successors (<span id="count">0</span>)</h2><div id="successors"></div></section>
</div>
<div>
<div class="roles">
<section id="coordinator"><h2>Coordinator</h2><div class="body"></div></section>
<section id="purgatory"><h2>Purgatory</h2><div class="body"></div></section>
<section id="inflight"><h2>In flight</h2><div class="body"></div></section>
</div>
<div class="roles" id="consumers"></div>
<section id="chart"><h2>Sequence chart</h2><div class="body"></div></section>
<section id="glossary-note" class="muted">c1#0: consumer c1's first member id · ∅: no member id · gen: the group's
generation · parked: a request held in purgatory · highlighted: what the last step changed · see docs/glossary.md</section>
<section id="bound" class="muted" hidden></section>
</div>
</main>
<!--KGC-NODES-->
<script>
"use strict";
let node = null;
const $ = (sel) => document.querySelector(sel);
function esc(x) {
  return String(x === null || x === undefined ? "∅" : x).replace(/[&<>"]/g,
    (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
}
function pathOf(hash) {
  const m = /path=([0-9.]*)/.exec(hash || "");
  return m && m[1] ? m[1].split(".").map(Number) : [];
}
function go(path) { location.hash = "path=" + path.join("."); }
function row(key, value, changed) {
  return `<tr class="${changed ? "changed" : ""}" data-field="${esc(key)}"><th>${esc(key)}</th>` +
         `<td>${esc(Array.isArray(value) ? "[" + value.join(", ") + "]" : value)}</td></tr>`;
}
function render(n) {
  node = n;
  document.body.dataset.path = n.path.join(".");
  const changed = new Set(n.changed);
  $("#steps").innerHTML = `<li class="${n.path.length === 0 ? "current" : ""}"><a href="#path=">initial state</a></li>` +
    n.steps.map((s, i) => `<li class="${i + 1 === n.path.length ? "current" : ""}">` +
      `<a href="#path=${n.path.slice(0, i + 1).join(".")}">${esc(s.text)}</a> <span class="muted">[${esc(s.where)}]</span></li>`
    ).join("");
  $("#count").textContent = n.successors.length;
  $("#successors").innerHTML = n.successors.map((s) =>
    `<button data-successor="${s.index}" class="${s.index === n.next_on_trace ? "trace" : ""}">` +
    `${esc(s.text)} → ${esc(s.to)}</button>`).join("") ||
    `<p class="muted">${n.within_boundary ? "no enabled step (a deadlock)" : "outside the model's bounds"}</p>`;
  const c = n.roles.coordinator;
  const g = (k) => changed.has("group." + k);
  $("#coordinator .body").innerHTML = "<table>" +
    row("state", c.state, g("state")) + row("generation", c.generation, g("generation")) +
    row("leader", c.leader, g("leader")) + row("join timer", c.join_timer, g("join_timer")) +
    row("pending member ids", c.pending_member_ids, false) + row("outstanding writes", c.outstanding_writes, g("outstanding_stores")) +
    row("perturbations left", c.perturbations_left, false) + "</table>" +
    "<table class='members" + (g("members") ? " changed" : "") + "'><tr><th>member</th><th>flags</th><th>assignment</th></tr>" +
    c.members.map((m) => `<tr data-member="${esc(m.id)}"><td>${esc(m.id)}</td><td>` +
      [m.static ? "static" : "dynamic", m.awaiting_join ? "join" : "", m.awaiting_sync ? "sync" : ""].filter(Boolean).join(", ") +
      `</td><td>[${m.assignment.join(", ")}]</td></tr>`).join("") + "</table>";
  $("#purgatory .body").innerHTML = n.roles.purgatory.length
    ? "<table>" + n.roles.purgatory.map((p) => row(p.member, p.parked + " parked", false)).join("") + "</table>"
    : "<p class='muted'>nothing parked</p>";
  $("#inflight .body").innerHTML = n.roles.in_flight.length
    ? "<table>" + n.roles.in_flight.map((f) => row(f.consumer + " " + f.direction, f.text, false)).join("") + "</table>"
    : "<p class='muted'>no request or answer in flight</p>";
  $("#consumers").innerHTML = n.roles.consumers.map((k) => {
    const ch = (f) => changed.has(k.name + "." + f);
    return `<section class="consumer" data-consumer="${esc(k.name)}"><h2>${esc(k.name)} · ` +
      `${k.static ? "static, instance id " + esc(k.instance_id) : "dynamic"}</h2><table>` +
      row("state", k.state.toLowerCase(), ch("state")) + row("member id", k.member, ch("member")) +
      row("generation", k.generation, ch("generation")) + row("owns", k.owned, ch("owned")) +
      row("rejoin needed", k.rejoin_needed ? "yes" : "no", ch("rejoin_needed")) +
      row("awaiting", k.awaiting, false) + "</table></section>";
  }).join("");
  $("#chart .body").innerHTML = n.chart;
  $("#back").disabled = n.path.length === 0;
  $("#next").disabled = n.next_on_trace === null;
  document.title = "kgc explore: step " + n.path.length;
  document.body.dataset.ready = "yes";
}
const HOLDER = document.getElementById("kgc-nodes");
let EMBEDDED = null;
async function inflate(holder) {
  // The file's states: gzip-compressed JSON in base64, inflated by the browser itself.
  const bytes = Uint8Array.from(atob(holder.textContent.trim()), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).json();
}
const EMBEDDED_READY = HOLDER ? inflate(HOLDER).then((nodes) => { EMBEDDED = nodes; }) : Promise.resolve();
if (HOLDER) {
  $("#bound").textContent = HOLDER.dataset.bound;
  $("#bound").hidden = false;
}
function markEmbedded() {
  // In a file: the successors whose states the file holds are buttons; the others say so.
  if (!EMBEDDED || !node) return;
  document.querySelectorAll("#successors button[data-successor]").forEach((b) => {
    const key = [...node.path, Number(b.dataset.successor)].join(".");
    if (!(key in EMBEDDED)) {
      b.disabled = true;
      b.title = "not in this file: " + HOLDER.dataset.bound;
    }
  });
}
async function load() {
  document.body.dataset.ready = "no";
  const path = pathOf(location.hash);
  if (HOLDER) {
    await EMBEDDED_READY;
    const found = EMBEDDED[path.join(".")];
    if (!found) {
      $("#steps").innerHTML = `<li>${esc("no such state in this file: " + path.join("."))}</li>`;
      document.body.dataset.ready = "error";
      return;
    }
    render(found);
    markEmbedded();
    return;
  }
  const reply = await fetch("/api/node?path=" + path.join("."));
  if (!reply.ok) {
    $("#steps").innerHTML = `<li>${esc(await reply.text())}</li>`;
    document.body.dataset.ready = "error";
    return;
  }
  render(await reply.json());
}
document.addEventListener("click", (e) => {
  const b = e.target.closest("button[data-successor]");
  if (b && node && !b.disabled) go([...node.path, Number(b.dataset.successor)]);
});
$("#back").addEventListener("click", () => node && go(node.path.slice(0, -1)));
$("#next").addEventListener("click", () => node && node.next_on_trace !== null && go([...node.path, node.next_on_trace]));
$("#home").addEventListener("click", () => go([]));
$("#notation").addEventListener("click", () => $("#glossary-note").scrollIntoView());
window.addEventListener("hashchange", load);
if (!location.hash) { location.replace("#path=" + INITIAL); } else { load(); }
</script>
</body></html>
"""


def explore_page(title: str, initial: tuple[int, ...], embedded: Embedded | None = None) -> str:
    """The page, opening at ``initial`` (a trace's last state, or the initial state). With
    ``embedded`` the page is a self-contained file: it reads its nodes from an inline block
    (gzip-compressed JSON in base64) instead of asking a server, and states the bound that chose
    them (:meth:`Embedded.bound_text`) on the page and on every successor it does not hold."""
    block = ""
    if embedded is not None:
        data = json.dumps(embedded.nodes, separators=(",", ":"), sort_keys=True).encode()
        packed = base64.b64encode(gzip.compress(data, compresslevel=9, mtime=0)).decode("ascii")
        bound = escape(embedded.bound_text(), quote=True)
        block = (
            f'<script type="application/octet-stream" id="kgc-nodes" data-encoding="gzip+base64" '
            f'data-states="{len(embedded.nodes)}" data-depth="{embedded.depth}" '
            f'data-complete-depth="{embedded.complete_depth}" data-max-states="{embedded.max_states}" '
            f'data-bound="{bound}">{packed}</script>'
        )
    start = repr(".".join(str(i) for i in initial))
    head, tail = (part.replace("TITLE", escape(title)).replace("INITIAL", start) for part in PAGE.split(_SLOT))
    return head + block + tail


_SLOT = "<!--KGC-NODES-->"
