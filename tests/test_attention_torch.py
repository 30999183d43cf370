"""scaled_dot_product_attention equals torch.nn.functional.scaled_dot_product_attention."""

import numpy as np
import pytest

from attention_workshop.attention import causal_mask, scaled_dot_product_attention

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("mask_kind", ["none", "causal", "random"])
def test_equals_torch(seed, mask_kind):
    rng = np.random.default_rng(seed)
    heads = int(rng.integers(1, 5))
    T_q = int(rng.integers(1, 12))
    T_k = T_q if mask_kind == "causal" else int(rng.integers(1, 12))
    d_k, d_v = int(rng.integers(1, 65)), int(rng.integers(1, 33))
    q = rng.normal(size=(heads, T_q, d_k))
    k = rng.normal(size=(heads, T_k, d_k))
    v = rng.normal(size=(heads, T_k, d_v))
    mask = None
    if mask_kind == "causal":
        mask = causal_mask(T_q)
    elif mask_kind == "random":
        mask = rng.random((heads, T_q, T_k)) < 0.6
        mask[..., 0] = True  # every query keeps at least one key
    ours, _ = scaled_dot_product_attention(q, k, v, mask)
    theirs = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v),
        attn_mask=None if mask is None else torch.from_numpy(np.ascontiguousarray(mask)),
    ).numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-6, rtol=0)


def test_causal_flag_matches_our_causal_mask():
    rng = np.random.default_rng(42)
    q, k, v = (rng.normal(size=(3, 9, 16)) for _ in range(3))
    ours, _ = scaled_dot_product_attention(q, k, v, causal_mask(9))
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), is_causal=True
    ).numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-6, rtol=0)
