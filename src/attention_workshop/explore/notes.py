"""One plain-language line under each table of `explore`: the one thing to notice there,
found in the numbers (a flat row and why, a tie, the largest share, a broken symmetry).

notes(ex) -> {"rows", "queries_keys", "raw": {"scores", "weights", "outputs"},
"wired": {"scores", "weights", "outputs"}}, each one sentence.
Example: for "the river bank", notes(ex)["wired"]["scores"] ->
"not symmetric: bank -> river scores 1.620 but river -> bank 0.360".
"""

import numpy as np

from attention_workshop.explore.ties import looks, names
from attention_workshop.report import fmt_list


def notes(ex):  # Exploration -> dict of one-line notes, keyed like the JSON's tables
    return {"rows": rows_note(ex), "queries_keys": queries_keys_note(ex),
            **{head: {"scores": scores_note(ex, head), "weights": weights_note(ex, head),
                      "outputs": outputs_note(ex, head)} for head in ("raw", "wired")}}


def rows_note(ex):
    repeated = [w for w in dict.fromkeys(ex.tokens) if ex.tokens.count(w) > 1]
    if repeated:
        return (f"'{repeated[0]}' appears {ex.tokens.count(repeated[0])} times with the same "
                "row each time: the lookup cannot see the sentence")
    lengths = np.linalg.norm(ex.X, axis=1)  # [T]
    i = int(lengths.argmax())
    # rows as long as the longest, as printed (three decimals): a tie, said as one
    tied = [j for j, n in enumerate(lengths) if f"{n:.3f}" == f"{lengths[i]:.3f}"]
    if len(tied) == 1:
        longest = f"longest row: {ex.tokens[i]} ({lengths[i]:.3f})"
    elif np.ptp(lengths[tied]) <= 1e-12:
        longest = f"longest rows, a tie: {names(ex.tokens, tied)} ({lengths[i]:.3f} each)"
    else:  # equal only as printed: the digits that tell them apart
        longest = "longest rows, a near tie: " + ", ".join(
            f"{ex.tokens[j]} {lengths[j]:.6f}" for j in dict.fromkeys(tied))
    return f"{longest}; a row's length squared is its raw score with itself"


def queries_keys_note(ex):
    Q, K = ex.wired["queries"], ex.wired["keys"]  # [T, d_k] each
    silent = [t for t, q in zip(ex.tokens, Q, strict=True) if not q.any()]
    if silent:
        return (f"{whose(silent)} query is all zeros: it asks for nothing, so its wired row "
                "will be flat")
    hidden = [t for t, k in zip(ex.tokens, K, strict=True) if not k.any()]
    if hidden:
        return (f"{whose(hidden)} key is all zeros: it advertises nothing, and every query "
                "scores it 0")
    i, j = int(np.abs(Q).sum(1).argmax()), int(np.abs(K).sum(1).argmax())
    return (f"{ex.tokens[i]} asks loudest (query {fmt_list(Q[i], 2)}); {ex.tokens[j]} "
            f"advertises most (key {fmt_list(K[j], 2)})")


def scores_note(ex, head):
    S = getattr(ex, head)["scores"]  # [T, T]
    if head == "raw":
        own = np.diag(S)[:, None]
        other = [(i, j) for i, j in zip(*np.nonzero(S > own + 1e-12), strict=True)
                 if ex.tokens[i] != ex.tokens[j]]
        if other:
            i, j = other[0]
            return (f"{ex.tokens[i]} scores {ex.tokens[j]} {S[i, j]:.3f}, above itself "
                    f"({S[i, i]:.3f}): the self-match claim breaks (see below)")
        return "symmetric; each row's largest score is the word's own (self-match)"
    gap = np.abs(S - S.T)
    i, j = np.unravel_index(int(gap.argmax()), gap.shape)
    if len(S) == 1:
        return "one word: one score, its query against its own key"
    if gap[i, j] <= 1e-12:
        return "symmetric: here W_Q and W_K ask and advertise alike"
    i, j = (i, j) if S[i, j] >= S[j, i] else (j, i)
    return (f"not symmetric: {ex.tokens[i]} -> {ex.tokens[j]} scores {S[i, j]:.3f} but "
            f"{ex.tokens[j]} -> {ex.tokens[i]} {S[j, i]:.3f}")


def weights_note(ex, head):
    T = len(ex.tokens)
    if T == 1:
        return f"one word: it gives itself everything ({1:.3f})"
    found = looks(ex, head)
    flat = [look for look in found if look.reason and look.reason.startswith("a flat row")]
    if flat:
        return flat[0].reason
    ties = [look for look in found if look.reason
            and len({ex.tokens[j] for j in look.top}) > 1]  # a word and its repeat: no news
    if ties:
        tie = max(ties, key=lambda look: look.weight)
        return (f"a tie: {tie.word} gives {names(ex.tokens, tie.top)} {tie.weight:.3f} each "
                "(why: see below)")
    W = getattr(ex, head)["weights"]  # [T, T]
    off = np.where(np.array(ex.tokens)[:, None] == np.array(ex.tokens)[None, :], -1.0, W)
    i, j = np.unravel_index(int(off.argmax()), off.shape)
    away = sum(ex.tokens[look.top[0]] != look.word for look in found)
    if not away:
        return (f"every word keeps its largest share; the most given away: {ex.tokens[i]} -> "
                f"{ex.tokens[j]} {W[i, j]:.3f}")
    return (f"{away} of {T} words look most at another word; the largest such share: "
            f"{ex.tokens[i]} -> {ex.tokens[j]} {W[i, j]:.3f}")


def outputs_note(ex, head):
    change = getattr(ex, head)["outputs"] - ex.X  # [T, d_model]
    i, a = np.unravel_index(int(np.abs(change).argmax()), change.shape)
    before, after = ex.X[i, a], getattr(ex, head)["outputs"][i, a]
    if abs(after - before) < 5e-4:
        return "no change you can see: each word blends rows equal to its own"
    return (f"biggest change from the lookup row: {ex.tokens[i]}'s {ex.axes[a]} {before:.3f} -> "
            f"{after:.3f}")


def whose(words):  # -> "the's", "the's and a's", "the's (twice)"
    unique = list(dict.fromkeys(words))
    said = [f"{w}'s" + (" (twice)" if words.count(w) == 2 else "") for w in unique]
    return " and ".join(said) if len(said) <= 2 else ", ".join(said[:-1]) + " and " + said[-1]
