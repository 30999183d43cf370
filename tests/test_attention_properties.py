"""Properties every softmax and attention must have, over random inputs (hypothesis)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_workshop.attention import causal_mask, scaled_dot_product_attention, softmax

finite = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False)
rows = arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 9)), elements=finite)


@given(rows)
def test_softmax_rows_sum_to_one_and_are_finite(x):
    p = softmax(x)
    assert np.isfinite(p).all()
    assert (p >= 0).all()
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-12)


@given(rows, st.floats(-1e3, 1e3))
def test_softmax_ignores_a_constant_added_to_a_row(x, c):
    np.testing.assert_allclose(softmax(x + c), softmax(x), atol=1e-9)


@given(st.integers(2, 8), st.floats(1e3, 1e6))
def test_softmax_is_finite_for_huge_scores(n, big):
    x = np.linspace(0, 1, n) * big
    p = softmax(x)
    assert np.isfinite(p).all()
    assert p.argmax() == n - 1


@st.composite
def qkv(draw):
    T = draw(st.integers(1, 7))
    d_k = draw(st.integers(1, 8))
    d_v = draw(st.integers(1, 5))
    elems = st.floats(-30, 30, allow_nan=False)
    q = draw(arrays(np.float64, (T, d_k), elements=elems))
    k = draw(arrays(np.float64, (T, d_k), elements=elems))
    v = draw(arrays(np.float64, (T, d_v), elements=elems))
    return q, k, v


@settings(max_examples=60)
@given(qkv(), st.booleans())
def test_attention_weights_are_distributions_and_outputs_stay_in_range(data, causal):
    q, k, v = data
    mask = causal_mask(len(q)) if causal else None
    out, w = scaled_dot_product_attention(q, k, v, mask)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)
    # each output is a convex blend of the values: inside their range, per column
    tol = 1e-9 * (1 + np.abs(v).max())
    assert (out >= v.min(axis=0) - tol).all()
    assert (out <= v.max(axis=0) + tol).all()
    if causal:
        assert (w[~causal_mask(len(q))] == 0).all()


@given(qkv())
def test_causal_first_token_sees_only_itself(data):
    q, k, v = data
    out, w = scaled_dot_product_attention(q, k, v, causal_mask(len(q)))
    assert w[0, 0] == 1.0
    np.testing.assert_allclose(out[0], v[0], rtol=1e-12)


@given(st.floats(1e3, 1e5))
def test_attention_is_finite_for_scores_of_1e4(scale):
    q = np.array([[1.0, 0.0], [0.0, 1.0]]) * scale
    out, w = scaled_dot_product_attention(q, q, np.eye(2))
    assert np.isfinite(out).all() and np.isfinite(w).all()
    np.testing.assert_allclose(w, np.eye(2), atol=1e-12)
