"""Llama (SmolLM2 is one): a decoder with rotary positions, grouped-query attention,
RMSNorm and a gated SiLU MLP.

Weights keep the checkpoint's names, e.g. `layers.0.self_attn.q_proj.weight` (stored under
`model.`, which the loader drops); torch's Linear stores W as [out, in]: x @ W.T. What is
new against GPT-2, each a few lines below:
- rotary positions (layers.rotate): no position rows are added to the tokens; q and k are
  turned by an angle that grows with the position, so a score depends on the distance
  between the two tokens only;
- grouped-query attention: n_kv_head key/value heads, each shared by n_head / n_kv_head
  query heads (SmolLM2: 9 over 3), so the KV cache is a third of GPT-2-style heads';
- RMSNorm before attention and before the MLP (scale only, no mean, no bias);
- the MLP is down(silu(gate x) * up x);
- the output head is the token embedding when tie_word_embeddings, else lm_head.
"""

import numpy as np

from attention_workshop.attention import scaled_dot_product_attention
from attention_workshop.real.families import Family, layer_weights
from attention_workshop.real.hooks import chain, hooked_attention
from attention_workshop.real.layers import (
    ACTIVATION,
    merge_heads,
    rms_norm,
    rotary_angles,
    rotate,
    share_heads,
    split_heads,
    whole,
)
from attention_workshop.real.trace import Trace

# ModelConfig field -> config.json key (the contract is in families/__init__.py); transformers 5
# writes rope_theta inside rope_parameters, earlier versions beside it
CONFIG_KEYS = {"n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
               "n_kv_head": "num_key_value_heads", "d_model": "hidden_size",
               "d_head": "head_dim", "d_mlp": "intermediate_size",
               "n_ctx": "max_position_embeddings", "n_vocab": "vocab_size",
               "eps": "rms_norm_eps", "activation": "hidden_act",
               "rope_theta": ("rope_theta", "rope_parameters.rope_theta"),
               "tied": "tie_word_embeddings", "bias": "attention_bias",
               "out_bias": "attention_bias"}  # one key for the four projections' biases
# transformers' LlamaConfig's defaults, and what every Llama is
DEFAULTS = {"n_type": 0, "n_kv_head": None, "d_head": None, "n_ctx": 2048, "eps": 1e-6,
            "activation": "silu", "rope_theta": 10000.0, "tied": False, "bias": False,
            "out_bias": False, "norm": "rms", "positions": "rotary", "gated": True}
# rotary variants (linear, dynamic, yarn, llama3 scaling) and MLP biases: code we do not have
REQUIRED = {"rope_scaling": None, "rope_parameters.rope_type": "default", "mlp_bias": False}
PREFIX = "model."  # LlamaForCausalLM nests the model under it (lm_head stays outside)
CAUSAL = True  # token i attends to tokens 0..i only


def tensor_shapes(cfg):  # ModelConfig -> {checkpoint name: shape}
    """Every tensor the forward pass reads, with the shape config.json implies."""
    D, F, Q, KV = cfg.d_model, cfg.d_mlp, cfg.n_head * cfg.d_head, cfg.n_kv_head * cfg.d_head
    shapes = {"embed_tokens.weight": (cfg.n_vocab, D), "norm.weight": (D,)}
    if not cfg.tied:
        shapes["lm_head.weight"] = (cfg.n_vocab, D)
    for i in range(cfg.n_layer):
        p = f"layers.{i}."
        shapes |= {
            f"{p}input_layernorm.weight": (D,),
            f"{p}self_attn.q_proj.weight": (Q, D), f"{p}self_attn.k_proj.weight": (KV, D),
            f"{p}self_attn.v_proj.weight": (KV, D), f"{p}self_attn.o_proj.weight": (D, Q),
            f"{p}post_attention_layernorm.weight": (D,),
            f"{p}mlp.gate_proj.weight": (F, D), f"{p}mlp.up_proj.weight": (F, D),
            f"{p}mlp.down_proj.weight": (D, F),
        }
        if cfg.bias:  # q, k, v's biases
            shapes |= {f"{p}self_attn.{n}_proj.bias": (size,)
                       for n, size in (("q", Q), ("k", KV), ("v", KV))}
        if cfg.out_bias:
            shapes[f"{p}self_attn.o_proj.bias"] = (D,)
    return shapes


def linear(x, layer, name, bias):  # [T, in], layer's weights, "self_attn.q_proj", has a bias
    # -> [T, out]
    y = x @ layer[f"{name}.weight"].T
    return y + layer[f"{name}.bias"] if bias else y


def self_attention(x, layer, cfg, cos, sin, past, hook, attend=scaled_dot_product_attention,
                   turn=rotate):
    # [T, d_model], rotary cos and sin [T, d_head], past (k, v) [n_kv_head, S0, d_head] or None,
    # the layer's hook points -> [T, d_model]
    """Q, K, V; q and k turned by their positions; keys and values after the cached ones;
    each KV head shared by its group of query heads; causal attention (`attend`: the core's
    formula; real/fast/llama.py passes its in-place twin, proved equal; `turn`: layers.rotate,
    or its compiled twin); W_O."""
    q = split_heads(linear(x, layer, "self_attn.q_proj", cfg.bias), cfg.n_head)  # [H, T, d]
    k = split_heads(linear(x, layer, "self_attn.k_proj", cfg.bias), cfg.n_kv_head)  # [K, T, d]
    v = split_heads(linear(x, layer, "self_attn.v_proj", cfg.bias), cfg.n_kv_head)
    q, k = turn(q, cos, sin), turn(k, cos, sin)
    if past is not None:  # the KV cache: every earlier token's keys and values, as computed
        k, v = np.concatenate([past[0], k], axis=1), np.concatenate([past[1], v], axis=1)
    q, k, v = hook("attn.hook_q", q), hook("attn.hook_k", k), hook("attn.hook_v", v)
    T, S = q.shape[1], k.shape[1]
    mask = np.tri(T, S, S - T, dtype=bool)  # [T, S]: new token i (position S - T + i) sees 0..it
    out, _ = hooked_attention(q, share_heads(k, cfg.n_head), share_heads(v, cfg.n_head), mask,
                              hook, attend)  # [n_head, T, d_head]
    return linear(merge_heads(out), layer, "self_attn.o_proj", cfg.out_bias)


def gated(gate, up, activation):  # [T, d_mlp] twice, config's name -> [T, d_mlp]
    """act(gate) * up: the gate decides, per feature, how much of up passes."""
    return ACTIVATION[activation](gate) * up


def mlp(x, layer, cfg, gated=gated):  # [T, d_model] -> [T, d_model]
    """SwiGLU: down(act(gate x) * up x) (`gated`: real/fast/llama.py passes its compiled twin)."""
    gate = linear(x, layer, "mlp.gate_proj", False)  # [T, d_mlp]
    up = linear(x, layer, "mlp.up_proj", False)
    return linear(gated(gate, up, cfg.activation), layer, "mlp.down_proj", False)


def decoder_layer(x, layer, cfg, cos, sin, past, hook, attend=scaled_dot_product_attention,
                  gated=gated, norm=rms_norm, turn=rotate):  # [T, d_model] -> [T, d_model]
    """Pre-norm block: x = x + attention(RMSNorm(x)); x = x + MLP(RMSNorm(x)) (`norm`:
    layers.rms_norm, or its compiled twin)."""
    a = self_attention(norm(x, layer["input_layernorm.weight"], cfg.eps), layer, cfg, cos,
                       sin, past, hook, attend, turn)
    x = x + hook("hook_attn_out", a)
    m = mlp(norm(x, layer["post_attention_layernorm.weight"], cfg.eps), layer, cfg, gated)
    return hook("hook_resid_post", x + hook("hook_mlp_out", m))


def forward(w, cfg, ids, past=None, hooks=None, attend=scaled_dot_product_attention,
            trace=Trace, gated=gated, norm=rms_norm, turn=rotate):
    # weights, ModelConfig, [T] ints, an earlier forward's result (its keys and values are the
    # cache) or None, hooks.Hooks or None; the attention function, the Trace class, the
    # gated activation, the norm and the rotation (real/fast/llama.py hands in its own)
    # -> dict of arrays (families/)
    """hidden_states [n_layer + 1, T, d_model] (the embeddings, each block's input, the last
    block's output after the final norm, as transformers reports them), attentions
    [n_layer, n_head, T, S], queries [n_layer, n_head, T, d_head], keys and values
    [n_layer, n_kv_head, S, d_head]; S = T, or T plus the cached tokens with `past`."""
    start = 0 if past is None else past["keys"].shape[2]  # tokens already in the cache
    T = len(ids)
    x = w["embed_tokens.weight"][ids]  # [T, d_model]: no position rows: positions rotate q, k
    trace = trace(cfg, T, x.dtype, T_keys=start + T)
    hooks = chain(hooks, trace.hooks())  # the caller's first: the trace keeps what they left
    x = hooks("hook_embed", x)
    cos, sin = rotary_angles(np.arange(start, start + T), cfg.d_head, cfg.rope_theta)
    for i in range(cfg.n_layer):
        cached = None if past is None else (past["keys"][i], past["values"][i])
        x = decoder_layer(x, layer_weights(w, f"layers.{i}."), cfg, cos, sin, cached,
                          hooks.layer(i), attend, gated, norm, turn)
    hooks("ln_final.hook_normalized", norm(x, w["norm.weight"], cfg.eps))
    return trace.result()


def logits(w, cfg, hidden):  # weights, ModelConfig, [T, d_model] after the norm -> [T, n_vocab]
    """The next token's scores: hidden @ E.T, E the token embedding (tied) or lm_head."""
    head = w["embed_tokens.weight"] if cfg.tied else w["lm_head.weight"]
    return hidden @ whole(head).T


# a GGUF file's names for the same tensors (llama.cpp's converter): "blk.N." + key -> ours
# after "model.layers.N.", and the tensors outside the layers -> their state_dict names
GGUF_LAYER = {"attn_norm.weight": "input_layernorm.weight",
              "attn_q.weight": "self_attn.q_proj.weight",
              "attn_k.weight": "self_attn.k_proj.weight",
              "attn_v.weight": "self_attn.v_proj.weight",
              "attn_output.weight": "self_attn.o_proj.weight",
              "ffn_norm.weight": "post_attention_layernorm.weight",
              "ffn_gate.weight": "mlp.gate_proj.weight",
              "ffn_up.weight": "mlp.up_proj.weight",
              "ffn_down.weight": "mlp.down_proj.weight"}
GGUF_OUTSIDE = {"token_embd.weight": "model.embed_tokens.weight",
                "output_norm.weight": "model.norm.weight",
                "output.weight": "lm_head.weight"}  # absent when the head is the embedding

FAMILY = Family(model_type="llama", config_keys=CONFIG_KEYS, defaults=DEFAULTS,
                required=REQUIRED, prefix=PREFIX, causal=CAUSAL, tensor_shapes=tensor_shapes,
                forward=forward, logits=logits, gguf_layer=GGUF_LAYER, gguf_outside=GGUF_OUTSIDE,
                layer_prefix="layers.")
