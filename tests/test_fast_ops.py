"""real/fast/ops.py's float32 pieces against independent versions of the same math.

Activations here are feature-major ([features, T]). linear_rows, linear_cols and
qkv_rows_of_heads against a float64 matrix product and by hand, layer_norm_columns against
transformer.layer_norm in float64, gelu_in_place against x Phi(x) through math.erf,
attention_heads against the core's scaled_dot_product_attention in float64, on random
inputs on both sides of every size threshold (one block or several, one chunk of heads or
several, scores small and ~100), whole and in the parts two threads would take. Each test
runs twice: with _kernels.c's compiled loops (where the install built them) and with
numpy's passes.
"""

import math

import numpy as np
import pytest

from attention_workshop.attention import causal_mask, scaled_dot_product_attention
from attention_workshop.real.fast import kernels
from attention_workshop.real.fast import ops as fast_ops
from attention_workshop.real.fast.ops import (
    activate_in_place,
    attention_heads,
    causal_softmax_in_place,
    gelu_in_place,
    layer_norm_columns,
    linear_cols,
    linear_pieces_rows,
    linear_rows,
    qkv_rows_of_heads,
    silu_times_in_place,
    softmax_rows_in_place,
)
from attention_workshop.real.layers import ACTIVATION, layer_norm


@pytest.fixture(autouse=True, params=["compiled", "numpy"])
def way(request, monkeypatch):  # which implementation of gelu, softmax and layer norm runs
    if request.param == "numpy":
        monkeypatch.setattr(kernels, "compiled", None)
    elif kernels.compiled is None:
        pytest.skip("_kernels.c was not built here (tests/test_fast_kernels.py says why)")
    return request.param


@pytest.mark.parametrize("T", [1, 5, 130])
def test_linear_rows_is_w_x_plus_b_row_block_by_row_block(T):
    rng = np.random.default_rng(T)
    x, w, b, add = (rng.normal(size=shape) for shape in ((48, T), (40, 48), 40, (40, T)))
    out = np.full((40, T), np.nan, np.float32)
    f32 = [a.astype(np.float32) for a in (w, x, b, add)]
    for rows in (slice(0, 16), slice(16, 40)):  # two threads' parts: together, every row
        got = linear_rows(*f32[:3], out, rows, add=f32[3])
        assert np.shares_memory(got, out)
    np.testing.assert_allclose(out, w @ x + b[:, None] + add, rtol=1e-5, atol=1e-5)


def test_linear_rows_takes_gpt2_weights_as_a_transposed_view():
    x = np.array([[1.0], [2.0]], np.float32)  # one token, two features
    w = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 2.0]], np.float32)  # Conv1D's [in, out]
    out = np.empty((3, 1), np.float32)
    linear_rows(w.T, x, np.array([0.0, 0.0, 1.0], np.float32), out, slice(0, 3))
    np.testing.assert_array_equal(out, [[1.0], [3.0], [5.0]])  # worked by hand: x @ W + b


@pytest.mark.parametrize("T", [1, 7, 130])
def test_layer_norm_columns_is_the_float64_layer_norm(T):
    rng = np.random.default_rng(T)
    x = rng.normal(size=(T, 64)) * 3 + 5
    weight, bias = rng.normal(size=64), rng.normal(size=64)
    expected = layer_norm(x, weight, bias, 1e-12).T  # float64 statistics, feature-major
    got = np.ascontiguousarray(x.T, np.float32)
    into = np.full_like(got, np.nan)
    for cols in (slice(0, T // 2), slice(T // 2, T)):  # two threads' tokens
        layer_norm_columns(got, weight.astype(np.float32), bias.astype(np.float32), 1e-12,
                           cols, out=into)
    np.testing.assert_allclose(into, expected, rtol=0, atol=1e-5)
    f32 = weight.astype(np.float32), bias.astype(np.float32)
    whole = layer_norm_columns(got, *f32, 1e-12, slice(0, T), out=np.full_like(got, np.nan))
    np.testing.assert_allclose(whole, expected, rtol=0, atol=1e-5)  # every token at once
    in_place = layer_norm_columns(got, *f32, 1e-12, slice(0, T))
    assert np.shares_memory(in_place, got)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    one = np.array([[1.0], [3.0]], np.float32)  # one token, features 1 and 3
    layer_norm_columns(one, np.ones(2, np.float32), np.zeros(2, np.float32), 0.0, slice(0, 1))
    np.testing.assert_allclose(one, [[-1], [1]])  # worked by hand: mean 2, deviation 1


@pytest.mark.parametrize("rows", [1, 31, 32, 33, 100])
@pytest.mark.parametrize("block", [fast_ops.GELU_BLOCK, 24 * 7])  # one block, or blocks of 7
def test_gelu_in_place_is_x_phi_x(rows, block):
    rng = np.random.default_rng(rows)
    h = (rng.normal(size=(rows, 24)) * 4).astype(np.float32)
    h[0, :4] = [0.0, 1.0, -1.0, -30.0]
    expected = [[v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in row]
                for row in h.astype(np.float64)]
    got = gelu_in_place(h.copy(), block)
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=5e-7)  # A&S: 1.5e-7 in erfc
    np.testing.assert_allclose(got[0, :3], [0.0, 0.841345, -0.158655], atol=1e-6)


def core(q, k, v, mask):  # the formula in float64
    return scaled_dot_product_attention(q.astype(np.float64), k.astype(np.float64),
                                        v.astype(np.float64), mask)


@pytest.mark.parametrize("T", [1, 6, 40])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("loud", [False, True])  # scores of ~100: exp would overflow unshifted
@pytest.mark.parametrize("chunk", [1 << 18, 1])  # all heads at once, or one head a chunk
def test_attention_heads_is_the_core_formula(T, causal, loud, chunk, monkeypatch):
    monkeypatch.setattr(fast_ops, "SCORES_CHUNK", chunk)
    H, d = 3, 8
    rng = np.random.default_rng(T)
    q, k, v = (rng.normal(size=(H, T, d)).astype(np.float32) for _ in range(3))
    if loud:
        q *= 30
    # Q|K|V feature-major, as the layer holds it: [3 H d, T], head h's rows h d .. (h + 1) d
    qkv = np.concatenate([part.transpose(0, 2, 1).reshape(H * d, T) for part in (q, k, v)])
    mask = causal_mask(T) if causal else None
    weights = np.full((H, T, T), np.nan, np.float32)
    context = np.full((H * d, T), np.nan, np.float32)
    values = np.full((H, T, d), np.nan, np.float32)
    for heads in (slice(0, 1), slice(1, H)):  # two threads' heads: together, every head
        attention_heads(qkv, heads, d, mask, weights, context, values)
    out, expected = core(q, k, v, mask)
    # scores of ~100 (loud) carry float32's rounding of q k into the exponent
    np.testing.assert_allclose(weights, expected, rtol=0, atol=1e-5 if loud else 1e-6)
    merged = context.reshape(H, d, T).transpose(0, 2, 1)  # [H, T, d]
    np.testing.assert_allclose(merged, out, rtol=0, atol=1e-4 if loud else 1e-5)
    np.testing.assert_array_equal(values, v)  # v as the model reports it


@pytest.mark.parametrize("scale", [1.0, 0.5, 1 / math.sqrt(32)])
def test_softmax_rows_in_place_by_hand_and_scaled(scale):
    by_hand = softmax_rows_in_place(np.float32([[0, math.log(3) / scale]]), scale)
    np.testing.assert_allclose(by_hand, [[0.25, 0.75]], rtol=1e-6)  # e^0 : e^ln 3 = 1 : 3
    s = np.random.default_rng(3).normal(size=(4, 7, 33)).astype(np.float32) * 20
    expected = np.exp(scale * (s.astype(np.float64) - s.max(axis=-1, keepdims=True)))
    expected /= expected.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(softmax_rows_in_place(s, scale), expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize(("T", "S"), [(1, 1), (1, 40), (5, 17), (33, 33), (7, 70)])
def test_causal_softmax_in_place_by_hand_and_against_the_masked_formula(T, S):
    by_hand = causal_softmax_in_place(np.float32([[[0, 5], [0, math.log(3)]]]))
    np.testing.assert_allclose(by_hand, [[[1, 0], [0.25, 0.75]]], rtol=1e-6)
    s = np.random.default_rng(T * S).normal(size=(3, T, S)).astype(np.float32) * 20
    scale = 1 / math.sqrt(64)
    expected = np.exp(scale * (s.astype(np.float64) - s.max(axis=-1, keepdims=True)))
    expected *= np.tri(T, S, S - T)  # token t (position S - T + t) sees keys 0..S - T + t
    expected /= expected.sum(axis=-1, keepdims=True)
    got = causal_softmax_in_place(s, scale)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert (got[:, np.tri(T, S, S - T) == 0] == 0).all()  # the unseen keys: exactly 0


def test_silu_times_in_place_by_hand_and_against_float64():
    by_hand = silu_times_in_place(np.float32([[1, -1]]), np.float32([[2, 2]]))
    np.testing.assert_allclose(by_hand, [[2 / (1 + math.exp(-1)), -2 / (1 + math.e)]], rtol=1e-6)
    rng = np.random.default_rng(5)
    g, u = (rng.normal(size=(7, 1536)).astype(np.float32) * 6 for _ in range(2))
    exact = g.astype(np.float64) / (1 + np.exp(-g.astype(np.float64))) * u
    scale = np.abs(g.astype(np.float64) * u)  # numpy's tanh form: ~6e-8 of |g u| off at worst
    got = silu_times_in_place(g, u)
    assert (np.abs(got - exact) <= 1e-6 * scale + 1e-30).all()


def test_qkv_rows_of_heads_by_hand():
    # 4 heads of d_head 2 (d_model 8): W_Q, W_K, W_V as identities scaled 1, 2, 3; x = 1..8
    D, d = 8, 2
    x = np.arange(1, D + 1, dtype=np.float32)[:, None]  # one token
    pieces = [(np.eye(D, dtype=np.float32) * s, np.zeros(D, np.float32)) for s in (1, 2, 3)]
    qkv = np.full((3 * D, 1), np.nan, np.float32)
    qkv_rows_of_heads(pieces, x, qkv, slice(1, 3), d)  # heads 1 and 2: rows 2..6 of each
    made = ~np.isnan(qkv[:, 0])
    assert list(np.flatnonzero(made)) == [*range(2, 6), *range(10, 14), *range(18, 22)]
    np.testing.assert_array_equal(qkv[2:6, 0], [3, 4, 5, 6])  # Q: x's rows 2..6
    np.testing.assert_array_equal(qkv[18:22, 0], [9, 12, 15, 18])  # V: 3 x
    qkv_rows_of_heads(pieces, x, qkv, slice(0, 4), d)  # every head: all of Q|K|V at once
    np.testing.assert_array_equal(qkv[:, 0], np.concatenate([x[:, 0] * s for s in (1, 2, 3)]))


@pytest.mark.parametrize("T", [1, 5, 130])
def test_linear_cols_shares_sum_to_w_x_plus_b(T):
    rng = np.random.default_rng(T)
    w, x, b, add = (rng.normal(size=shape) for shape in ((40, 48), (48, T), 40, (40, T)))
    f32 = [a.astype(np.float32) for a in (w, x, b, add)]
    first = linear_cols(f32[0], f32[1], slice(0, 16), np.empty((40, T), np.float32), *f32[2:])
    second = linear_cols(f32[0], f32[1], slice(16, 48), np.empty((40, T), np.float32))
    np.testing.assert_allclose(first + second, w @ x + b[:, None] + add, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(second, w[:, 16:] @ x[16:], rtol=1e-5, atol=1e-5)
    by_hand = linear_cols(np.float32([[1, 2]]), np.float32([[3], [4]]), slice(1, 2),
                          np.empty((1, 1), np.float32))
    assert by_hand[0, 0] == 8  # 2 x 4


def test_linear_pieces_rows_is_the_stacked_layer_part_by_part():
    rng = np.random.default_rng(7)
    pieces = [(rng.normal(size=(n, 6)).astype(np.float32), rng.normal(size=n).astype(np.float32))
              for n in (4, 4, 5)]
    x = rng.normal(size=(6, 3)).astype(np.float32)
    w = np.concatenate([p[0] for p in pieces]).astype(np.float64)
    b = np.concatenate([p[1] for p in pieces]).astype(np.float64)
    out = np.full((13, 3), np.nan, np.float32)
    for rows in (slice(0, 2), slice(2, 6), slice(6, 13)):  # parts across the pieces' edges
        linear_pieces_rows(pieces, x, out, rows)
    np.testing.assert_allclose(out, w @ x + b[:, None], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(ACTIVATION))
def test_activate_in_place_is_the_activation_in_float64(name):
    h = (np.random.default_rng(3).normal(size=(40, 24)) * 4).astype(np.float32)
    expected = ACTIVATION[name](h.astype(np.float64))
    got = h.copy()
    assert activate_in_place(got, name) is got
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=5e-7)
