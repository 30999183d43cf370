"""What a forward pass reports, filled layer by layer: the arrays every family returns.

A family's forward runs its blocks one after another and hands each layer's numbers to a
Trace; `trace.result()` is the dict families.py describes. The outputs are allocated once
at full size (a 512-token MiniLM run holds 6 x 12 x 512 x 512 attention weights: stacking
a list of layers would copy them).
"""

import numpy as np


class Trace:
    """Example: t = Trace(cfg, T=5, dtype=np.float64); t.embeddings(x); then per layer
    t.layer(i, x, weights, q, k, v); t.result()["attentions"].shape -> (L, H, 5, 5).

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
        }
        self.out = {name: self.empty(shape, dtype, name) for name, shape in shapes.items()}

    def embeddings(self, x):  # [T, d_model]
        self.out["hidden_states"][0] = x

    def layer(self, i, x, weights, q, k, v):
        # layer i's output [T, d_model], weights [H, T, S], q [H, T, d], k and v [K, S, d]
        o = self.out
        o["hidden_states"][i + 1], o["attentions"][i] = x, weights
        o["queries"][i], o["keys"][i], o["values"][i] = q, k, v

    def result(self):  # -> {name: array}, as families.py describes
        return self.out
