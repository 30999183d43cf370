"""The float32 pieces of a transformer layer, in the feature-major layout loop.py runs.

Activations are held transposed: [features, T], a row per feature, a column per token.
Then, with W [out, in] as torch stores it:

- a linear layer is W @ x, the orientation in which OpenBLAS is fastest up to ~128 tokens
  (~15% on MiniLM's shapes), with no transposed copy of its result and the bias added down
  the columns;
- a block of the output's rows comes from the same block of W's rows and is a contiguous
  slice: two threads each read half of the weights (`linear_rows`);
- one head's q, k and v are contiguous [d_head, T] blocks of the Q|K|V rows: q k^T and
  the heads' outputs need no transposed copies (`attention_heads`).

gelu, softmax and layer norm run as _kernels.c's one-pass loops where the install built them
(kernels.py), else as numpy's passes written here. The same math as layers.py and
the core's attention; tests/test_fast_ops.py checks each piece, both ways, against them.
"""

import math

import numpy as np

from attention_workshop.real.fast import gemm, kernels
from attention_workshop.real.fast.float32 import _AS_A, _AS_P
from attention_workshop.real.layers import ACTIVATION, silu

# Phi(-|x|) = erfc(|x| / sqrt(2)) / 2, by Abramowitz & Stegun 7.1.26 as fast/float32.gelu
# does; the factor 1/2 goes into the coefficients (exact: a power of two), a pass saved.
_HALF_AS_A = tuple(0.5 * a for a in _AS_A)
# gelu runs on blocks of about this many floats (384 KB each, with three scratch arrays of
# that size: within a core's 2 MB L2): its ~20 numpy passes then find them in cache. Half
# this size was as fast on one thread, but two threads' short calls waited on each other for
# the GIL (docs/benchmarks.md).
GELU_BLOCK = 64 * 1536


def compiled_for(*arrays):  # numpy arrays -> the module _kernels.c builds, or None
    """kernels.compiled if it is built and every array is float32 and C-contiguous (as its
    loops read them), else None: then numpy's passes run."""
    k = kernels.compiled
    if k is not None and all(a.dtype == np.float32 and a.flags.c_contiguous for a in arrays):
        return k
    return None


def compiled_attention(d_head, *arrays):  # head size, numpy arrays -> the module, or None
    """kernels.compiled where its attention loops (attend_prompt, attend_features) take these
    arrays (compiled_for) and this head size on this CPU (16-64 by 16, AVX-512 or AVX2; elsewhere
    numpy's products are faster than their plain rows), else None."""
    k = compiled_for(*arrays)
    return k if k is not None and k.attend_runs(d_head) else None


def linear_rows(w, x, b, out, rows, add=None):
    # [out, in], [in, T], [out], out [out, T], slice of output rows, [out, T] or None
    """out[rows] = w[rows] @ x + b[rows] (+ add[rows]): rows of the layer's output, from
    the same rows of W. GPT-2's Conv1D weights [in, out] come as W.T (a view).

    Example: w = [[1, 0], [1, 1], [0, 2]], x = [[1], [2]] (one token), b = [0, 0, 1],
    rows = all -> out = [[1], [3], [5]].
    """
    o = gemm.into(w[rows], x, out[rows])
    o += b[rows, None]
    if add is not None:
        o += add[rows]
    return o


def linear_pieces_rows(pieces, x, out, rows):
    # [(w [out_i, in], b [out_i]), ...], [in, T], out [sum out_i, T], slice of output rows
    """Rows of the linear layer whose W and b are the pieces stacked (W_Q; W_K; W_V), without
    stacking them: each piece's share of `rows` from that piece.

    Example: pieces [(W_Q, b_Q), (W_K, b_K)] of 4 rows each, rows 2..6 -> rows 2, 3 of
    W_Q x + b_Q into out[2:4], rows 0, 1 of W_K x + b_K into out[4:6].
    """
    start = 0
    for w, b in pieces:
        stop = start + len(w)
        first, last = max(rows.start, start), min(rows.stop, stop)
        if first < last:
            linear_rows(w, x, b, out[start:stop], slice(first - start, last - start))
        start = stop
    return out[rows]


def qkv_rows_of_heads(pieces, x, qkv, heads, d_head):
    # pieces as in linear_pieces_rows, [in, T], qkv [3 d_model, T] (Q rows, K, V), slice of
    # head numbers, int -> None
    """The rows of Q, K and V that the heads `heads` read (three blocks: their Q rows, their K
    rows, their V rows), or all of Q|K|V in one go when `heads` are every head.

    Example: 4 heads of d_head 2 (d_model 8), heads 1..3 -> rows 2..6 (Q), 10..14 (K) and
    18..22 (V) of qkv.
    """
    d_model = len(qkv) // 3
    first, last = heads.start * d_head, heads.stop * d_head
    if first == 0 and last == d_model:
        linear_pieces_rows(pieces, x, qkv, slice(0, 3 * d_model))
        return
    for part in range(3):
        linear_pieces_rows(pieces, x, qkv, slice(part * d_model + first, part * d_model + last))


def linear_cols(w, x, cols, out, b=None, add=None):
    # [out, in], [in, T], slice of inputs, out [out, T], [out] or None, [out, T] or None -> out
    """out = w[:, cols] @ x[cols] (+ b + add): the share of W x that the inputs `cols` give.
    A product split over its inner dimension this way is the sum of its shares (loop's
    share and gather); the bias and the residual go in once, with one share.

    Example: w = [[1, 2]], x = [[3], [4]]: cols 0..1 -> [[3]], cols 1..2 -> [[8]], and
    3 + 8 = 11 = W x.
    """
    gemm.into(w[:, cols], x[cols], out)
    if b is not None:
        out += b[:, None]
    if add is not None:
        out += add
    return out


def layer_norm_columns(x, weight, bias, eps, cols, out=None):
    # [d, T], [d], [d], float, slice of tokens, [d, T] (default: x itself) -> out[:, cols]
    """fast/float32.layer_norm's formula (centre, then average the squares) on the
    tokens `cols`, each a column here: written into out (or over x).

    Example: x = [[1], [3]] (one token of 2 features), weight [1, 1], bias [0, 0], eps 0
    -> [[-1], [1]].
    """
    o = x if out is None else out
    k = compiled_for(x, o, weight, bias)
    if k is not None and cols == slice(0, x.shape[1]):
        if k.layer_norm_columns(x, o, weight, bias, eps, x.shape[1]):
            overflowed()
        return o
    src = x[:, cols]
    o = o[:, cols]
    np.subtract(src, src.mean(axis=0), out=o)
    var = np.einsum("dt,dt->t", o, o)  # [cols]: sums of squares, no [d, cols] temporary
    if not np.isfinite(var).all():  # einsum's sums do not raise numpy's overflow error
        overflowed()
    var *= 1.0 / len(o)
    var += eps
    np.sqrt(var, out=var)
    np.divide(1.0, var, out=var)
    o *= var
    o *= weight[:, None]
    o += bias[:, None]
    return o


def overflowed():  # a sum of squares past float32's range: raise it as numpy would
    """Where numpy's errors are raised (model.Model.forward), an overflow that the layer norm
    would hide (its output: the bias, finite and wrong) raises FloatingPointError too."""
    if np.geterr()["over"] == "raise":
        raise FloatingPointError("overflow encountered in layer norm")


def gelu_in_place(h, block=GELU_BLOCK):  # [rows, T] float32, rows contiguous -> the same array
    """The exact gelu x Phi(x), as fast/float32.gelu computes it, a block of rows
    at a time. x Phi(x) = max(x, 0) - |x| Phi(-|x|).

    Example: [[1.0, -1.0]] -> [[0.841345, -0.158655]].
    """
    k = compiled_for(h)
    if k is not None:
        k.gelu(h)
        return h
    n = min(len(h), max(1, block // max(1, h.shape[1])))  # rows per block
    a, t, y = (np.empty((n, h.shape[1]), h.dtype) for _ in range(3))  # scratch, reused
    for i in range(0, len(h), n):
        x = h[i:i + n]
        m = len(x)
        gelu_block(x, a[:m], t[:m], y[:m])
    return h


def silu_times_in_place(g, u):  # [T, d_mlp] float32 twice, g C-contiguous -> g
    """Llama's gated activation in place: g becomes silu(g) * u (layers.silu's formula; the
    compiled loop's one pass instead of numpy's six).

    Example: g = [[1, -1]], u = [[2, 2]] -> [[1.462117, -0.537883]].
    """
    k = compiled_for(g, u)
    if k is not None:
        k.silu_times(g, u)
        return g
    return np.multiply(silu(g), u, out=g)


def activate_in_place(h, name):  # [rows, T] float32, rows contiguous; config's name -> h
    """The MLP's activation in place: "gelu" by gelu_in_place, any other of
    layers.ACTIVATION ("gelu_new") by its own formula, copied back into h."""
    if name == "gelu":
        return gelu_in_place(h)
    np.copyto(h, ACTIVATION[name](h))
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


# From this many tokens on numpy's batched products take an encoder's attention (MiniLM, one
# thread, 512 tokens: 131-134 ms a forward so, 135-138 with _kernels.c's attend_features;
# 128 tokens 28.9-29.2 against 28.2-28.8; 16 tokens, two threads, 4.9-5.2 against 4.3-4.6)
COMPILED_BELOW = 256


def attention_heads(qkv, heads, d_head, mask, weights_out, context, values_out):
    # qkv [3 d_model, T]: Q rows, then K, then V (feature-major); heads: a slice of head
    # numbers; mask [T, T] bool or None; weights_out [n_head, T, T] (one layer's
    # attentions); context [d_model, T]; values_out [n_head, T, d_head]
    """softmax(q k^T / sqrt(d_head)) v for the heads `heads`: their weights into
    weights_out[heads], their outputs into their rows of context, their v token-major (as
    the model reports it, and as the product with the weights reads it) into values_out.

    Example: with every head, this is attention.scaled_dot_product_attention on the heads
    split out of Q, K, V,
    within float32 rounding.
    """
    d_model, T = context.shape
    compiled = (compiled_attention(d_head, qkv, weights_out, context, values_out)
                if mask is None and T < COMPILED_BELOW else None)
    if compiled is not None:
        # _kernels.c's loop, the GIL released: under a few hundred tokens numpy's calls here
        # cost more than their arithmetic (docs/benchmarks.md)
        compiled.attend_features(qkv, weights_out, context, values_out, d_head,
                                 1.0 / math.sqrt(d_head), heads.start, heads.stop)
        return weights_out[heads]
    rows = slice(heads.start * d_head, heads.stop * d_head)  # these heads' feature rows
    q, k, v = (qkv[part * d_model:][rows].reshape(-1, d_head, T) for part in range(3))
    values_out[heads] = v.transpose(0, 2, 1)  # [n, d_head, T] -> [n, T, d_head]
    v = values_out[heads]
    q = q.transpose(0, 2, 1)  # [n, T, d_head], a view: the BLAS reads it transposed, as fast
    # as a copy; the product with the weights stays weights @ v (v @ weights^T was 1.4x
    # slower at 512 tokens); 1 / sqrt(d_head) is applied inside the softmax
    weights, ctx = weights_out[heads], context[rows].reshape(-1, d_head, T)
    step = max(1, SCORES_CHUNK // (T * T))  # heads per chunk
    for h in range(0, len(q), step):
        c = slice(h, h + step)
        scores = np.matmul(q[c], k[c], out=weights[c])  # [step, T, T]
        if mask is not None:
            np.copyto(scores, -np.inf, where=~mask)  # [T, T], broadcast over heads
        softmax_rows_in_place(scores, 1.0 / math.sqrt(d_head))
        ctx[c] = (scores @ v[c]).transpose(0, 2, 1)  # [step, T, d_head] -> [step, d_head, T]
    return weights


def softmax_rows_in_place(s, scale=1.0):  # [..., n] float32 scores, float > 0 -> s
    """Each row of s becomes softmax(scale row) = exp(scale (row - max(row))) / its sum, in
    place (scale: attention's 1 / sqrt(d_head)).

    Example: [[0, ln 3]] -> [[0.25, 0.75]]; [[0, 2 ln 3]] with scale 0.5 -> the same.
    """
    k = compiled_for(s)
    if k is not None:
        k.softmax_rows(s, s.shape[-1], scale)
        return s
    s -= s.max(axis=-1, keepdims=True)
    if scale != 1.0:
        s *= np.float32(scale)
    np.exp(s, out=s)
    s *= 1.0 / s.sum(axis=-1, keepdims=True)  # one division per row
    return s


def causal_softmax_in_place(s, scale=1.0, seen=None):
    # [H, T, S] float32 scores, float > 0, int or None -> s
    """A decoder's attention weights from its scores, in place: row t of each head is the
    softmax of scale times its first seen + t + 1 scores (seen: the keys before the first
    row's own; default S - T, the new tokens being the last T of S), and 0 on the later keys
    it may not see: what masking them to -inf and softmax_rows_in_place give, the same bits
    (the compiled loop skips the mask's pass and the masked exponentials).

    Example: [[[0, 5], [0, ln 3]]] (T = S = 2) -> [[[1, 0], [0.25, 0.75]]]; the second row
    alone, [[[0, ln 3]]], with seen=1 -> [[[0.25, 0.75]]].
    """
    H, T, S = s.shape
    seen = S - T if seen is None else seen
    k = compiled_for(s)
    if k is not None:
        k.causal_softmax(s, T, S, scale, seen)
        return s
    np.copyto(s, -np.inf, where=~np.tri(T, S, seen, dtype=bool))  # broadcast over heads
    return softmax_rows_in_place(s, scale)


# Scores are made, exponentiated, summed, scaled and multiplied by v in chunks of about
# 1 MB (half a core's L2 cache), so each pass finds them in cache rather than all heads' at
# once (75 MB of attentions at 512 tokens; docs/benchmarks.md).
SCORES_CHUNK = 1 << 18  # float32 scores per chunk
