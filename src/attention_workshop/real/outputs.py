"""What a forward pass hands back: every layer's attention weights, hidden states, queries, keys.

The arrays are allocated once at full size and filled layer by layer (a 512-token
MiniLM run holds 6 x 12 x 512 x 512 attention weights: stacking lists would copy them).
"""

import numpy as np


def empty_outputs(cfg, T, dtype):  # ModelConfig, int -> dict of empty arrays
    L, H = cfg.n_layer, cfg.n_head
    return {
        "hidden_states": np.empty((L + 1, T, cfg.d_model), dtype),  # embeddings, then each layer
        "attentions": np.empty((L, H, T, T), dtype),
        "queries": np.empty((L, H, T, cfg.d_head), dtype),
        "keys": np.empty((L, H, T, cfg.d_head), dtype),
    }


def run_layers(layer, weights, cfg, x, prefix):  # block fn, {name: array}, cfg, [T, d_model]
    """Run every layer on the embeddings x, filling hidden_states [n_layer + 1, T, d_model]
    (x, then each layer's output), attentions, queries and keys. `layer(x, its weights, cfg,
    weights_out=...)` is one block; `prefix` names layer i's tensors, e.g. "h." -> "h.0.".
    Each layer's attention weights are written straight into the outputs, never copied."""
    out = empty_outputs(cfg, len(x), x.dtype)
    out["hidden_states"][0] = x
    for i in range(cfg.n_layer):
        x, _, out["queries"][i], out["keys"][i] = layer(
            x, layer_weights(weights, f"{prefix}{i}."), cfg, weights_out=out["attentions"][i])
        out["hidden_states"][i + 1] = x
    return out


def layer_weights(weights, prefix):  # {name: array}, "encoder.layer.0." -> {short name: array}
    """Example: layer_weights(w, "h.0.")["attn.c_attn.weight"] is w["h.0.attn.c_attn.weight"]."""
    return {name[len(prefix):]: value for name, value in weights.items()
            if name.startswith(prefix)}
