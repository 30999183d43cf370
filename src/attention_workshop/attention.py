"""Softmax and attention as pure functions, named after the math.

Shapes use one vocabulary: T tokens, d_k query/key width, d_v value width.
"""

import numpy as np


def softmax(x, axis=-1):  # [..., n] -> [..., n], sums to 1 along `axis`
    """Turn scores into shares that are positive and sum to 1, along `axis`.

    Example: softmax([0.0, 0.54, 0.99]) -> [0.185, 0.317, 0.498] (rounded).
    Subtracting each slice's maximum first changes nothing mathematically
    (softmax ignores a shift) but keeps exp() from overflowing on scores like 1e4.
    Entries of -inf get exactly zero share. float32 stays float32 (a real model's forward
    pass runs in its weights' precision); anything else is computed in float64.
    """
    x = working(x)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def working(a):  # array-like -> float32 or float64 array
    """The precision a computation runs in: float32 input stays float32, all else float64."""
    a = np.asarray(a)
    return a if a.dtype in (np.float32, np.float64) else a.astype(np.float64)


def causal_mask(T):  # int -> [T, T] bool
    """Boolean mask where position i may look at positions j <= i (True = allowed).

    Example: causal_mask(3) -> [[T, F, F], [T, T, F], [T, T, T]].
    """
    return np.tril(np.ones((T, T), dtype=bool))


def scaled_dot_product_attention(q, k, v, mask=None):
    # [..., T_q, d_k], [..., T_k, d_k], [..., T_k, d_v] -> ([..., T_q, d_v], [..., T_q, T_k])
    """softmax(q @ k.T / sqrt(d_k)) @ v, returning the outputs and the weights.

    `mask` is boolean and broadcasts to [..., T_q, T_k]; True means "may attend"
    (the convention of torch.nn.functional.scaled_dot_product_attention), so
    causal_mask(T) gives a GPT-style decoder. Leading dimensions (heads) are batched.

    Example: q = [[1, 0]], k = [[1, 0], [0, 1]], v = [[10], [20]]:
    scores = [1, 0] / sqrt(2) = [0.707, 0]; weights = [0.670, 0.330]; output = [[13.30]].
    """
    dtype = np.result_type(*(working(a) for a in (q, k, v)))  # float32 only if all are
    q, k, v = (np.asarray(a, dtype=dtype) for a in (q, k, v))
    d_k = q.shape[-1]
    # q @ k.T / sqrt(d_k), with the division on q first: the same numbers, and the same last
    # bits that the log and `explore --format json` have always printed
    scores = (q / np.sqrt(d_k, dtype=dtype)) @ np.swapaxes(k, -1, -2)  # [..., T_q, T_k]
    if mask is not None:
        if not np.any(mask, axis=-1).all():
            raise ValueError("the mask leaves a query with no key to attend to")
        scores = np.where(mask, scores, -np.inf)  # e^-inf = 0: a masked key gets no weight
    weights = softmax(scores)  # [..., T_q, T_k], each row sums to 1
    return weights @ v, weights


def simple_attention(X):  # [T, 4] -> ([T, 4], [T, T])
    """Attention with nothing learned: scores X @ X.T, row softmax, blend the rows of X.

    Example: for "the river bank", bank's weights are softmax([0, 0.54, 0.99])
    = [0.185, 0.317, 0.498] and its output is [0.435, 0.149, 0.543, 0.185].
    """
    scores = X @ X.T  # [T, T], symmetric
    weights = softmax(scores)  # each row sums to 1
    return weights @ X, weights


# Rows are the input axes (water, money, place, filler); columns the two channels (topic, place).
# Place-ness asks for topic (gain 2.0); filler asks for places (gain 1.5).
W_Q_WIRED = np.array([
    [0.0, 0.0],
    [0.0, 0.0],
    [2.0, 0.0],
    [0.0, 1.5],
])
# Water-ness and money-ness advertise topic; place-ness advertises place; filler advertises nothing.
W_K_WIRED = np.array([
    [1.0, 0.0],
    [1.0, 0.0],
    [0.0, 1.0],
    [0.0, 0.0],
])


def wired_attention(X, w_q=W_Q_WIRED, w_k=W_K_WIRED):  # [T, 4] -> ([T, 4], [T, T], [T, T])
    """One head with hand-wired queries and keys; values are the raw rows (W_V = identity).

    Returns outputs, weights and the unscaled scores Q @ K.T.
    Example: for "the river bank", bank's query [1.8, 0] meets river's key [0.9, 0.3]:
    score 1.62, and after / sqrt(2) and softmax bank's weights are [0.159, 0.500, 0.341].
    """
    Q = X @ w_q  # [T, d_k]
    K = X @ w_k  # [T, d_k]
    outputs, weights = scaled_dot_product_attention(Q, K, X)
    return outputs, weights, Q @ K.T
