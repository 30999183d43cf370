"""The text view (`explore`, the default): the raw and the wired head side by side, in the log's
table style.

Two tables share a line when both fit in WIDTH columns (short sentences);
longer sentences print the raw table, then the wired one, so nothing wraps.
"""

import textwrap

from attention_workshop.explore.claims import SELF_MATCH, check, table_losers
from attention_workshop.explore.compute import positions
from attention_workshop.explore.notes import notes
from attention_workshop.explore.slow_text import blend_lines
from attention_workshop.explore.ties import looks, names
from attention_workshop.report import matrix_lines

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


def noted(text, label="notice"):  # one note, wrapped to WIDTH under its table
    return textwrap.wrap(f"{label}: {text}", WIDTH, initial_indent="  ",
                         subsequent_indent="      ")


def pair(left, right, note):  # two side-by-side tables, then a note on each
    """Example: the raw and wired score tables, then 'notice, raw head: ...' and 'wired ...'."""
    return [*side_by_side(left, right), *noted(note[0], "notice, raw head"),
            *noted(note[1], "notice, wired head")]


def header(ex):
    T, d_k = len(ex.tokens), ex.wired["queries"].shape[1]
    sentence = " ".join(ex.tokens)
    typed = " ".join(ex.typed.split())
    read = f'; read from "{typed}"' if typed and typed != sentence else ""
    table = ex.table
    changes = [f"{label}: {', '.join(words)}" for label, words in (
        ("added", getattr(table, "added", ())), ("changed", getattr(table, "replaced", ())))
               if words]
    more = f"; {'; '.join(changes)}" if changes else ""
    return [f'explore "{sentence}" ({T} word{"s" * (T != 1)}{read})',
            f"  table: {ex.sources[0]} (axes: {', '.join(ex.axes)}{more})",
            f"  wiring: W_Q {ex.sources[1]}, W_K {ex.sources[2]} "
            f"(channels: {', '.join(ex.channels)}; d_k = {d_k})", *switches_line(ex)]


def text_lines(ex, word=None):  # Exploration -> list of lines
    """Everything, in reading order: input rows, queries and keys, scores, weights, outputs,
    each with a line on what to notice; where each word looks most; any broken lesson claim."""
    d_k = ex.wired["queries"].shape[1]
    note, toks = notes(ex), ex.tokens
    lines = header(ex)
    lines += table("rows of X (the lookup: the same row in every sentence):", toks, ex.axes,
                   ex.X)
    lines += noted(note["rows"])
    if ex.options.w_v is not None:
        lines += table("wired head: values V = X @ W_V", toks, ex.axes, ex.wired["values"])
    lines += side_by_side(table("wired head: queries Q = X @ W_Q", toks, ex.channels,
                                ex.wired["queries"]),
                          table("keys K = X @ W_K", toks, ex.channels, ex.wired["keys"]))
    lines += noted(note["queries_keys"])
    blend = "X" if ex.options.w_v is None else "V"
    for part, raw_title, wired_title, cols in (
            ("scores", "raw head: scores X @ X.T", "wired head: scores Q @ K.T", toks),
            ("weights", "raw head: weights (each row softmaxed)", weights_title(ex, d_k), toks),
            ("outputs", "raw head: outputs (weights @ X)",
             f"wired head: outputs (weights @ {blend})", ex.axes)):
        lines += pair(table(raw_title, toks, cols, ex.raw[part]),
                      table(wired_title, toks, cols, ex.wired[part]),
                      (note["raw"][part], note["wired"][part]))
    lines += largest_shares(ex)
    lines += claim_lines(ex)
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
    """Example line: '    bank     bank 0.498 -> river 0.500'; a tie lists every tied word
    ('river, money 0.333') and says why on the next line when the numbers say."""
    lines = ["  where each word looks most, raw head -> wired head (ties listed together):"]
    label_width = max(7, *(len(t) + 1 for t in ex.tokens))
    def tops(look):  # "river, money", or "all 7 words" for a flat row
        T = len(ex.tokens)
        return f"all {T} words" if len(look.top) == T > 2 else names(ex.tokens, look.top)

    for raw, wired in zip(looks(ex, "raw"), looks(ex, "wired"), strict=True):
        lines.append(f"    {raw.word:<{label_width}} {tops(raw)} {raw.weight:.3f} -> "
                     f"{tops(wired)} {wired.weight:.3f}")
        for head, look in (("raw", raw), ("wired", wired)):
            if look.reason:
                lines += textwrap.wrap(f"{head} tie: {look.reason}", WIDTH,
                                       initial_indent="      ", subsequent_indent="        ")
    return lines


def claim_lines(ex):
    """A lesson claim your table breaks: in this sentence (which, and why), or elsewhere."""
    lines = []
    for broken in check(ex):
        lines += textwrap.wrap(f"lesson claim broken here: {broken.claim}. {broken.why}",
                               WIDTH, initial_indent="  ", subsequent_indent="    ")
    if ex.sources[0] != "built-in" and not any(b.claim == SELF_MATCH for b in check(ex)):
        losers = table_losers(ex.table) if ex.table is not None else None
        if losers:
            word, other = losers[0]
            lines += textwrap.wrap(
                f"lesson claim broken by your table elsewhere: {SELF_MATCH}; it fails for "
                f"{len(losers)} pair{'s' * (len(losers) != 1)} of its words, e.g. in "
                f'"{word} {other}"', WIDTH, initial_indent="  ",
                subsequent_indent="    ")
    return lines
