"""GPT-2: a decoder, so each token attends only to itself and the tokens before it.

Weights keep the checkpoint's names, e.g. `h.0.attn.c_attn.weight`. GPT-2 stores its
linear layers as Conv1D with W as [in, out], so a layer computes x @ W + b, and c_attn
holds W_Q, W_K and W_V side by side: [d_model, 3 * d_model].
"""

import numpy as np

from attention_workshop.real.fast_loop import WHOLE, Stage, run_layers_fast
from attention_workshop.real.fast_ops import activate_in_place, layer_norm_columns, linear_rows
from attention_workshop.real.fast_path import attention, by_rows, run_layers
from attention_workshop.real.transformer import ACTIVATION, layer_norm, merge_heads, split_heads

# ModelConfig field -> config.json key (the contract is in families.py)
CONFIG_KEYS = {"n_layer": "n_layer", "n_head": "n_head", "d_model": "n_embd", "d_mlp": "n_inner",
               "n_ctx": "n_positions", "n_vocab": "vocab_size",
               "eps": "layer_norm_epsilon", "activation": "activation_function"}
# transformers' GPT2Config's defaults; n_inner: null (None) means 4 x n_embd; no token types
DEFAULTS = {"n_type": 0, "eps": 1e-5, "activation": "gelu_new", "d_mlp": None}
# options whose other values would need code this package does not have
REQUIRED = {"scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
            "reorder_and_upcast_attn": False}
PREFIX = "transformer."  # GPT2LMHeadModel nests the model under it; the original files do not
CAUSAL = True  # token i attends to tokens 0..i only


def tensor_shapes(cfg):  # ModelConfig -> {checkpoint name: shape}
    """Every tensor the forward pass reads, with the shape config.json implies."""
    D, F = cfg.d_model, cfg.d_mlp
    shapes = {"wte.weight": (cfg.n_vocab, D), "wpe.weight": (cfg.n_ctx, D),
              "ln_f.weight": (D,), "ln_f.bias": (D,)}
    for i in range(cfg.n_layer):
        p = f"h.{i}."
        shapes |= {
            f"{p}ln_1.weight": (D,), f"{p}ln_1.bias": (D,),
            f"{p}attn.c_attn.weight": (D, 3 * D), f"{p}attn.c_attn.bias": (3 * D,),
            f"{p}attn.c_proj.weight": (D, D), f"{p}attn.c_proj.bias": (D,),
            f"{p}ln_2.weight": (D,), f"{p}ln_2.bias": (D,),
            f"{p}mlp.c_fc.weight": (D, F), f"{p}mlp.c_fc.bias": (F,),
            f"{p}mlp.c_proj.weight": (F, D), f"{p}mlp.c_proj.bias": (D,),
        }
    return shapes


def conv1d(x, w, b):  # [T, in], [in, out], [out] -> [T, out]
    return x @ w + b


def self_attention(x, block, n_head, mask, weights_out=None):
    # [T, d_model], [T, T] bool -> ([T, d_model], [n_head, T, T], [n_head, T, d_head] x 3)
    """One projection gives Q, K, V; heads split; masked scaled dot-product attention; W_O.

    The weights land in `weights_out` if given (see fast_path.attention)."""
    qkv = conv1d(x, block["attn.c_attn.weight"], block["attn.c_attn.bias"])  # [T, 3 * d_model]
    q, k, v = (split_heads(part, n_head) for part in np.split(qkv, 3, axis=-1))
    # [T, d_model] -> [n_head, T, d_head] each
    out, weights = attention(q, k, v, mask, weights_out)  # mask: causal_mask(T), see CAUSAL
    out = merge_heads(out)  # [n_head, T, d_head] -> [T, d_model]
    out = conv1d(out, block["attn.c_proj.weight"], block["attn.c_proj.bias"])
    return out, weights, q, k, v


def transformer_block(x, block, cfg, mask, weights_out=None):
    # [T, d_model], [T, T] bool -> ([T, d_model], q, k, v each [n_head, T, d_head])
    """Pre-norm block: x = x + attention(LN(x)); x = x + MLP(LN(x))."""
    a, _, q, k, v = self_attention(
        layer_norm(x, block["ln_1.weight"], block["ln_1.bias"], cfg.eps), block, cfg.n_head,
        mask, weights_out)
    x = x + a
    h = layer_norm(x, block["ln_2.weight"], block["ln_2.bias"], cfg.eps)
    h = conv1d(h, block["mlp.c_fc.weight"], block["mlp.c_fc.bias"])  # [T, d_mlp]
    h = by_rows(ACTIVATION[cfg.activation], h)  # in blocks of rows (see fast_path.py)
    x = x + conv1d(h, block["mlp.c_proj.weight"], block["mlp.c_proj.bias"])  # [T, d_model]
    return x, q, k, v


# The same block for float32, as fast_loop.py runs it: feature-major ([features, T]), as
# stages whose parts may run on threads at once (see families.py). Conv1D's W [in, out] is
# passed as W.T, the [out, in] linear_rows and io.heads expect (a view).
def fast_stages(block, cfg, io):  # {short name: array}, ModelConfig, fast_loop.LayerIO
    """-> [Stage]: layer norm; the heads (their Q|K|V rows, attention, share of W_O plus the
    input); layer norm; the MLP (rows of its activation, their share of W_proj plus a)."""
    D, F, T, eps = cfg.d_model, cfg.d_mlp, io.T, cfg.eps
    x, y = io.x, io.y
    n, a, h = io.temp("n", D), io.temp("a", D), io.temp("h", F)  # normed, x + attention, MLP

    def w(name):  # Conv1D's [in, out] as [out, in]
        return block[name + ".weight"].T

    def mlp(r):  # rows r of activation(W_fc n + b_fc), and their share of W_proj h + b + a
        activate_in_place(linear_rows(w("mlp.c_fc"), n, block["mlp.c_fc.bias"], h, r),
                          cfg.activation)
        io.linear_share(r, w("mlp.c_proj"), h, r, y, block["mlp.c_proj.bias"], a)

    def norm(src, name):  # the shares of src added, then its layer norm into n
        return Stage(T, lambda c: layer_norm_columns(io.gather(src), block[name + ".weight"],
                                                     block[name + ".bias"], eps, c, out=n), WHOLE)

    qkv = [(w("attn.c_attn"), block["attn.c_attn.bias"])]  # Q|K|V as one piece
    heads = Stage(cfg.n_head, lambda part: io.heads(part, qkv, n, w("attn.c_proj"),
                                                    block["attn.c_proj.bias"], a))
    return [norm(x, "ln_1"), heads, norm(a, "ln_2"), Stage(F, mlp),
            Stage(T, lambda c: io.gather(y), WHOLE)]


def forward(w, cfg, ids):  # weights, ModelConfig, [T] ints -> dict of arrays
    """Returns hidden_states [n_layer + 1, T, d_model] (as transformers' GPT2Model reports
    them: the embeddings, each block's input, and the last block's output after ln_f),
    attentions [n_layer, n_head, T, T] and queries, keys and values [n_layer, n_head, T,
    d_head]. float32 runs the block as fast_stages (fast_loop.py); float64
    transformer_block."""
    x = w["wte.weight"][ids] + w["wpe.weight"][: len(ids)]  # [T, d_model]
    if x.dtype == np.float32:
        out = run_layers_fast(fast_stages, w, cfg, x, "h.")
    else:
        out = run_layers(transformer_block, w, cfg, x, "h.")
    last = out["hidden_states"][-1]  # the last block's output, which GPT-2 reports after ln_f
    out["hidden_states"][-1] = layer_norm(last, w["ln_f.weight"], w["ln_f.bias"], cfg.eps)
    return out
