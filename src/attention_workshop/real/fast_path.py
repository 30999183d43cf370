"""The speed-ups of a real model's forward pass, kept apart from the math they compute.

- `attention`: the core's scaled_dot_product_attention in the weights' precision
  (float32 is twice as fast, and what the reference implementation computes in), with
  1/sqrt(d_k) applied to q ([T, d_k]) rather than to the scores ([T, T]), and the weights
  written in place into a buffer the caller owns.

tests/test_real_fast_path.py checks it against the core: same numbers.
"""

import numpy as np


def softmax_in_place(scores):  # [..., T_k] -> the same array, each row now sums to 1
    """The core's softmax along the last axis, overwriting `scores` (same arithmetic, same bits).

    Example: softmax_in_place(np.array([0.0, 0.54, 0.99])) -> [0.185, 0.317, 0.498].
    """
    np.subtract(scores, np.max(scores, axis=-1, keepdims=True), out=scores)
    np.exp(scores, out=scores)
    scores /= np.sum(scores, axis=-1, keepdims=True)
    return scores


def attention(q, k, v, mask=None, weights_out=None):
    # [n_head, T_q, d_k], [n_head, T_k, d_k], [n_head, T_k, d_v]
    #   -> ([n_head, T_q, d_v], [n_head, T_q, T_k])
    """softmax(q @ k.T / sqrt(d_k)) @ v like attention.scaled_dot_product_attention, computed
    in q's precision; the weights land in `weights_out` if given ([n_head, T_q, T_k], e.g.
    one layer's slice of the forward pass's attentions), else in a new array.

    `mask` is boolean, True = may attend, broadcast to the scores. Example: for float64
    inputs, attention(q, k, v, causal_mask(T)) returns exactly the core's numbers.
    """
    d_k = q.shape[-1]
    q = q / np.sqrt(d_k, dtype=q.dtype)  # dividing [T_q, d_k] costs less than [T_q, T_k]
    scores = np.matmul(q, np.swapaxes(k, -1, -2), out=weights_out)  # [n_head, T_q, T_k]
    if mask is not None:
        np.copyto(scores, -np.inf, where=~np.asarray(mask, dtype=bool))  # no new [T_q, T_k]
    weights = softmax_in_place(scores)
    return weights @ v, weights

