"""A BERT encoder (MiniLM is one): every token attends to every token, both directions.

Weights keep the checkpoint's names, e.g. `encoder.layer.0.attention.self.query.weight`.
torch's Linear stores W as [out, in], so a layer computes x @ W.T + b.
"""

from attention_workshop.real.families import Family, layer_weights
from attention_workshop.real.hooks import chain, hooked_attention
from attention_workshop.real.layers import ACTIVATION, layer_norm, merge_heads, split_heads
from attention_workshop.real.trace import Trace

# ModelConfig field -> config.json key (the contract is in families/__init__.py)
CONFIG_KEYS = {"n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
               "d_model": "hidden_size", "d_mlp": "intermediate_size",
               "n_ctx": "max_position_embeddings", "n_vocab": "vocab_size",
               "n_type": "type_vocab_size", "eps": "layer_norm_eps", "activation": "hidden_act"}
DEFAULTS = {"n_type": 2, "eps": 1e-12, "activation": "gelu"}  # transformers' BertConfig's
# options whose other values need code we do not have (a decoder's mask, cross-attention,
# relative positions): refused by name rather than run wrongly
REQUIRED = {"position_embedding_type": "absolute", "is_decoder": False,
            "add_cross_attention": False}
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


def embed(w, cfg, ids, norm=layer_norm):  # {name: array}, ModelConfig, [T] ints -> [T, d_model]
    """Word row + position row + token-type row (type 0: one sentence), then layer norm
    (`norm`: real/fast/bert.py hands in its float32 formula)."""
    T = len(ids)
    x = (w["embeddings.word_embeddings.weight"][ids]
         + w["embeddings.position_embeddings.weight"][:T]
         + w["embeddings.token_type_embeddings.weight"][0])
    return norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], cfg.eps)


def self_attention(x, layer, n_head, hook):  # [T, d_model], layer hook points -> [T, d_model]
    """Learned W_Q, W_K, W_V (with biases), heads split, scaled dot-product attention, W_O."""
    q, k, v = (split_heads(linear(x, layer[f"attention.self.{name}.weight"],
                                  layer[f"attention.self.{name}.bias"]), n_head)
               for name in ("query", "key", "value"))  # [T, d_model] -> [n_head, T, d_head]
    q, k, v = hook("attn.hook_q", q), hook("attn.hook_k", k), hook("attn.hook_v", v)
    out, _ = hooked_attention(q, k, v, None, hook)  # no mask: both directions
    out = merge_heads(out)  # [n_head, T, d_head] -> [T, d_model]
    return linear(out, layer["attention.output.dense.weight"],
                  layer["attention.output.dense.bias"])


def encoder_layer(x, layer, cfg, hook):  # [T, d_model], layer hook points -> [T, d_model]
    """Post-norm block: x = LN(x + attention(x)); x = LN(x + MLP(x))."""
    a = hook("hook_attn_out", self_attention(x, layer, cfg.n_head, hook))
    x = layer_norm(x + a, layer["attention.output.LayerNorm.weight"],
                   layer["attention.output.LayerNorm.bias"], cfg.eps)
    h = linear(x, layer["intermediate.dense.weight"], layer["intermediate.dense.bias"])
    h = ACTIVATION[cfg.activation](h)  # [T, d_mlp]
    m = linear(h, layer["output.dense.weight"], layer["output.dense.bias"])  # [T, d_model]
    m = hook("hook_mlp_out", m)
    return hook("hook_resid_post", layer_norm(x + m, layer["output.LayerNorm.weight"],
                                              layer["output.LayerNorm.bias"], cfg.eps))


def forward(w, cfg, ids, hooks=None):  # weights, ModelConfig, [T] ints, hooks.Hooks or None
    # -> dict of arrays (families/__init__.py)
    """hidden_states [n_layer + 1, T, d_model] (embeddings, then after each layer, as
    transformers' BertModel reports them), attentions [n_layer, n_head, T, T] and each
    layer's queries, keys and values [n_layer, n_head, T, d_head]."""
    x = embed(w, cfg, ids)
    trace = Trace(cfg, len(ids), x.dtype)
    hooks = chain(hooks, trace.hooks())  # the caller's first: the trace keeps what they left
    x = hooks("hook_embed", x)
    for i in range(cfg.n_layer):
        x = encoder_layer(x, layer_weights(w, f"encoder.layer.{i}."), cfg, hooks.layer(i))
    return trace.result()


FAMILY = Family(model_type="bert", config_keys=CONFIG_KEYS, defaults=DEFAULTS, required=REQUIRED,
                prefix=PREFIX, causal=CAUSAL, tensor_shapes=tensor_shapes, forward=forward,
                layer_prefix="encoder.layer.")
