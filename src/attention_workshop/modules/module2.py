"""Module 2: queries and keys, hand-wired, and why scores are divided by sqrt(d_k).

Writes log lines 53-80; lessons cite 54-57, 58-63, 64-71, 72 and 75-80 ([S5]).
"""

import numpy as np

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED, softmax, wired_attention
from attention_workshop.embeddings import AXES, SENT_MONEY, SENT_RIVER, embed, tokenize
from attention_workshop.report import fmt_list, matrix_lines, named_vector

DIMS = (4, 16, 64, 256)  # [S5] query/key widths
TRIALS = 2000  # [S5] rows per width
ROW = 8  # [S5] keys per row
SEED = 0  # [S5] a fresh np.random.default_rng(SEED) reproduces the lessons' table


def _qk_line(word, q, k):
    """Example: '    bank    q = [ 1.80,  0.00]   k = [ 0.60,  0.90]'."""
    vec = lambda v: "[" + ", ".join(f"{x:5.2f}" for x in v) + "]"  # noqa: E731
    return f"    {word:<8}q = {vec(q)}   k = {vec(k)}"


def run_wired(log, simple):
    """Log the wired head ([S4]); `simple` is Module 1's result, for the raw-vs-wired lines."""
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
    raw = simple["weights"][SENT_RIVER]
    log(f"  bank's row,  raw vs wired: {fmt_list(raw[2])} -> {fmt_list(weights[2])}")
    log(f"  'the's row,  raw vs wired: {fmt_list(raw[0])} -> {fmt_list(weights[0])}")
    top_raw, top_wired = int(raw[2].argmax()), int(weights[2].argmax())
    log(f"  bank's largest share: raw -> '{words[top_raw]}' ({raw[2, top_raw]:.3f}), "
        f"wired -> '{words[top_wired]}' ({weights[2, top_wired]:.3f})")

    log.expect_line(72)
    log(f'  bank\'s output, wired head, in "{SENT_RIVER}": {named_vector(AXES, out[2])}')
    simple_bank = simple["outputs"][SENT_RIVER][2]
    log(f"  water to money: lookup {1.0:.1f} to 1, simple {simple_bank[0] / simple_bank[1]:.1f} "
        f"to 1, wired {out[2, 0] / out[2, 1]:.1f} to 1")
    out_money, weights_money, _ = wired_attention(embed(SENT_MONEY))
    log(f'  bank\'s output, wired head, in "{SENT_MONEY}": {named_vector(AXES, out_money[2])}')
    return {"outputs": out, "weights": weights, "scores": scores, "Q": Q, "K": K,
            "outputs_money": out_money, "weights_money": weights_money}


def scaling_experiment(dims=DIMS, trials=TRIALS, row=ROW, seed=SEED):
    """Random queries meet rows of random keys; measure score spread and softmax's top weight.

    Per row the query is drawn first, then its `row` keys, all N(0, 1) from one
    np.random.default_rng(seed). Returns, per d: (std of all dot products,
    mean top weight unscaled, mean top weight scaled by 1/sqrt(d)).
    """
    rng = np.random.default_rng(seed)
    results = {}
    for d in dims:
        draws = rng.standard_normal((trials, 1 + row, d))  # per row: the query, then the keys
        q, keys = draws[:, 0], draws[:, 1:]  # [trials, d], [trials, row, d]
        scores = np.einsum("rkd,rd->rk", keys, q)  # [trials, row]
        unscaled = softmax(scores).max(axis=1).mean()
        scaled = softmax(scores / np.sqrt(d)).max(axis=1).mean()
        results[d] = (float(scores.std()), float(unscaled), float(scaled))
    return results


def run_scaling(log):
    """Log [S5], verbatim as the lessons quote it; return the measurements for the figure."""
    log.expect_line(75)
    log.section(5, "why scores are divided by sqrt(d_k)")
    results = scaling_experiment()
    log(f"  random q, k entries drawn from N(0,1); {ROW} keys per row; {TRIALS} rows per size")
    for d, (std, unscaled, scaled) in results.items():
        log(f"  d = {d:3d}: dot-product std = {std:6.2f}  (sqrt(d) = {np.sqrt(d):5.2f}) | "
            f"avg top weight: unscaled = {unscaled:.3f}, scaled = {scaled:.3f}")
    return results
