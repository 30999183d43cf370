"""What the API's results look like as the last value of a notebook cell: HTML tables.

`Exploration._repr_html_` and `RunResult._repr_html_` call in here; a terminal keeps
their plain repr. Every number is written as text (3 decimals, the log's style); attention
weights are also shaded, darker = larger share, on the fixed scale 0 to 1, so two heads'
tables compare at a glance. Every token, word and label is escaped: a user's table or
sentence may hold any text.
"""

from html import escape

import numpy as np

SHADE = "36, 104, 180"  # the figures' blue, as CSS rgb components
DARK = 0.55  # above this share the cell's text turns white
MAX_TOKENS = 16  # a model run with more tokens shows its head grid, not whole weight tables
SHOWN_HEADS = 3  # weight tables shown for a model run: its strongest word-to-word heads
CELL = "padding:2px 6px;text-align:right;font-family:monospace"
LABEL = "padding:2px 6px;text-align:left;font-family:monospace"
CAPTION = '<caption style="text-align:left;white-space:nowrap">'


def _shaded(value, decimals):  # a weight in [0, 1] -> one <td>
    alpha = min(max(float(value), 0.0), 1.0)
    ink = "color:white;" if alpha > DARK else ""
    return (f'<td style="{CELL};{ink}background-color:rgba({SHADE}, {alpha:.3f})">'
            f"{value:.{decimals}f}</td>")


def table(rows, cols, matrix, caption="", shade=False, decimals=3):  # -> HTML text
    """A labelled table, one number per cell. Example: table(["a"], ["x", "y"], [[1, 0.5]])
    -> '<table>...<th ...>a</th><td ...>1.000</td><td ...>0.500</td>...</table>'."""
    head = "".join(f'<th style="{CELL}">{escape(str(c))}</th>' for c in cols)
    body = []
    for label, values in zip(rows, np.asarray(matrix, dtype=float), strict=True):
        cells = "".join(_shaded(v, decimals) if shade else
                        f'<td style="{CELL}">{v:.{decimals}f}</td>' for v in values)
        body.append(f'<tr><th style="{LABEL}">{escape(str(label))}</th>{cells}</tr>')
    title = f"{CAPTION}{escape(caption)}</caption>" if caption else ""
    return (f'<table style="border-collapse:collapse;margin:4px 16px 8px 0">{title}'
            f"<tr><th></th>{head}</tr>{''.join(body)}</table>")


def side_by_side(*parts):  # HTML tables -> one row of them, wrapping on a narrow screen
    return f'<div style="display:flex;flex-wrap:wrap;align-items:flex-start">{"".join(parts)}</div>'


def _heading(text, detail=""):
    extra = f"<br><small>{escape(detail)}</small>" if detail else ""
    return f"<p><b>{escape(text)}</b>{extra}</p>"


def exploration_html(ex):  # Exploration -> HTML text
    """explore()'s result as tables: the rows of X, then both heads side by side."""
    tokens, d_k = ex.tokens, ex.wired["queries"].shape[1]
    parts = [_heading(f'explore "{" ".join(tokens)}" ({len(tokens)} words)',
                      f"table: {ex.sources[0]}, axes {', '.join(ex.axes)}; wiring: W_Q "
                      f"{ex.sources[1]}, W_K {ex.sources[2]}, channels "
                      f"{', '.join(ex.channels)} (d_k = {d_k})"),
             table(tokens, ex.axes, ex.X, "rows of X: the lookup, the same in every sentence"),
             side_by_side(table(tokens, ex.channels, ex.wired["queries"], "queries Q = X @ W_Q"),
                          table(tokens, ex.channels, ex.wired["keys"], "keys K = X @ W_K")),
             side_by_side(table(tokens, tokens, ex.raw["scores"], "raw head: scores X @ X.T"),
                          table(tokens, tokens, ex.wired["scores"], "wired head: scores Q @ K.T")),
             side_by_side(table(tokens, tokens, ex.raw["weights"],
                                "raw head: weights (row = looking word)", shade=True),
                          table(tokens, tokens, ex.wired["weights"],
                                f"wired head: weights (scores / sqrt({d_k}))", shade=True)),
             side_by_side(table(tokens, ex.axes, ex.raw["outputs"], "raw head: outputs"),
                          table(tokens, ex.axes, ex.wired["outputs"], "wired head: outputs")),
             _looks_most(ex)]
    return "".join(parts)


def _looks_most(ex):  # Exploration -> a table: each word's top share per head, ties and why
    from attention_workshop.explore.ties import looks, names

    rows = []
    for raw, wired in zip(looks(ex, "raw"), looks(ex, "wired"), strict=True):
        cells = "".join(f'<td style="{LABEL}">{escape(names(ex.tokens, look.top))} '
                        f"{look.weight:.3f}</td>" for look in (raw, wired))
        rows.append(f'<tr><th style="{LABEL}">{escape(raw.word)}</th>{cells}</tr>')
        for head, look in (("raw", raw), ("wired", wired)):
            if look.reason:
                rows.append(f'<tr><td></td><td colspan="2" style="{LABEL}"><i>{head} tie: '
                            f"{escape(look.reason)}</i></td></tr>")
    return ('<table style="border-collapse:collapse;margin:4px 0 8px 0">'
            f"{CAPTION}where each word looks most (ties listed together)</caption>"
            f'<tr><th></th><th style="{LABEL}">raw head</th><th style="{LABEL}">wired head</th>'
            f"</tr>{''.join(rows)}</table>")


def run_html(result):  # RunResult -> HTML text
    """A real model's run: its tokens, every head's strongest word-to-word weight (a layer x
    head grid), then the weight tables of the strongest heads (short sentences only)."""
    from attention_workshop.real.analysis.head_search import off_self_weights, top_heads

    L, H, T, _ = result.attentions.shape
    added = ["yes" if s else "" for s in result.special]
    parts = [_heading(f"a model run: {T} tokens, {L} layers x {H} heads "
                      f"(layers and heads count from 0)"),
             _token_table(result.tokens, result.ids, added)]
    strongest = off_self_weights(result.attentions, result.special).max(axis=(2, 3))  # [L, H]
    parts.append(table([f"layer {lay}" for lay in range(L)], [f"H{h}" for h in range(H)],
                       strongest, "each head's largest weight from one word to another word "
                       "(not itself, not [CLS] or [SEP])", shade=True))
    if T > MAX_TOKENS:
        parts.append(_heading(f"{T} tokens: weight tables are shown for up to {MAX_TOKENS}; "
                              "index result.attentions[layer, head] for one head"))
        return "".join(parts)
    found = top_heads(result.attentions, result.special, SHOWN_HEADS)
    tables = [table(result.tokens, result.tokens, result.attentions[lay, h],
                    f"layer {lay}, head {h}: {result.tokens[q]} -> {result.tokens[k]} {w:.3f}",
                    shade=True)
              for lay, h, q, k, w in found if w > 0]
    if tables:
        parts += [_heading("the strongest heads (row = looking token, columns = looked at)"),
                  side_by_side(*tables)]
    return "".join(parts)


def _token_table(tokens, ids, added):  # one column per position
    cells = [("token", tokens), ("id", ids), ("added by the tokenizer", added)]
    rows = "".join(f'<tr><th style="{LABEL}">{name}</th>'
                   + "".join(f'<td style="{LABEL}">{escape(str(v))}</td>' for v in values)
                   + "</tr>" for name, values in cells)
    head = "".join(f'<th style="{CELL}">{i}</th>' for i in range(len(tokens)))
    return (f'<table style="border-collapse:collapse;margin:4px 0 8px 0"><tr><th></th>{head}'
            f"</tr>{rows}</table>")
