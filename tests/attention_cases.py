"""Random attention inputs shared by the tests that compare attention implementations."""

import numpy as np

from attention_workshop.attention import causal_mask


def random_case(seed, mask_kind):  # -> q, k, v (float64, heads batched), mask or None
    rng = np.random.default_rng(seed)
    heads = int(rng.integers(1, 5))
    T_q = int(rng.integers(1, 13))
    T_k = T_q if mask_kind == "causal" else int(rng.integers(1, 13))
    d_k, d_v = int(rng.integers(1, 65)), int(rng.integers(1, 33))
    q = rng.normal(size=(heads, T_q, d_k))
    k = rng.normal(size=(heads, T_k, d_k))
    v = rng.normal(size=(heads, T_k, d_v))
    mask = None
    if mask_kind == "causal":
        mask = causal_mask(T_q)  # [T, T], broadcast over the heads
    elif mask_kind == "random":
        mask = rng.random((heads, T_q, T_k)) < 0.6
        mask[..., 0] = True  # every query keeps at least one key
    return q, k, v, mask
