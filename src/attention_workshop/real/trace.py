"""What a forward pass reports, filled layer by layer: the arrays every family returns.

A family's forward runs its blocks one after another and calls its hook points (hooks.py);
a Trace reads them, and `trace.result()` is the dict families.py describes. The outputs
are allocated once at full size (a 512-token MiniLM run holds 6 x 12 x 512 x 512 attention
weights: stacking a list of layers would copy them).
"""

import numpy as np

from attention_workshop.real.hooks import Hooks


class Trace:
    """A hook consumer (hooks.py): it reads the forward's points into arrays made once.

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

    def hooks(self):  # -> hooks.Hooks that copy each point into its place in self.out
        o = self.out

        def into(name, i):  # -> a hook writing its value into o[name][i]
            def keep(value):
                o[name][i] = value
            return keep

        points = {"hook_embed": into("hidden_states", 0),
                  "ln_final.hook_normalized": into("hidden_states", self.n_layer)}
        for i in range(self.n_layer):
            p = f"blocks.{i}."
            points |= {p + "attn.hook_q": into("queries", i), p + "attn.hook_k": into("keys", i),
                       p + "attn.hook_v": into("values", i),
                       p + "attn.hook_pattern": into("attentions", i),
                       p + "attn.hook_z": into("head_outputs", i),
                       p + "hook_resid_post": into("hidden_states", i + 1)}
        return Hooks(points)

    def result(self):  # -> {name: array}, as families.py describes
        return self.out
