"""A plain-Python attention (lists and loops) that the explore tests check the package against."""

import math

import numpy as np

# The lessons' wiring, copied from the lesson text (rows: water, money, place, filler).
LESSON_WQ = [[0.0, 0.0], [0.0, 0.0], [2.0, 0.0], [0.0, 1.5]]
LESSON_WK = [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]


def ref_softmax(row):
    top = max(row)
    e = [math.exp(v - top) for v in row]
    return [v / sum(e) for v in e]


def ref_matmul(A, B):
    return [[sum(a[k] * B[k][j] for k in range(len(B))) for j in range(len(B[0]))] for a in A]


def ref_heads(rows, wq=LESSON_WQ, wk=LESSON_WK):
    """Both heads with lists and loops: raw scores x_i . x_j; wired q_i . k_j / sqrt(d_k)."""
    rows = [list(map(float, r)) for r in rows]
    transpose = lambda M: [list(c) for c in zip(*M, strict=True)]  # noqa: E731
    raw_s = ref_matmul(rows, transpose(rows))
    raw_w = [ref_softmax(r) for r in raw_s]
    Q, K = ref_matmul(rows, wq), ref_matmul(rows, wk)
    wired_s = ref_matmul(Q, transpose(K))
    d_k = len(wq[0])
    wired_w = [ref_softmax([v / math.sqrt(d_k) for v in r]) for r in wired_s]
    return {"raw": {"scores": raw_s, "weights": raw_w, "outputs": ref_matmul(raw_w, rows)},
            "wired": {"queries": Q, "keys": K, "scores": wired_s, "weights": wired_w,
                      "outputs": ref_matmul(wired_w, rows)}}


def assert_close(doc, ref):
    for head, parts in ref.items():
        for name, matrix in parts.items():
            np.testing.assert_allclose(doc[head][name], matrix, rtol=0, atol=1e-12,
                                       err_msg=f"{head} {name}")
