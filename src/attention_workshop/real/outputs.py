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


def layer_weights(weights, prefix):  # {name: array}, "encoder.layer.0." -> {short name: array}
    """Example: layer_weights(w, "h.0.")["attn.c_attn.weight"] is w["h.0.attn.c_attn.weight"]."""
    return {name[len(prefix):]: value for name, value in weights.items()
            if name.startswith(prefix)}
