"""scaled_dot_product_attention equals torch.nn.functional.scaled_dot_product_attention."""

import numpy as np
import pytest
from attention_cases import random_case

from attention_workshop.attention import causal_mask, scaled_dot_product_attention

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("mask_kind", ["none", "causal", "random"])
def test_equals_torch(seed, mask_kind):
    q, k, v, mask = random_case(seed, mask_kind)
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
