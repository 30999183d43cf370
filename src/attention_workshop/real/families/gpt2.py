"""GPT-2: a decoder, so each token attends only to itself and the tokens before it.

Weights keep the checkpoint's names, e.g. `h.0.attn.c_attn.weight`. GPT-2 stores its
linear layers as Conv1D with W as [in, out], so a layer computes x @ W + b, and c_attn
holds W_Q, W_K and W_V side by side: [d_model, 3 * d_model]. The output head is the token
embedding (tied): the next token's logits are ln_f(x) @ wte.T.
"""

import numpy as np

from attention_workshop.attention import causal_mask
from attention_workshop.real.families import Family, layer_weights
from attention_workshop.real.hooks import chain, hooked_attention
from attention_workshop.real.layers import (
    ACTIVATION,
    layer_norm,
    merge_heads,
    split_heads,
    whole,
)
from attention_workshop.real.trace import Trace

# ModelConfig field -> config.json key (the contract is in families/__init__.py)
CONFIG_KEYS = {"n_layer": "n_layer", "n_head": "n_head", "d_model": "n_embd", "d_mlp": "n_inner",
               "n_ctx": "n_positions", "n_vocab": "vocab_size",
               "eps": "layer_norm_epsilon", "activation": "activation_function"}
# transformers' GPT2Config's defaults; n_inner: null (None) means 4 x n_embd; no token types
DEFAULTS = {"n_type": 0, "eps": 1e-5, "activation": "gelu_new", "d_mlp": None}
# options whose other values would need code this package does not have
REQUIRED = {"scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
            "reorder_and_upcast_attn": False, "add_cross_attention": False}
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


def self_attention(x, block, n_head, mask, hook):
    # [T, d_model], [T, T] bool, the layer's hook points -> [T, d_model]
    """One projection gives Q, K, V; heads split; masked scaled dot-product attention; W_O."""
    qkv = conv1d(x, block["attn.c_attn.weight"], block["attn.c_attn.bias"])  # [T, 3 * d_model]
    q, k, v = (split_heads(part, n_head) for part in np.split(qkv, 3, axis=-1))
    # [T, d_model] -> [n_head, T, d_head] each
    q, k, v = hook("attn.hook_q", q), hook("attn.hook_k", k), hook("attn.hook_v", v)
    out, _ = hooked_attention(q, k, v, mask, hook)  # mask: causal_mask(T)
    out = merge_heads(out)  # [n_head, T, d_head] -> [T, d_model]
    return conv1d(out, block["attn.c_proj.weight"], block["attn.c_proj.bias"])


def transformer_block(x, block, cfg, mask, hook):  # [T, d_model], [T, T] bool -> [T, d_model]
    """Pre-norm block: x = x + attention(LN(x)); x = x + MLP(LN(x))."""
    a = self_attention(layer_norm(x, block["ln_1.weight"], block["ln_1.bias"], cfg.eps), block,
                       cfg.n_head, mask, hook)
    x = x + hook("hook_attn_out", a)
    h = layer_norm(x, block["ln_2.weight"], block["ln_2.bias"], cfg.eps)
    h = ACTIVATION[cfg.activation](conv1d(h, block["mlp.c_fc.weight"], block["mlp.c_fc.bias"]))
    m = conv1d(h, block["mlp.c_proj.weight"], block["mlp.c_proj.bias"])  # [T, d_model]
    return hook("hook_resid_post", x + hook("hook_mlp_out", m))


def forward(w, cfg, ids, hooks=None):  # weights, ModelConfig, [T] ints, hooks.Hooks or None
    # -> dict of arrays (families/__init__.py)
    """hidden_states [n_layer + 1, T, d_model] (as transformers' GPT2Model reports them: the
    embeddings, each block's input, and the last block's output after ln_f), attentions
    [n_layer, n_head, T, T] and queries, keys and values [n_layer, n_head, T, d_head]."""
    T = len(ids)
    x = w["wte.weight"][ids] + w["wpe.weight"][:T]  # [T, d_model]
    trace, mask = Trace(cfg, T, x.dtype), causal_mask(T)  # mask [T, T]: i sees 0..i
    hooks = chain(hooks, trace.hooks())  # the caller's first: the trace keeps what they left
    x = hooks("hook_embed", x)
    for i in range(cfg.n_layer):
        x = transformer_block(x, layer_weights(w, f"h.{i}."), cfg, mask, hooks.layer(i))
    # the last block's output, as GPT-2 reports it: after ln_f
    hooks("ln_final.hook_normalized", layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], cfg.eps))
    return trace.result()


def logits(w, cfg, hidden):  # weights, ModelConfig, [T, d_model] after ln_f -> [T, n_vocab]
    """The next token's scores: the tied head, hidden @ wte.T."""
    return hidden @ whole(w["wte.weight"]).T



FAMILY = Family(model_type="gpt2", config_keys=CONFIG_KEYS, defaults=DEFAULTS, required=REQUIRED,
                prefix=PREFIX, causal=CAUSAL, tensor_shapes=tensor_shapes, forward=forward,
                logits=logits, layer_prefix="h.")
