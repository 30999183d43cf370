"""A BERT encoder (MiniLM is one): every token attends to every token, both directions.

Weights keep the checkpoint's names, e.g. `encoder.layer.0.attention.self.query.weight`.
torch's Linear stores W as [out, in], so a layer computes x @ W.T + b.
"""

import numpy as np

from attention_workshop.real.fast_loop import WHOLE, Stage, run_layers_fast
from attention_workshop.real.fast_ops import (
    activate_in_place,
    layer_norm_columns,
    linear_rows,
)
from attention_workshop.real.fast_path import attention, by_rows, run_layers
from attention_workshop.real.transformer import ACTIVATION, layer_norm, merge_heads, split_heads

# ModelConfig field -> config.json key (the contract is in families.py)
CONFIG_KEYS = {"n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
               "d_model": "hidden_size", "d_mlp": "intermediate_size",
               "n_ctx": "max_position_embeddings", "n_vocab": "vocab_size",
               "n_type": "type_vocab_size", "eps": "layer_norm_eps", "activation": "hidden_act"}
DEFAULTS = {"n_type": 2, "eps": 1e-12, "activation": "gelu"}  # transformers' BertConfig's
REQUIRED = {"position_embedding_type": "absolute"}  # other values need code we do not have
PREFIX = "bert."  # BertForMaskedLM and friends nest the encoder under it; BertModel does not
CAUSAL = False  # every token attends to every token, both directions


def tensor_shapes(cfg):  # ModelConfig -> {checkpoint name: shape}
    """Every tensor the forward pass reads, with the shape config.json implies."""
    D, F = cfg.d_model, cfg.d_mlp
    shapes = {
        "embeddings.word_embeddings.weight": (cfg.n_vocab, D),
        "embeddings.position_embeddings.weight": (cfg.n_ctx, D),
        "embeddings.token_type_embeddings.weight": (cfg.n_type, D),
        "embeddings.LayerNorm.weight": (D,),
        "embeddings.LayerNorm.bias": (D,),
    }
    for i in range(cfg.n_layer):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            shapes[f"{p}attention.self.{name}.weight"] = (D, D)
            shapes[f"{p}attention.self.{name}.bias"] = (D,)
        shapes |= {
            f"{p}attention.output.dense.weight": (D, D),
            f"{p}attention.output.dense.bias": (D,),
            f"{p}attention.output.LayerNorm.weight": (D,),
            f"{p}attention.output.LayerNorm.bias": (D,),
            f"{p}intermediate.dense.weight": (F, D),
            f"{p}intermediate.dense.bias": (F,),
            f"{p}output.dense.weight": (D, F),
            f"{p}output.dense.bias": (D,),
            f"{p}output.LayerNorm.weight": (D,),
            f"{p}output.LayerNorm.bias": (D,),
        }
    return shapes


def linear(x, w, b):  # [T, in], [out, in], [out] -> [T, out]
    return x @ w.T + b


def embed(w, cfg, ids):  # {name: array}, ModelConfig, [T] ints -> [T, d_model]
    """Word row + position row + token-type row (type 0: one sentence), then layer norm."""
    T = len(ids)
    x = (w["embeddings.word_embeddings.weight"][ids]
         + w["embeddings.position_embeddings.weight"][:T]
         + w["embeddings.token_type_embeddings.weight"][0])
    return layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], cfg.eps)


def self_attention(x, layer, n_head, mask=None, weights_out=None):
    # [T, d_model] -> ([T, d_model], [n_head, T, T], q, k, v each [n_head, T, d_head])
    """Learned W_Q, W_K, W_V (with biases), heads split, scaled dot-product attention, W_O.

    The weights land in `weights_out` if given (see fast_path.attention)."""
    q = split_heads(linear(x, layer["attention.self.query.weight"],
                           layer["attention.self.query.bias"]), n_head)  # [n_head, T, d_head]
    k = split_heads(linear(x, layer["attention.self.key.weight"],
                           layer["attention.self.key.bias"]), n_head)  # [n_head, T, d_head]
    v = split_heads(linear(x, layer["attention.self.value.weight"],
                           layer["attention.self.value.bias"]), n_head)  # [n_head, T, d_head]
    out, weights = attention(q, k, v, mask, weights_out)  # in the weights' precision
    out = merge_heads(out)  # [n_head, T, d_head] -> [T, d_model]
    out = linear(out, layer["attention.output.dense.weight"], layer["attention.output.dense.bias"])
    return out, weights, q, k, v


def encoder_layer(x, layer, cfg, mask=None, weights_out=None):
    # [T, d_model] -> ([T, d_model], q, k, v each [n_head, T, d_head])
    """Post-norm block: x = LN(x + attention(x)); x = LN(x + MLP(x)). `mask` is None here."""
    a, _, q, k, v = self_attention(x, layer, cfg.n_head, mask, weights_out)
    x = layer_norm(x + a, layer["attention.output.LayerNorm.weight"],
                   layer["attention.output.LayerNorm.bias"], cfg.eps)
    h = linear(x, layer["intermediate.dense.weight"], layer["intermediate.dense.bias"])
    h = by_rows(ACTIVATION[cfg.activation], h)  # [T, d_mlp], in blocks of rows (fast_path.py)
    m = linear(h, layer["output.dense.weight"], layer["output.dense.bias"])  # [T, d_model]
    x = layer_norm(x + m, layer["output.LayerNorm.weight"], layer["output.LayerNorm.bias"],
                   cfg.eps)
    return x, q, k, v




# The same layer for float32, as fast_loop.py runs it: feature-major ([features, T]), as
# stages whose parts may run on threads at once (see families.py).
def fast_stages(layer, cfg, io):  # {short name: array}, ModelConfig, fast_loop.LayerIO
    """-> [Stage]: the heads (their Q|K|V rows, attention, share of W_O plus the input);
    layer norm; the MLP (rows of gelu(W_1 a + b_1), their share of W_2 plus a); layer norm."""
    D, F, T, eps = cfg.d_model, cfg.d_mlp, io.T, cfg.eps
    x, y = io.x, io.y
    a, h = io.temp("a", D), io.temp("h", F)  # [D, T] after attention, [F, T] the MLP's
    names = [f"attention.self.{name}" for name in ("query", "key", "value")]
    pieces = [(layer[f"{name}.weight"], layer[f"{name}.bias"]) for name in names]  # [D, D], [D]
    ln1, ln2 = "attention.output.LayerNorm.", "output.LayerNorm."

    def mlp(r):  # rows r of gelu(W_1 a + b_1), and their share of W_2 h + b_2 + a
        activate_in_place(linear_rows(layer["intermediate.dense.weight"], a,
                                      layer["intermediate.dense.bias"], h, r), cfg.activation)
        io.linear_share(r, layer["output.dense.weight"], h, r, y, layer["output.dense.bias"], a)

    def norm(out, name):  # the shares of `out` added, then its layer norm, in place
        return Stage(T, lambda c: layer_norm_columns(io.gather(out), layer[name + "weight"],
                                                     layer[name + "bias"], eps, c), WHOLE)

    heads = Stage(cfg.n_head, lambda part: io.heads(
        part, pieces, x, layer["attention.output.dense.weight"],
        layer["attention.output.dense.bias"], a))
    return [heads, norm(a, ln1), Stage(F, mlp), norm(y, ln2)]


def forward(w, cfg, ids):  # weights, ModelConfig, [T] ints -> dict of arrays
    """Returns hidden_states [n_layer + 1, T, d_model] (embeddings, then after each layer,
    as transformers' BertModel reports them), attentions [n_layer, n_head, T, T] and each
    layer's queries, keys and values [n_layer, n_head, T, d_head]. float32 runs the same
    layer as fast_stages (fast_loop.py); float64 (Module 3's digits) encoder_layer."""
    x = embed(w, cfg, ids)
    if x.dtype == np.float32:
        return run_layers_fast(fast_stages, w, cfg, x, "encoder.layer.")
    return run_layers(encoder_layer, w, cfg, x, "encoder.layer.")
