"""An interactive head view in one offline HTML file: tokens on both sides, a line per weight.

It opens on one head (the given one, else the layer's most specific: readable_head); pick
a layer, switch heads on and off; point at, tap or focus (Tab, then the arrow keys) a token on
the left to see only where it looks, its weights written as numbers. The lines are redrawn,
the tokens never are, so leaving a token always lets it go (a tap again, or elsewhere, too).
No server, no network, no library: the weights are embedded as JSON and drawn with plain
JavaScript on an SVG (explorer/head_view.html and .js, after the explorer's helpers).
Tokens and titles are data, whatever they hold: explorer/page.py's helpers embed them (no
"</script>" or "<!--" can end the data), the page sets them with textContent, and its
Content-Security-Policy lets only its own script run (images only from the page's own blobs:
"save as PNG").
"""

import numpy as np

from attention_workshop.figures.explorer.page import asset, one_file_page

# Okabe-Ito's colour-blind-safe set (its yellow left out: too faint on white), then four of
# Paul Tol's; heads beyond twelve reuse them. Every head is named beside its colour, and a
# token's weights are written as numbers, so no reading depends on colour alone.
COLORS = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000",
          "#882255", "#44aa99", "#999933", "#332288", "#aa4499"]

STYLE = """
 body { font: 15px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }
 h1 { font-size: 18px; overflow-wrap: anywhere; } .note { color: #444; max-width: 48em; }
 .heads label { margin-right: 12px; white-space: nowrap; display: inline-block; padding: 3px 0; }
 .swatch { display: inline-block; width: 12px; height: 12px; vertical-align: middle; }
 button, select { font: inherit; min-height: 32px; }
 svg { max-width: 100%; height: auto; display: block; }
 svg text { font: 14px ui-monospace, "DejaVu Sans Mono", monospace; fill: #222; }
 svg text.token.left { cursor: pointer; }
 svg text.token.chosen { font-weight: 700; fill: #000; }
 svg text.token:focus { outline: none; } svg text.token:focus-visible { fill: #b34700; }
 svg text.weight { font-size: 12px; fill: #333; }
 #readout { background: #f4f5f7; border-radius: 6px; padding: 4px 8px; min-height: 1.9em;
            max-width: 48em; font-size: 14px; }
 :focus-visible { outline: 3px solid #c76a00; outline-offset: 1px; }
"""

# The page (explorer/head_view.html) is filled in one pass (page.fill): a token or title
# reading "__DATA__" stays text. Only its script and style may run (their hashes).
SCRIPTS = ("registry.js", "format.js", "dom.js", "save.js", "head_view.js")


def readable_head(layer):  # [H, T, T] -> the head where one token looks most at another of its own
    """The head the page opens on when none is given: where one token looks at another (itself
    left out) far more than the other tokens do, w[i, j] - mean over rows of w[:, j]. A head
    where every token looks at [CLS] scores low; MiniLM's layer 2 on "the river bank" opens on
    head 11, bank -> river. Example: rows [[.1, .9], [.1, .9]] score .9 - .9 = 0 at (0, 1)."""
    T = layer.shape[-1]
    if T < 2:
        return 0
    own = layer - layer.mean(axis=-2, keepdims=True)  # [H, T, T], beyond what the others give j
    own = np.where(np.eye(T, dtype=bool), -np.inf, own)  # a token's look at itself left out
    return int(np.argmax(own.reshape(len(layer), -1).max(axis=1)))


def head_view_html(title, tokens, attentions, start_layer=0, start_head=None):
    # str, [T], [L, H, T, T], the layer and head it opens on -> the page as a string
    """The page as a string; weights rounded to 3 decimals (what the tables print).

    Example: head_view_html("minilm", ["[CLS]", "bank", "[SEP]"], weights [6, 12, 3, 3])
    embeds {"tokens": [...], "layers": 6, "heads": 12, "attentions": [[[[0.71, ...]]]]}.
    """
    L, H = attentions.shape[:2]
    start_layer = int(start_layer)
    weights = np.asarray(attentions, dtype=float).round(3)  # in float64: 0.01, not 0.00999...
    head = readable_head(weights[start_layer]) if start_head is None else int(start_head)
    data = {"tokens": [str(t) for t in tokens], "layers": L, "heads": H,
            "start_layer": start_layer, "start_head": head, "colors": COLORS,
            "attentions": weights.tolist()}
    script = '(() => {\n"use strict";\n' + "\n".join(map(asset, SCRIPTS)) + "})();\n"
    return one_file_page(asset("head_view.html"), title, STYLE, script, data)
