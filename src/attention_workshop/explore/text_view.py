"""The text view (`explore`, the default): the raw and the wired head side by side, in the log's
table style.

Two tables share a line when both fit in WIDTH columns (short sentences);
longer sentences print the raw table, then the wired one, so nothing wraps.
"""

import numpy as np

from attention_workshop.explore.compute import ingredients, positions, slow_motion
from attention_workshop.report import fmt_list, matrix_lines

WIDTH = 100  # widest line that puts two tables side by side
GAP = 4  # spaces between side-by-side tables


def render(ex, word=None):  # Exploration, str | None -> str
    """Every table, in reading order. Example: render(explore("bank")) starts
    'explore "bank" (1 word)'."""
    return "\n".join(text_lines(ex, word))


def side_by_side(left, right):  # two lists of lines -> one list of lines
    """Example: ["  a", "    1"] and ["  b", "    2"] -> ["  a      b", "    1      2"]."""
    wide = max(len(line) for line in left)
    right = [line[2:] for line in right]  # drop the shared indent: it sits in the gap
    if wide + GAP + max(len(line) for line in right) > WIDTH:
        return [*left, *["  " + line for line in right]]
    blank = [""] * (max(len(left), len(right)) - len(left))
    pad = [""] * (max(len(left), len(right)) - len(right))
    return [f"{a:<{wide}}{' ' * GAP}{b}".rstrip() for a, b in zip(left + blank, right + pad,
                                                                  strict=True)]


def table(title, rows, cols, matrix):  # -> lines: a title at indent 2, the matrix at indent 4
    label_width = max(7, *(len(r) + 1 for r in rows))
    width = max(8, *(len(c) + 2 for c in cols))
    return [f"  {title}", *matrix_lines(rows, cols, matrix, label_width=label_width, width=width)]


def text_lines(ex, word=None):  # Exploration -> list of lines
    """Everything, in reading order: input rows, queries and keys, scores, weights, outputs."""
    T, d_k = len(ex.tokens), ex.wired["queries"].shape[1]
    sentence = " ".join(ex.tokens)
    lines = [f'explore "{sentence}" ({T} word{"s" * (T != 1)})',
             f"  table: {ex.sources[0]} (axes: {', '.join(ex.axes)})",
             f"  wiring: W_Q {ex.sources[1]}, W_K {ex.sources[2]} "
             f"(channels: {', '.join(ex.channels)}; d_k = {d_k})"]
    lines += switches_line(ex)
    lines += table("rows of X (the lookup: the same row in every sentence):",
                   ex.tokens, ex.axes, ex.X)
    if ex.options.w_v is not None:
        lines += table("wired head: values V = X @ W_V", ex.tokens, ex.axes, ex.wired["values"])
    lines += side_by_side(table("wired head: queries Q = X @ W_Q", ex.tokens, ex.channels,
                                ex.wired["queries"]),
                          table("keys K = X @ W_K", ex.tokens, ex.channels, ex.wired["keys"]))
    lines += side_by_side(table("raw head: scores X @ X.T", ex.tokens, ex.tokens,
                                ex.raw["scores"]),
                          table("wired head: scores Q @ K.T", ex.tokens, ex.tokens,
                                ex.wired["scores"]))
    lines += side_by_side(table("raw head: weights (each row softmaxed)", ex.tokens, ex.tokens,
                                ex.raw["weights"]),
                          table(weights_title(ex, d_k), ex.tokens, ex.tokens,
                                ex.wired["weights"]))
    lines += side_by_side(table("raw head: outputs (weights @ X)", ex.tokens, ex.axes,
                                ex.raw["outputs"]),
                          table("wired head: outputs (weights @ "
                                f"{'X' if ex.options.w_v is None else 'V'})", ex.tokens,
                                ex.axes, ex.wired["outputs"]))
    lines += largest_shares(ex)
    if word is not None:
        for i in positions(ex.tokens, word):
            lines += blend_lines(ex, "raw", i) + blend_lines(ex, "wired", i)
    return lines


def switches_line(ex):  # [] for Module 2's head, else one line naming the options
    """Example: ['  switches: scores not divided by sqrt(d_k); causal mask; W_V from wv.toml']."""
    opt = ex.options
    said = ([] if opt.scale else ["scores not divided by sqrt(d_k)"]) + (
        ["causal mask (no word sees a later word)"] if opt.causal else []) + (
        [] if opt.w_v is None else [f"W_V from {opt.w_v.source}"])
    return [f"  switches: {'; '.join(said)}"] if said else []


def weights_title(ex, d_k):
    """Example: 'wired head: weights (scores / sqrt(2), softmaxed)'."""
    how = f"scores / sqrt({d_k})" if ex.options.scale else "scores undivided"
    return f"wired head: weights ({how}{', masked' if ex.options.causal else ''}, softmaxed)"


def largest_shares(ex):
    """Example line: '    bank     bank 0.498 -> river 0.500'."""
    lines = ["  where each word looks most, raw head -> wired head:"]
    label_width = max(7, *(len(t) + 1 for t in ex.tokens))
    for i, token in enumerate(ex.tokens):
        tops = [(ex.tokens[int(np.argmax(w[i]))], w[i].max())
                for w in (ex.raw["weights"], ex.wired["weights"])]
        (raw_top, raw_w), (wired_top, wired_w) = tops
        lines.append(f"    {token:<{label_width}} {raw_top} {raw_w:.3f} -> "
                     f"{wired_top} {wired_w:.3f}")
    return lines


def blend_lines(ex, head, i):  # one word's slow-motion table under one head
    """Each ingredient's row scaled by the word's weight for it; the last row is the column sums."""
    recipe = getattr(ex, head)["weights"][i]  # [T]
    scaled, output = slow_motion(recipe, ingredients(ex, head))  # [T, d_model], [d_model]
    word = ex.tokens[i]
    where = f" (word {i + 1})" if ex.tokens.count(word) > 1 else ""
    labels = [f"{w:.3f} x {t}" for w, t in zip(recipe, ex.tokens, strict=True)]
    return [f"  slow motion, {head} head: {word}{where}'s recipe {fmt_list(recipe)} "
            f"over {', '.join(ex.tokens)}",
            *table("each ingredient's row times its weight; the last line is the column sums:",
                   [*labels, f"= {word}'s output"], ex.axes, [*scaled, output])]
