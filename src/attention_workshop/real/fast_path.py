"""The speed-ups of a real model's forward pass, kept apart from the math they compute.

- `attention`: the core's scaled_dot_product_attention in the weights' precision
  (float32 is twice as fast, and what the reference implementation computes in), with
  1/sqrt(d_k) applied to q ([T, d_k]) rather than to the scores ([T, T]), and the weights
  written in place into a buffer the caller owns.
- `run_layers`: the outputs allocated once at full size and filled layer by layer (a
  512-token MiniLM run holds 6 x 12 x 512 x 512 attention weights: stacking lists would
  copy them).
- `by_rows`: elementwise work on a big array, a block of rows at a time.

tests/test_real_fast_path.py checks attention and by_rows against the plain versions
(the same numbers); the families' tests check the whole forward against transformers.
"""

import numpy as np

from attention_workshop.attention import causal_mask
from attention_workshop.real.blas_threads import one_blas_thread


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


def run_layers(layer, weights, cfg, x, prefix):
    # one-layer fn, {name: array}, ModelConfig, [T, d_model] embeddings, "h." -> dict of arrays
    """Run every layer on the embeddings x, filling hidden_states [n_layer + 1, T, d_model]
    (x, then each layer's output), attentions [n_layer, n_head, T, T], queries, keys and
    values [n_layer, n_head, T, d_head]: what a family's forward returns (see families.py).

    `layer(x, its weights, cfg, mask, weights_out)` -> (x, q, k, v) is one block; it gets
    causal_mask(T) if the family is causal (else None) and its slice of the attentions to
    write into. `prefix` names layer i's tensors: "h." -> "h.0.", "h.1.", ...
    """
    L, H, T = cfg.n_layer, cfg.n_head, len(x)
    out = {
        "hidden_states": np.empty((L + 1, T, cfg.d_model), x.dtype),  # embeddings, then layers
        "attentions": np.empty((L, H, T, T), x.dtype),
        "queries": np.empty((L, H, T, cfg.d_head), x.dtype),
        "keys": np.empty((L, H, T, cfg.d_head), x.dtype),
        "values": np.empty((L, H, T, cfg.d_head), x.dtype),  # what each head blends
    }
    mask = causal_mask(T) if cfg.causal else None  # [T, T]: position i sees 0..i
    out["hidden_states"][0] = x
    with one_blas_thread():  # small products: see blas_threads.py (same bits, fewer waits)
        for i in range(L):
            x, out["queries"][i], out["keys"][i], out["values"][i] = layer(
                x, layer_weights(weights, f"{prefix}{i}."), cfg, mask, out["attentions"][i])
            out["hidden_states"][i + 1] = x
    return out


def layer_weights(weights, prefix):  # {name: array}, "encoder.layer.0." -> {short name: array}
    """Example: layer_weights(w, "h.0.")["attn.c_attn.weight"] is w["h.0.attn.c_attn.weight"]."""
    return {name[len(prefix):]: value for name, value in weights.items()
            if name.startswith(prefix)}


# At 512 tokens gelu runs on a [512, 1536] float32 array (3 MB), and each of its numpy
# temporaries that size is fresh memory that the OS hands over page by page and that does
# not stay in cache. Blocks of 32 rows keep the temporaries small (192 KB at d_mlp 1536) and
# hot: gelu about 2.5x faster; 64-row blocks (384 KB) were still, at times, handed over page
# by page. Each element's arithmetic is unchanged: the same bits as one call on the whole.
BLOCK_ROWS = 32


def by_rows(fn, x, rows=BLOCK_ROWS):  # elementwise fn, [T, ...] -> [T, ...]
    """fn(x), computed `rows` rows at a time. Example: by_rows(gelu, h) equals gelu(h)."""
    if len(x) <= rows:
        return fn(x)
    out = np.empty_like(x)
    for i in range(0, len(x), rows):
        out[i:i + rows] = fn(x[i:i + rows])
    return out
