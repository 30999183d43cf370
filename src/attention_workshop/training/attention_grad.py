"""The attention formula, forward and backward: softmax(q @ k.T / sqrt(d_k) + mask) @ v.

The forward is the core's (attention.scaled_dot_product_attention); the backward walks it
in reverse, one line per forward line. Shapes: [..., T, d] with any leading dimensions
(batch, heads); T_q query rows, T_k key rows.
"""

import numpy as np

from attention_workshop.attention import scaled_dot_product_attention, softmax


def attention(q, k, v, mask=None, scaled=True):
    # [..., T_q, d_k], [..., T_k, d_k], [..., T_k, d_v] -> ([..., T_q, d_v], [..., T_q, T_k])
    """The forward: outputs and weights. scaled=False drops the 1/sqrt(d_k) (Module 2's aside).

    Example: q = [[1, 0]], k = [[1, 0], [0, 1]], v = [[10], [20]] -> weights [0.670, 0.330],
    output [[13.30]]; unscaled, softmax([1, 0]) = [0.731, 0.269] and output [[12.69]].
    """
    if scaled:
        return scaled_dot_product_attention(q, k, v, mask)  # the lesson's formula, as is
    scores = q @ np.swapaxes(k, -1, -2)  # [..., T_q, T_k], no division
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ v, weights


def softmax_backward(d_weights, weights):  # [..., n], [..., n] -> [..., n]
    """Gradient through w = softmax(s): ds_j = w_j (dw_j - sum_i dw_i w_i), row by row.

    Example: w = [0.5, 0.5], dw = [1, 0] -> ds = [0.25, -0.25] (a shift of every score
    changes nothing, so the entries sum to 0). A masked score (weight 0) gets 0.
    """
    return weights * (d_weights - np.sum(d_weights * weights, axis=-1, keepdims=True))


def attention_backward(d_out, q, k, v, weights, scaled=True):
    # [..., T_q, d_v], the forward's q, k, v and weights -> (dq, dk, dv), shaped as q, k, v
    """The gradient of a loss with respect to q, k and v, given d_out = dloss/doutputs.

    Example: one query, one key: the weight is 1 whatever the score, so dq = dk = 0 and
    dv = d_out (all the gradient goes to the value).
    """
    scale = 1 / np.sqrt(q.shape[-1]) if scaled else 1.0
    dv = np.swapaxes(weights, -1, -2) @ d_out  # out = weights @ v
    d_weights = d_out @ np.swapaxes(v, -1, -2)  # [..., T_q, T_k]
    d_scores = softmax_backward(d_weights, weights)  # a masked key (weight 0) gets none
    dq = d_scores @ k * scale  # scores = (q * scale) @ k.T
    dk = np.swapaxes(d_scores, -1, -2) @ q * scale
    return dq, dk, dv
