"""Module 2: queries and keys, hand-wired, and why scores are divided by sqrt(d_k).

Writes log lines 53-80; lessons cite 54-57, 58-63, 64-71, 72 and 75-80 ([S5]).
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED, softmax, wired_attention
from attention_workshop.embeddings import AXES, SENT_MONEY, SENT_RIVER, embed, tokenize
from attention_workshop.modules import module1
from attention_workshop.report import fmt_list, matrix_lines, named_vector

TITLE = "Module 2: queries, keys, and one carefully chosen constant"

DIMS = (4, 16, 64, 256)  # [S5] query/key widths
TRIALS = 2000  # [S5] rows per width
ROW = 8  # [S5] keys per row
SEED = 0  # [S5] a fresh np.random.default_rng(SEED) reproduces the lessons' table


@dataclass(frozen=True)
class Scaling:
    """[S5], one entry per query/key width d: random rows of one query against ROW keys."""

    dims: tuple  # the widths d: (4, 16, 64, 256)
    std: tuple  # std of all dot products q . k at each d (about sqrt(d))
    unscaled: tuple  # mean of each row's largest softmax(q . k) weight
    scaled: tuple  # the same with the scores divided by sqrt(d)


@dataclass(frozen=True)
class Result:
    """The wired head on "the river bank" (rows: the, river, bank), and [S5]."""

    Q: np.ndarray  # [3, 2] queries X @ W_Q_WIRED on the channels (topic, place)
    K: np.ndarray  # [3, 2] keys X @ W_K_WIRED
    scores: np.ndarray  # [3, 3] Q @ K.T, not symmetric
    weights: np.ndarray  # [3, 3] softmax of scores / sqrt(2), row by row
    outputs: np.ndarray  # [3, 4] weights @ X: row 2 is bank's new vector
    weights_money: np.ndarray  # [3, 3] the wired weights on "the money bank"
    scaling: Scaling  # [S5]


def _qk_line(word, q, k):
    """Example: '    bank    q = [ 1.80,  0.00]   k = [ 0.60,  0.90]'."""
    vec = lambda v: "[" + ", ".join(f"{x:5.2f}" for x in v) + "]"  # noqa: E731
    return f"    {word:<8}q = {vec(q)}   k = {vec(k)}"


def run(log, earlier):
    """Log [S4] and [S5]; Module 1's result gives the raw side of the raw-vs-wired lines."""
    Q, K, scores, weights, outputs, weights_money = log_wired(log, earlier[module1.Result])
    return Result(Q=Q, K=K, scores=scores, weights=weights, outputs=outputs,
                  weights_money=weights_money, scaling=log_scaling(log))


def log_wired(log, simple):  # Log, module1.Result -> Q, K, scores, weights, outputs, weights_money
    """Log the wired head ([S4]) on "the river bank", beside simple attention's numbers."""
    log.section(4, "Module 2: queries and keys, wired by hand (d_k = 2)")
    X = embed(SENT_RIVER)  # [3, 4]
    words = tokenize(SENT_RIVER)
    Q, K = X @ W_Q_WIRED, X @ W_K_WIRED  # [3, 2] each
    out, weights, scores = wired_attention(X)

    log.expect_line(54)
    log(f'  queries and keys for "{SENT_RIVER}" (2 channels: topic, place):')
    log.extend(_qk_line(w, q, k) for w, q, k in zip(words, Q, K, strict=True))

    log("  score matrix Q @ K.T:")
    log.extend(matrix_lines(words, words, scores))
    symmetric = bool(np.array_equal(scores, scores.T))
    log(f"  symmetric? {symmetric}  (bank->river = {scores[2, 1]:.3f}, "
        f"river->bank = {scores[1, 2]:.3f})")

    d_k = W_K_WIRED.shape[1]
    log.expect_line(64)
    log(f"  weights after dividing by sqrt({d_k}) and softmaxing each row:")
    log.extend(matrix_lines(words, words, weights))
    raw = simple.weights_river
    log(f"  bank's row,  raw vs wired: {fmt_list(raw[2])} -> {fmt_list(weights[2])}")
    log(f"  'the's row,  raw vs wired: {fmt_list(raw[0])} -> {fmt_list(weights[0])}")
    top_raw, top_wired = int(raw[2].argmax()), int(weights[2].argmax())
    log(f"  bank's largest share: raw -> '{words[top_raw]}' ({raw[2, top_raw]:.3f}), "
        f"wired -> '{words[top_wired]}' ({weights[2, top_wired]:.3f})")

    log.expect_line(72)
    log(f'  bank\'s output, wired head, in "{SENT_RIVER}": {named_vector(AXES, out[2])}')
    simple_bank = simple.outputs_river[2]
    log(f"  water to money: lookup {1.0:.1f} to 1, simple {simple_bank[0] / simple_bank[1]:.1f} "
        f"to 1, wired {out[2, 0] / out[2, 1]:.1f} to 1")
    out_money, weights_money, _ = wired_attention(embed(SENT_MONEY))
    log(f'  bank\'s output, wired head, in "{SENT_MONEY}": {named_vector(AXES, out_money[2])}')
    return Q, K, scores, weights, out, weights_money


def scaling_experiment(dims=DIMS, trials=TRIALS, row=ROW, seed=SEED):
    """Random queries meet rows of random keys; measure score spread and softmax's top weight.

    Per row the query is drawn first, then its `row` keys, all N(0, 1) from one
    np.random.default_rng(seed). Example: scaling_experiment().unscaled[0] -> 0.522 (d = 4).
    """
    rng = np.random.default_rng(seed)
    measured = []
    for d in dims:
        draws = rng.standard_normal((trials, 1 + row, d))  # per row: the query, then the keys
        q, keys = draws[:, 0], draws[:, 1:]  # [trials, d], [trials, row, d]
        scores = np.einsum("rkd,rd->rk", keys, q)  # [trials, row]
        unscaled = softmax(scores).max(axis=1).mean()
        scaled = softmax(scores / np.sqrt(d)).max(axis=1).mean()
        measured.append((float(scores.std()), float(unscaled), float(scaled)))
    std, unscaled, scaled = zip(*measured, strict=True)
    return Scaling(dims=tuple(dims), std=std, unscaled=unscaled, scaled=scaled)


def log_scaling(log):  # Log -> Scaling
    """Log [S5], verbatim as the lessons quote it."""
    log.expect_line(75)
    log.section(5, "why scores are divided by sqrt(d_k)")
    s = scaling_experiment()
    log(f"  random q, k entries drawn from N(0,1); {ROW} keys per row; {TRIALS} rows per size")
    for d, std, unscaled, scaled in zip(s.dims, s.std, s.unscaled, s.scaled, strict=True):
        log(f"  d = {d:3d}: dot-product std = {std:6.2f}  (sqrt(d) = {np.sqrt(d):5.2f}) | "
            f"avg top weight: unscaled = {unscaled:.3f}, scaled = {scaled:.3f}")
    log.expect_line(81)  # lines 1-80 are Modules 0-2's, cited by number: whatever follows
    return s
