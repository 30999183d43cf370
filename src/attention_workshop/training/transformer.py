"""A small attention-only transformer, forward and backward: no MLP, no norm, no bias.

    x = W_E[ids] + W_pos[:T]                          token row plus position row
    per layer: x = x + concat_h(attention_h(x)) @ W_O   each head: causal, scaled, own q, k, v
    logits = x @ W_U

Parameters are {name: array} (an optimizer's input): "W_E" [V, D], "W_pos" [n_ctx, D],
"W_U" [D, V], and per layer l "l.W_Q", "l.W_K", "l.W_V" [D, H * d_head] (head h owns
columns h d_head .. (h + 1) d_head - 1) and "l.W_O" [H * d_head, D]. Batched: ids [B, T].
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.attention import causal_mask
from attention_workshop.real.interventions import ablation
from attention_workshop.training.attention_grad import attention, attention_backward


@dataclass(frozen=True)
class Config:
    n_vocab: int = 32
    n_ctx: int = 32
    d_model: int = 32
    n_layer: int = 2
    n_head: int = 2

    @property
    def d_head(self):
        return self.d_model // self.n_head


def init_params(cfg, rng):  # Config, np.random.Generator -> {name: array}, float64
    """Entries N(0, 1 / fan_in), so every row of x starts near size 1; W_U ten times smaller,
    so the first guesses are near even (loss near log n_vocab)."""
    D, V, HD = cfg.d_model, cfg.n_vocab, cfg.n_head * cfg.d_head
    shapes = {"W_E": (V, D), "W_pos": (cfg.n_ctx, D)}
    for layer in range(cfg.n_layer):
        shapes |= {f"{layer}.W_{n}": (D, HD) for n in "QKV"} | {f"{layer}.W_O": (HD, D)}
    shapes["W_U"] = (D, V)
    fan_in = {"W_E": 1, "W_pos": 1}  # embedding rows are looked up, not multiplied
    gain = {"W_U": 0.1}
    return {name: rng.standard_normal(shape) * gain.get(name, 1.0)
            / np.sqrt(fan_in.get(name, shape[0])) for name, shape in shapes.items()}


def split_heads(x, n_head):  # [B, T, H * d_head] -> [B, H, T, d_head]
    B, T, _ = x.shape
    return np.ascontiguousarray(x.reshape(B, T, n_head, -1).transpose(0, 2, 1, 3))


def merge_heads(x):  # [B, H, T, d_head] -> [B, T, H * d_head]
    B, H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d)


def forward(params, cfg, ids, ablate=()):  # {name: array}, Config, [B, T] -> (logits, cache)
    """Logits [B, T, V] and what backward needs (cache["attentions"]: [L, B, H, T, T]).

    `ablate`: (layer, head) pairs whose output is set to zero, by Module 5's own hooks
    (real/interventions.py's ablation, at each layer's "blocks.L.attn.hook_z").
    Example: forward(init_params(Config(), rng), Config(), ids[None])[0].shape -> (1, T, 32).
    """
    ids = np.asarray(ids)
    T = ids.shape[1]
    x = params["W_E"][ids] + params["W_pos"][:T]  # [B, T, D]
    mask = causal_mask(T)
    hooks = ablation(cfg, list(ablate))  # no heads: no hooks
    layers = []
    for layer in range(cfg.n_layer):
        W = {n: params[f"{layer}.W_{n}"] for n in "QKVO"}
        q, k, v = (split_heads(x @ W[n], cfg.n_head) for n in "QKV")  # [B, H, T, d_head]
        z, weights = attention(q, k, v, mask)  # [B, H, T, d_head], [B, H, T, T]
        if hooks.wants(f"blocks.{layer}.attn.hook_z"):
            z = np.stack([hooks(f"blocks.{layer}.attn.hook_z", one) for one in z])  # [H, T, d]
        layers.append({"x": x, "q": q, "k": k, "v": v, "weights": weights, "z": z})
        x = x + merge_heads(z) @ W["O"]  # [B, T, D]: each layer adds to the residual stream
    cache = {"ids": ids, "layers": layers, "x_final": x, "ablate": tuple(ablate),
             "attentions": np.stack([c["weights"] for c in layers])}
    return x @ params["W_U"], cache


def backward(d_logits, params, cfg, cache):  # [B, T, V], ... -> {name: dloss/dparam}
    """The gradient of the loss for every parameter, given d_logits = dloss/dlogits."""
    grads = {}
    flat = lambda a: a.reshape(-1, a.shape[-1])  # noqa: E731  [B, T, n] -> [B T, n]
    grads["W_U"] = flat(cache["x_final"]).T @ flat(d_logits)  # logits = x @ W_U
    dx = d_logits @ params["W_U"].T  # [B, T, D]
    for layer in reversed(range(cfg.n_layer)):
        c = cache["layers"][layer]
        W = {n: params[f"{layer}.W_{n}"] for n in "QKVO"}
        z = merge_heads(c["z"])  # [B, T, H d_head]
        grads[f"{layer}.W_O"] = flat(z).T @ flat(dx)  # x_out = x + z @ W_O
        dz = split_heads(dx @ W["O"].T, cfg.n_head)  # [B, H, T, d_head]
        for lay, head in cache["ablate"]:
            if lay == layer:
                dz[:, head] = 0.0
        dq, dk, dv = attention_backward(dz, c["q"], c["k"], c["v"], c["weights"])
        for n, d in (("Q", dq), ("K", dk), ("V", dv)):
            d = merge_heads(d)  # [B, T, H d_head]; q = x @ W_Q, and so on
            grads[f"{layer}.W_{n}"] = flat(c["x"]).T @ flat(d)
            dx = dx + d @ W[n].T  # the residual's own path (dx) plus each projection's
    ids = cache["ids"]
    one_hot = np.eye(cfg.n_vocab)[ids.reshape(-1)]  # [B T, V]: x = W_E[ids] + ...
    grads["W_E"] = one_hot.T @ flat(dx)
    d_pos = np.zeros_like(params["W_pos"])
    d_pos[:ids.shape[1]] = dx.sum(axis=0)
    grads["W_pos"] = d_pos
    return {name: grads[name] for name in params}
