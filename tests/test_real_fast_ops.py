"""real/fast_ops.py's float32 pieces against independent versions of the same math.

linear_into against a float64 matrix product, layer_norm_in_place against
transformer.layer_norm in float64, gelu_in_place against x Phi(x) through math.erf,
attention_rows against the core's scaled_dot_product_attention in float64, on random
inputs on both sides of every size threshold (few rows, one chunk of heads or several,
softmax with and without the row's max subtracted).
"""

import math

import numpy as np
import pytest

from attention_workshop.attention import causal_mask, scaled_dot_product_attention
from attention_workshop.real import fast_ops
from attention_workshop.real.fast_ops import (
    attention_rows,
    gelu_in_place,
    layer_norm_in_place,
    linear_into,
    score_bound,
)
from attention_workshop.real.transformer import layer_norm


@pytest.mark.parametrize("rows", [1, 5, fast_ops.FEW_ROWS, fast_ops.FEW_ROWS + 1, 300])
def test_linear_into_is_x_w_transposed_plus_b(rows):
    rng = np.random.default_rng(rows)
    x, w, b = rng.normal(size=(rows, 48)), rng.normal(size=(40, 48)), rng.normal(size=40)
    out = np.full((rows, 40), np.nan, np.float32)
    got = linear_into(x.astype(np.float32), w.astype(np.float32), b.astype(np.float32), out)
    assert got is out
    np.testing.assert_allclose(out, x @ w.T + b, rtol=1e-5, atol=1e-5)


def test_linear_into_takes_gpt2_weights_as_a_transposed_view():
    x = np.array([[1.0, 2.0]], np.float32)
    w = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 2.0]], np.float32)  # Conv1D's [in, out]
    out = linear_into(x, w.T, np.array([0.0, 0.0, 1.0], np.float32), np.empty((1, 3), np.float32))
    np.testing.assert_array_equal(out, [[1.0, 3.0, 5.0]])  # worked by hand: x @ W + b


@pytest.mark.parametrize("rows", [1, 7, 130])
def test_layer_norm_in_place_is_the_float64_layer_norm(rows):
    rng = np.random.default_rng(rows)
    x = rng.normal(size=(rows, 64)) * 3 + 5
    weight, bias = rng.normal(size=64), rng.normal(size=64)
    expected = layer_norm(x, weight, bias, 1e-12)  # float64 statistics
    got = x.astype(np.float32)
    assert layer_norm_in_place(got, weight.astype(np.float32), bias.astype(np.float32),
                               1e-12) is got
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    np.testing.assert_allclose(layer_norm_in_place(np.array([[1.0, 3.0]], np.float32),
                                                   np.ones(2), np.zeros(2), 0.0), [[-1, 1]])


@pytest.mark.parametrize("rows", [1, 31, 32, 33, 100])
def test_gelu_in_place_is_x_phi_x(rows):
    rng = np.random.default_rng(rows)
    h = (rng.normal(size=(rows, 24)) * 4).astype(np.float32)
    h[0, :4] = [0.0, 1.0, -1.0, -30.0]
    expected = [[v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in row]
                for row in h.astype(np.float64)]
    got = gelu_in_place(h.copy())
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=5e-7)  # A&S: 1.5e-7 in erfc
    np.testing.assert_allclose(got[0, :3], [0.0, 0.841345, -0.158655], atol=1e-6)


def core(q, k, v, rows, mask):  # the formula in float64, rows of it
    out, weights = scaled_dot_product_attention(q.astype(np.float64), k.astype(np.float64),
                                                v.astype(np.float64), mask)
    return out[:, rows], weights[:, rows]


@pytest.mark.parametrize("T", [1, 6, 40])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("loud", [False, True])  # scores past EXP_SAFE: the max is subtracted
@pytest.mark.parametrize("chunk", [1 << 18, 1])  # all heads at once, or one head a chunk
def test_attention_rows_is_the_core_formula(T, causal, loud, chunk, monkeypatch):
    monkeypatch.setattr(fast_ops, "SCORES_CHUNK", chunk)
    rng = np.random.default_rng(T)
    q, k, v = (rng.normal(size=(3, T, 8)).astype(np.float32) for _ in range(3))
    if loud:
        q *= 30
    mask = causal_mask(T) if causal else None
    assert (score_bound(q / np.sqrt(8), k.transpose(0, 2, 1)) > fast_ops.EXP_SAFE) == loud
    for rows in (slice(0, T), slice(0, max(1, T // 2)), slice(T // 2, T)):  # two threads' halves
        n = rows.stop - rows.start
        weights = np.full((3, n, T), np.nan, np.float32)
        context = np.full((n, 3 * 8), np.nan, np.float32)  # heads merged, as the layer holds it
        heads = context.reshape(n, 3, 8).transpose(1, 0, 2)
        attention_rows(q, np.ascontiguousarray(k.transpose(0, 2, 1)), v, rows, mask, weights,
                       heads)
        out, expected = core(q, k, v, rows, mask)
        # scores of ~100 (loud) carry float32's rounding of q k into the exponent
        np.testing.assert_allclose(weights, expected, rtol=0, atol=1e-5 if loud else 1e-6)
        np.testing.assert_allclose(heads, out, rtol=0, atol=1e-4 if loud else 1e-5)


def test_score_bound_by_hand():
    q = np.array([[[3.0, 4.0]]])
    k_t = np.array([[[1.0, 0.0], [0.0, 2.0]]])  # keys (1, 0) and (0, 2), transposed
    assert score_bound(q, k_t) == pytest.approx(10.0)  # |q| = 5, largest |k| = 2
