"""What a forward pass reports, filled layer by layer: the arrays every family returns.

A family's forward runs its blocks one after another and calls its hook points (hooks.py);
a Trace reads them, and `trace.result()` is the dict families/__init__.py describes. The outputs
are allocated once at full size (a 512-token MiniLM run holds 6 x 12 x 512 x 512 attention
weights: stacking a list of layers would copy them).
"""

import numpy as np


class Trace:
    """A hook consumer (hooks.py's protocol: called with each point's name and value, and
    .layer(i) for a layer's): it reads the forward's points into arrays made once.

    Example: t = Trace(cfg, T=5, dtype=np.float64); family.forward(w, cfg, ids, hooks=t.hooks())
    ... t.result()["attentions"].shape -> (L, H, 5, 5).

    `empty(shape, dtype, name)` makes each array (np.empty; real/fast/ hands in memory
    kept between passes)."""

    @staticmethod
    def empty(shape, dtype, name):  # -> an uninitialised array
        return np.empty(shape, dtype)

    def __init__(self, cfg, T, dtype, T_keys=None):
        # ModelConfig, tokens run, dtype, tokens attended (T plus a cache's, when decoding)
        L, H, K, d = cfg.n_layer, cfg.n_head, cfg.n_kv_head, cfg.d_head
        S = T if T_keys is None else T_keys
        shapes = {
            "hidden_states": (L + 1, T, cfg.d_model),  # the embeddings, then every layer
            "attentions": (L, H, T, S),
            "queries": (L, H, T, d),
            "keys": (L, K, S, d),  # the model's own key/value heads
            "values": (L, K, S, d),
            "head_outputs": (L, H, T, d),  # each head's output before W_O (hook_z)
        }
        self.out = {name: self.empty(shape, dtype, name) for name, shape in shapes.items()}
        self.n_layer = L

    def hooks(self):  # -> the hook set (hooks.py's protocol) that copies each point into out
        return self

    def __call__(self, name, value):  # the points outside the layers
        if name == "hook_embed":
            self.out["hidden_states"][0] = value
        elif name == "ln_final.hook_normalized":
            self.out["hidden_states"][self.n_layer] = value
        return value

    def wants(self, name):  # the trace asks for nothing that is made only on request
        return False

    def layer(self, i):  # -> layer i's points, by short name
        return TraceLayer(self.out, i)

    def result(self):  # -> {name: array}, as families/__init__.py describes
        return self.out


# a layer's point -> (the output it is kept in, the index in it: layer i's, or i + 1's)
KEPT = {"attn.hook_q": ("queries", 0), "attn.hook_k": ("keys", 0), "attn.hook_v": ("values", 0),
        "attn.hook_pattern": ("attentions", 0), "attn.hook_z": ("head_outputs", 0),
        "hook_resid_post": ("hidden_states", 1)}


class TraceLayer:
    """Layer i's points for a Trace: each kept value copied into its place in the outputs."""

    def __init__(self, out, i):
        self.out, self.i = out, i

    def __call__(self, name, value):
        kept = KEPT.get(name)
        if kept is not None:
            self.out[kept[0]][self.i + kept[1]] = value
        return value

    def wants(self, name):
        return False
