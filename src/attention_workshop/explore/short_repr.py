"""How explore's results print at a Python prompt: the sizes and a few numbers, as numpy prints
a large array; the whole tables are explore's text view, or a notebook's display
(notebook_html.py, through _repr_html_).

Example: repr(explore("the river bank")) ->
    Exploration('the river bank': 3 words x 4 axes (water, money, place, filler), d_k = 2)
      raw head:   weights [3, 3]; bank's row [0.185, 0.317, 0.498]
      wired head: weights [3, 3]; bank's row [0.159, 0.500, 0.341]
      (fields: tokens, X, raw, wired, ...; every table: print(ex.text()))
"""

SHOWN = 6  # numbers of a row before "..."


def row_text(row):  # [T] -> "[0.185, 0.317, 0.498]", the middle cut past SHOWN numbers
    cells = [f"{v:.3f}" for v in row]
    if len(cells) > SHOWN:
        cells = [*cells[:SHOWN // 2], "...", *cells[-(SHOWN // 2):]]
    return "[" + ", ".join(cells) + "]"


def switches(options):  # Options -> "" for Module 2's head, else "; no division, causal, ..."
    said = (["no division by sqrt(d_k)"] if not options.scale else []) + \
           (["causal"] if options.causal else []) + \
           ([f"W_V {options.w_v.source}"] if options.w_v is not None else [])
    return "".join(f"; {s}" for s in said)


def exploration_repr(ex):  # Exploration -> a few lines, whatever the sentence's length
    T, d = ex.X.shape  # [T, d_model]
    d_k = ex.wired["queries"].shape[1]  # [T, d_k]
    sentence = ex.typed or " ".join(ex.tokens)
    if len(sentence) > 36:
        sentence = sentence[:33] + "..."
    last = ex.tokens[-1]
    lines = [f"Exploration({sentence!r}: {T} word{'s' * (T != 1)} x {d} axes "
             f"({', '.join(ex.axes)}), d_k = {d_k}{switches(ex.options)})"]
    for head in ("raw", "wired"):
        weights = getattr(ex, head)["weights"]  # [T, T]
        lines.append(f"  {head + ' head:':<11} weights [{T}, {T}]; {last}'s row "
                     f"{row_text(weights[-1])}")
    lines.append("  (fields: tokens, X, raw, wired, ...; every table: print(ex.text()))")
    return "\n".join(lines)


def table_repr(table):  # Table -> one line
    """Example: Table(built-in: 20 words x 4 axes (water, money, place, filler))."""
    return (f"Table({table.source}: {len(table.words)} words x {len(table.axes)} axes "
            f"({', '.join(table.axes)}))")
