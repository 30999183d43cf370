"""A decoder at long context: how slowly rotary positions turn, and what the KV cache costs.

Rotary positions turn pair i of a query or key (d_head / 2 pairs) by p / theta^(2i / d_head)
radians at position p (layers.rotary_angles), so pair i comes back to where it started every
2 pi theta^(2i / d_head) positions: its wavelength. SmolLM2 (d_head 64, theta 100000): 32
pairs, from 6.3 positions (pair 0, a full turn every 6 tokens) to 438,460 (pair 31).
A large theta leaves slow pairs that have not turned far even thousands of tokens apart, so
far distances stay distinct from near ones: chosen for long context.

Example: wavelengths(64, 100000.0)[0] -> 6.283 (2 pi); [-1] -> 438,460 (2 pi 100000^(62/64)).
"""

import numpy as np

from attention_workshop.real.decode import cache_bytes


def wavelengths(d_head, theta):  # -> [d_head / 2] positions per full turn of each pair
    """Example: wavelengths(4, 100.0) -> [2 pi, 2 pi 10] = [6.283, 62.83]."""
    return 2 * np.pi * theta ** (np.arange(0, d_head, 2, dtype=np.float64) / d_head)


def score_by_distance(q, k, d_head, theta, distances):  # [d], [d], ..., [n] -> [n]
    """q . k / sqrt(d_head) with q turned to position m + distance and k to position m (any m:
    only the distance counts, [S11]). Example: distance 0 -> q . k / sqrt(d_head), unturned."""
    from attention_workshop.real.layers import rotary_angles, rotate

    distances = np.asarray(distances)
    cos, sin = rotary_angles(distances, d_head, theta)  # [n, d]
    turned = rotate(np.asarray(q, dtype=np.float64)[None, None], cos, sin)[0]  # [n, d]
    return turned @ np.asarray(k, dtype=np.float64) / np.sqrt(d_head)


def cache_sizes(cfg, lengths, itemsizes=(("float32", 4), ("bfloat16", 2))):
    # ModelConfig, [tokens] -> [(tokens, dtype, bytes with cfg.n_kv_head KV heads, with n_head)]
    """The KV cache's bytes at each length, by number type, grouped-query and not.
    Example: SmolLM2 at 2,048 tokens, float32 -> (2048, 'float32', 94,371,840, 283,115,520)."""
    return [(n, name, n * cache_bytes(cfg, itemsize=size),
             n * cache_bytes(cfg, kv_heads=cfg.n_head, itemsize=size))
            for n in lengths for name, size in itemsizes]
