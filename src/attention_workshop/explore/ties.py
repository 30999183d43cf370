"""Where each word looks most: every word tied for its largest share, and why they tie.

Two weights tie when they print the same at three decimals. When the numbers say why (an
all-zero query, two equal keys, keys equal on every channel the query asks on), the tie
gets one line saying so; a near tie (equal only as printed) says how close it is.

Example: in "the river money bank" bank's wired query [1.80, 0.00] asks only on the topic
channel, where river's key and money's key both hold 0.90 (W_K's topic channel adds water +
money), so looks("wired")[3].top holds river and money, each 0.333.
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.report import fmt_list

DECIMALS = 3  # the precision the tables print, at which two weights look equal


@dataclass(frozen=True)
class Look:
    """One word's largest share under one head, with every word tied for it."""

    word: str
    position: int
    top: tuple  # positions tied for the largest share, in sentence order
    weight: float  # the largest share
    reason: str | None  # why they tie, when the numbers say; None for no tie


def looks(ex, head):  # Exploration, "raw" | "wired" -> [Look], one per word
    weights = getattr(ex, head)["weights"]  # [T, T]
    found = []
    for i, row in enumerate(weights):
        shown = np.round(row, DECIMALS)
        top = tuple(int(j) for j in np.flatnonzero(shown == shown.max()))
        reason = tie_reason(ex, head, i, top) if len(top) > 1 else None
        found.append(Look(ex.tokens[i], i, top, float(row.max()), reason))
    return found


def names(tokens, positions):  # -> "river, money" ("the (twice)" for a repeated word)
    counts = {}
    for j in positions:
        counts[tokens[j]] = counts.get(tokens[j], 0) + 1
    times = {1: "", 2: " (twice)"}
    return ", ".join(f"{w}{times.get(n, f' ({n} times)')}" for w, n in counts.items())


def tie_reason(ex, head, i, top):  # -> str | None
    """One line: why word i's weights on the words at `top` come out equal."""
    weights = getattr(ex, head)["weights"][i]
    tied = [weights[j] for j in top]
    if max(tied) - min(tied) > 1e-12 * max(1.0, max(tied)):
        spread = ", ".join(f"{w:.6f}" for w in tied)
        return f"near tie: equal at three decimals, not exactly ({spread})"
    seen = np.flatnonzero(weights > 0)  # every word, or (causal) the words it may see
    if len(top) == len(seen) and set(top) == set(seen.tolist()):
        return flat_reason(ex, head, i, len(seen))
    distinct = list(dict.fromkeys(ex.tokens[j] for j in top))
    if len(distinct) == 1:
        times = "twice" if len(top) == 2 else f"{len(top)} times"
        return f"the same word {times}: one row, so one score"
    return same_advert_reason(ex, head, i, top, distinct)


def flat_reason(ex, head, i, T):  # -> str: each of the T words it sees got the same share
    word = ex.tokens[i]
    if head == "wired":
        q = ex.wired["queries"][i]
        if not q.any():
            sees = " it sees" if T < len(ex.tokens) else ""
            return (f"a flat row: {word}'s query is {fmt_list(q, 2)}, it asks for nothing, so "
                    f"every score is 0 and each word{sees} gets 1/{T}")
        return f"a flat row: {word}'s query scores every key the same"
    if not ex.X[i].any():
        return f"a flat row: {word}'s row is all zeros, so every score is 0"
    return f"a flat row: {word}'s row scores every word the same"


def same_advert_reason(ex, head, i, top, distinct):  # -> str | None
    """Equal keys (rows, for the raw head) on every channel (axis) word i asks on."""
    if head == "wired":
        ask, adverts, labels = ex.wired["queries"][i], ex.wired["keys"], ex.channels
        asks, has = "query asks", "advertise"
    else:
        ask, adverts, labels = ex.X[i], ex.X, ex.axes
        asks, has = "row has", "have"
    used = np.flatnonzero(ask)  # the channels (axes) that count in word i's scores
    keys = adverts[list(top)][:, used]  # [tied, used]
    if not len(used) or not np.allclose(keys, keys[0], rtol=0, atol=1e-12):
        return None  # equal sums from different parts: nothing simple to say
    word = ex.tokens[i]
    where = ", ".join(labels[c] for c in used)
    values = fmt_list(keys[0], 2)[1:-1]
    both = "both" if len(distinct) == 2 else "all"
    line = (f"{word}'s {asks} only on {where}, where {', '.join(distinct[:-1])} and "
            f"{distinct[-1]} {both} {has} {values}")
    if head == "wired" and ex.w_k is not None:
        mixes = [mix(ex.axes, ex.w_k[:, c]) for c in used]
        mixed = [f"{labels[c]} = {m}" for c, m in zip(used, mixes, strict=True) if "+" in m]
        if mixed:
            line += f" (W_K's {'; '.join(mixed)}: it cannot tell them apart)"
    return line


def mix(axes, column):  # -> "water + money", "2 x place", "0.5 x water + money"
    """How one channel of a wiring matrix reads the axes. Example: mix(AXES, [1, 1, 0, 0])
    -> 'water + money'."""
    parts = [axis if w == 1 else f"{w:g} x {axis}" for axis, w in zip(axes, column, strict=True)
             if w != 0]
    return " + ".join(parts) or "nothing"
