"""The float32 pieces of a transformer layer, each written into a buffer or in place.

The same math as transformer.py and fast_path.attention (tests/test_real_fast_ops.py checks
each against them), arranged for speed on one block of rows (tokens) at a time, so that
row_split.py can hand half the rows to a second thread:

- `linear_into`: for a few rows, OpenBLAS is ~1.5x faster streaming the weight through as
  the left factor, W @ x.T, than packing it as the right one, x @ W.T (measured on MiniLM's
  shapes at 16 tokens, 5-10% at 64-96, level at 128, slower beyond).
- `layer_norm_in_place`, `gelu_in_place`: no [T, d] temporaries; gelu runs on blocks of
  rows small enough to stay in the core's cache, with scratch arrays allocated once.
- `attention_rows`: the scores of a block of query rows written straight into their slice
  of the model's attentions, the context straight into the merged-heads layout.
"""

import math

import numpy as np

from attention_workshop.real.transformer import _AS_A, _AS_P

FEW_ROWS = 128  # up to this many rows, linear_into computes (W @ x.T).T (see above)
GELU_ROWS = 32  # rows per gelu block: 32 x 1536 floats = 192 KB per scratch array
# Phi(-|x|) = erfc(|x| / sqrt(2)) / 2, by Abramowitz & Stegun 7.1.26 as transformer.gelu
# does; the factor 1/2 goes into the coefficients (exact: a power of two), a pass saved.
_HALF_AS_A = tuple(0.5 * a for a in _AS_A)


def linear_into(x, w, b, out):  # [rows, in], [out, in] (torch's layout), [out] -> out [rows, out]
    """out = x @ w.T + b. GPT-2's [in, out] Conv1D weights are passed as w.T (a view).

    Example: x = [[1, 2]], w = [[1, 0], [1, 1], [0, 2]], b = [0, 0, 1] -> out = [[1, 3, 5]].
    """
    if len(x) <= FEW_ROWS:
        np.add((w @ x.T).T, b, out=out)  # [out, rows] -> [rows, out], bias added on the way
    else:
        np.matmul(x, w.T, out=out)
        out += b
    return out


def layer_norm_in_place(x, weight, bias, eps):  # [rows, d] -> the same array
    """transformer.layer_norm's float32 formula (centre, then average the squares), in place.

    Example: [[1, 3]] with weight [1, 1], bias [0, 0], eps 0 -> [[-1, 1]].
    """
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("td,td->t", x, x)[:, None]  # [rows, 1]: sum of squares, no [rows, d] temp
    var *= 1.0 / x.shape[-1]
    var += eps
    np.sqrt(var, out=var)
    np.divide(1.0, var, out=var)
    x *= var
    x *= weight
    x += bias
    return x


def gelu_in_place(h, rows=GELU_ROWS):  # [T, d_mlp] float32 -> the same array
    """The exact gelu x Phi(x), as transformer.gelu computes it in float32, `rows` at a time.

    x Phi(x) = max(x, 0) - |x| Phi(-|x|). Example: [[1.0, -1.0]] -> [[0.841345, -0.158655]].
    """
    n = min(rows, len(h))
    a, t, y = (np.empty((n, h.shape[1]), h.dtype) for _ in range(3))  # scratch, reused
    for i in range(0, len(h), n):
        x = h[i:i + n]
        m = len(x)
        gelu_block(x, a[:m], t[:m], y[:m])
    return h


def gelu_block(x, a, t, y):  # x [m, d] in place, with three scratch arrays of its shape
    np.abs(x, out=a)  # |x|
    np.multiply(a, _AS_P * math.sqrt(0.5), out=t)
    t += 1.0
    np.divide(1.0, t, out=t)  # t = 1 / (1 + p |x| / sqrt(2))
    np.multiply(t, _HALF_AS_A[0], out=y)  # Horner's rule: (((a1 t + a2) t + ...) t + a5) t
    for c in _HALF_AS_A[1:]:
        y += c
        y *= t
    np.square(x, out=t)
    t *= -0.5
    np.exp(t, out=t)  # exp(-x^2 / 2)
    y *= t
    y *= a  # |x| Phi(-|x|)
    np.maximum(x, 0.0, out=x)
    x -= y


def attention_rows(q, k_t, v, rows, mask, weights_out, context_out):
    # q [n_head, T, d_head], k_t [n_head, d_head, T] (k transposed, contiguous: the product
    # q k^T is then the plain kind, ~1.6x faster at 128 tokens), v [n_head, T, d_head]
    # (whole sequence), rows: a slice of query positions,
    # mask [T, T] bool or None, weights_out [n_head, len(rows), T], context_out
    # [n_head, len(rows), d_head] (e.g. a view of [T, d_model]) -> weights_out
    """fast_path.attention for the query rows `rows` only: softmax(q k^T / sqrt(d_k)) v.

    The weights land in weights_out, the context in context_out, a few heads at a time
    (SCORES_CHUNK). Example: for rows = slice(0, T) and k_t = k.transpose(0, 2, 1) this
    is fast_path.attention(q, k, v, mask), within float32 rounding.
    """
    q = q[:, rows] * np.float32(1.0 / math.sqrt(q.shape[-1]))  # [n_head, rows, d_head]
    subtract_max = score_bound(q, k_t) > EXP_SAFE
    n_head, n_rows, T = weights_out.shape
    step = max(1, SCORES_CHUNK // (n_rows * T))  # heads per chunk
    for h in range(0, n_head, step):
        heads = slice(h, h + step)
        scores = np.matmul(q[heads], k_t[heads], out=weights_out[heads])
        if mask is not None:
            np.copyto(scores, -np.inf, where=~mask[rows])  # [rows, T], broadcast over heads
        if subtract_max:
            scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores *= 1.0 / scores.sum(axis=-1, keepdims=True)  # one division per row
        np.matmul(scores, v[heads], out=context_out[heads])
    return weights_out


# Scores are made, exponentiated, summed, scaled and multiplied by v in chunks of about
# 1 MB (half a core's L2 cache), so each pass finds them in cache: at 512 tokens (1 MB a
# head) the forward pass ran 12% faster than with all heads at once (75 MB of attentions).
SCORES_CHUNK = 1 << 18  # float32 scores per chunk


# softmax(s) = exp(s - max) / sum(exp(s - max)) = exp(s) / sum(exp(s)): subtracting the row's
# max only keeps exp in range. While every |s| <= 64, exp(s) lies within [1.6e-28, 6.2e27],
# and a sum of 2^31 of them stays below float32's largest, so the max (two passes over the
# [n_head, rows, T] scores: a fifth of attention at 512 tokens) is skipped. MiniLM's scores
# stay within 64 but for long inputs in layer 0.
EXP_SAFE = 64.0


def score_bound(q, k_t):  # [n_head, rows, d], [n_head, d, T] -> a bound on every |q_i . k_j|
    """Cauchy-Schwarz: |q_i . k_j| <= |q_i| |k_j|, so max |q_i| max |k_j| bounds them all.

    Example: q = [[[3, 4]]], k_t = [[[1, 0], [0, 2]]] -> 5 * 2 = 10 (the scores are 3, 8).
    """
    q_norms = np.einsum("hrd,hrd->hr", q, q).max(axis=-1)  # [n_head]: largest |q_i|^2
    k_norms = np.einsum("hdt,hdt->ht", k_t, k_t).max(axis=-1)
    return float(np.sqrt(q_norms * k_norms).max())
