"""An interactive head view in one offline HTML file: tokens on both sides, a line per weight.

Pick a layer, switch heads on and off, hover a token to see only where it looks.
No server, no network, no library: the weights are embedded as JSON and drawn
with a few lines of plain JavaScript on an SVG. Tokens and titles are data, whatever they
hold: explorer/page.py's helpers embed them (no "</script>" or "<!--" can end the data),
the page sets them with textContent, and its Content-Security-Policy lets only its own
script run.
"""

import html
import json

import numpy as np

from attention_workshop.figures.explorer.page import csp_hash, fill, json_for_script

# Twelve distinguishable colours; heads beyond twelve reuse them.
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
          "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#393b79", "#ad494a"]

STYLE = """
 body { font: 14px system-ui, sans-serif; margin: 24px; color: #222; }
 h1 { font-size: 18px; } .heads label { margin-right: 10px; white-space: nowrap; }
 .swatch { display: inline-block; width: 12px; height: 12px; vertical-align: middle; }
 svg text { font: 14px monospace; cursor: pointer; } .note { color: #666; max-width: 48em; }
"""

SCRIPT = """
const data = JSON.parse(document.getElementById("data").textContent);
const colors = COLORS_JSON;
const T = data.tokens.length, rowH = 28, leftX = 160, rightX = 460;
const svg = document.getElementById("view");
svg.setAttribute("width", 620); svg.setAttribute("height", T * rowH + 20);
const layerSel = document.getElementById("layer"), headBox = document.getElementById("heads");
let shown = new Set([...Array(data.heads).keys()]), focus = null;
for (let l = 0; l < data.layers; l++) layerSel.add(new Option(String(l), String(l)));
layerSel.value = String(data.start_layer);
for (let h = 0; h < data.heads; h++) {
  const label = document.createElement("label");
  const box = document.createElement("input");
  box.type = "checkbox"; box.checked = true; box.dataset.head = h;
  box.onchange = () => { box.checked ? shown.add(h) : shown.delete(h); draw(); };
  const swatch = document.createElement("span");
  swatch.className = "swatch"; swatch.style.background = colors[h % colors.length];
  label.append(box, swatch, " head " + h); headBox.append(label);
}
function setAll(on) {
  shown = new Set(on ? [...Array(data.heads).keys()] : []);
  headBox.querySelectorAll("input").forEach(b => b.checked = on); draw();
}
document.getElementById("all").onclick = () => setAll(true);
document.getElementById("none").onclick = () => setAll(false);
layerSel.onchange = draw;
function el(name, attrs, text) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
function draw() {
  svg.replaceChildren();
  const layer = data.attentions[Number(layerSel.value)], y = i => 20 + i * rowH;
  for (const h of shown) for (let i = 0; i < T; i++) {
    if (focus !== null && focus !== i) continue;
    for (let j = 0; j < T; j++) {
      const w = layer[h][i][j]; if (w < 0.01) continue;
      svg.append(el("line", {x1: leftX + 8, y1: y(i) - 5, x2: rightX - 8, y2: y(j) - 5,
        stroke: colors[h % colors.length], "stroke-width": 2, "stroke-opacity": w}));
    }
  }
  data.tokens.forEach((t, i) => {
    const left = el("text", {x: leftX, y: y(i), "text-anchor": "end"}, t);
    left.onmouseenter = () => { focus = i; draw(); };
    left.onmouseleave = () => { focus = null; draw(); };
    svg.append(left, el("text", {x: rightX, y: y(i)}, t));
  });
}
draw();
""".replace("COLORS_JSON", json.dumps(COLORS))

# One pass fills every __NAME__ (page.fill): a token or title reading "__DATA__" stays
# text. Only the script and style below may run (their hashes); the data never runs.
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; script-src '__SCRIPT_HASH__'; style-src '__STYLE_HASH__'">
<title>__TITLE__</title>
<style>__STYLE__</style></head><body>
<h1>__TITLE__</h1>
<p class="note">Left: the token that looks (the query). Right: the tokens it looks at (the keys).
A line's opacity is the attention weight; each token's weights sum to 1 within a head.
Hover a token on the left to see only its lines.</p>
<p>Layer <select id="layer"></select>
<button id="all">all heads</button> <button id="none">no heads</button></p>
<p class="heads" id="heads"></p>
<svg id="view"></svg>
<script id="data" type="application/json">__DATA__</script>
<script>__SCRIPT__</script></body></html>
"""


def head_view_html(title, tokens, attentions, start_layer=0):  # str, [T], [L, H, T, T] -> str
    """The page as a string; weights rounded to 3 decimals (what the tables print).

    Example: head_view_html("minilm", ["[CLS]", "bank", "[SEP]"], weights [6, 12, 3, 3])
    embeds {"tokens": [...], "layers": 6, "heads": 12, "attentions": [[[[0.71, ...]]]]}.
    """
    L, H = attentions.shape[:2]
    data = {"tokens": [str(t) for t in tokens], "layers": L, "heads": H,
            "start_layer": int(start_layer),  # rounded in float64: 0.01, not 0.009999999776
            "attentions": np.asarray(attentions, dtype=float).round(3).tolist()}
    return fill(PAGE, {"TITLE": html.escape(title), "STYLE": STYLE, "SCRIPT": SCRIPT,
                       "DATA": json_for_script(data), "SCRIPT_HASH": csp_hash(SCRIPT),
                       "STYLE_HASH": csp_hash(STYLE)})
