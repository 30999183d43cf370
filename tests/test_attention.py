"""softmax and the attention functions against hand-worked cases and plain-Python references."""

import math

import numpy as np
import pytest

from attention_workshop.attention import (
    W_K_WIRED,
    W_Q_WIRED,
    causal_mask,
    scaled_dot_product_attention,
    simple_attention,
    softmax,
    wired_attention,
)
from attention_workshop.embeddings import EMBED, SENT_MONEY, SENT_RIVER, embed


def test_softmax_of_banks_scores_by_hand():
    # e^0 = 1, e^0.54 = 1.716007, e^0.99 = 2.691234; total 5.407241
    total = 1 + math.exp(0.54) + math.exp(0.99)
    expected = [1 / total, math.exp(0.54) / total, math.exp(0.99) / total]
    got = softmax([0.0, 0.54, 0.99])
    np.testing.assert_allclose(got, expected, rtol=1e-15)
    assert [round(v, 3) for v in got] == [0.185, 0.317, 0.498]


def test_x5_demo_by_hand():
    scores = 5 * np.array([0.0, 0.54, 0.99])
    top = math.exp(4.95) / (1 + math.exp(2.7) + math.exp(4.95))
    assert softmax(scores).max() == pytest.approx(top, rel=1e-14)
    assert round(top, 3) == 0.899


def test_embed_stacks_the_lesson_rows():
    X = embed(SENT_RIVER)
    np.testing.assert_array_equal(X, [[0, 0, 0, 1], [0.9, 0, 0.3, 0], [0.3, 0.3, 0.9, 0]])
    np.testing.assert_array_equal(embed(SENT_MONEY)[1], [0.0, 0.9, 0.1, 0.0])


def test_banks_blend_term_by_term():
    """Bank's output in "the river bank" = 0.185.. x the + 0.317.. x river + 0.498.. x bank."""
    w = softmax([0.0, 0.54, 0.99])
    the, river, bank = (EMBED[word] for word in ("the", "river", "bank"))
    water = w[1] * 0.9 + w[2] * 0.3  # the has no water
    money = w[2] * 0.3  # only bank brings money
    place = w[1] * 0.3 + w[2] * 0.9
    filler = w[0] * 1.0  # only "the" is filler
    out, weights = simple_attention(embed(SENT_RIVER))
    np.testing.assert_allclose(weights[2], w, rtol=1e-15)
    np.testing.assert_allclose(out[2], [water, money, place, filler], rtol=1e-14)
    np.testing.assert_allclose(out[2], w[0] * the + w[1] * river + w[2] * bank, rtol=1e-14)
    assert [round(v, 3) for v in out[2]] == [0.435, 0.149, 0.543, 0.185]


def test_wired_head_by_hand():
    """Bank's query [1.8, 0]; keys the [0, 0], river [0.9, 0.3], bank [0.6, 0.9]."""
    scores_bank = np.array([0.0, 1.8 * 0.9, 1.8 * 0.6])  # [0, 1.62, 1.08]
    e = np.exp(scores_bank / math.sqrt(2))
    w = e / e.sum()
    X = embed(SENT_RIVER)
    out, weights, scores = wired_attention(X)
    np.testing.assert_allclose(scores[2], scores_bank, rtol=1e-15)
    np.testing.assert_allclose(weights[2], w, rtol=1e-14)
    np.testing.assert_allclose(out[2], w @ X, rtol=1e-14)
    assert [round(v, 3) for v in out[2]] == [0.552, 0.102, 0.457, 0.159]
    assert W_Q_WIRED.shape == W_K_WIRED.shape == (4, 2)


def test_docstring_example_of_scaled_dot_product_attention():
    out, w = scaled_dot_product_attention([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[10.0], [20.0]])
    a = math.exp(1 / math.sqrt(2))
    np.testing.assert_allclose(w, [[a / (a + 1), 1 / (a + 1)]], rtol=1e-15)
    np.testing.assert_allclose(out, [[10 * a / (a + 1) + 20 / (a + 1)]], rtol=1e-15)


def _reference_attention(q, k, v, mask):
    """Plain-Python loops: a second implementation to compare against."""
    T_q, T_k = len(q), len(k)
    out = []
    for i in range(T_q):
        scores = [sum(a * b for a, b in zip(q[i], k[j], strict=True)) / math.sqrt(len(q[i]))
                  for j in range(T_k)]
        allowed = [j for j in range(T_k) if mask is None or mask[i][j]]
        top = max(scores[j] for j in allowed)
        e = {j: math.exp(scores[j] - top) for j in allowed}
        total = sum(e.values())
        out.append([sum(e[j] / total * v[j][c] for j in allowed) for c in range(len(v[0]))])
    return np.array(out)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("causal", [False, True])
def test_matches_plain_python_reference(seed, causal):
    rng = np.random.default_rng(seed)
    T, d_k, d_v = 5, 3, 2
    q, k, v = rng.normal(size=(T, d_k)), rng.normal(size=(T, d_k)), rng.normal(size=(T, d_v))
    mask = causal_mask(T) if causal else None
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    np.testing.assert_allclose(out, _reference_attention(q, k, v, mask), rtol=1e-12, atol=1e-12)


def test_causal_mask_by_hand():
    np.testing.assert_array_equal(causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])


def test_fully_masked_row_is_an_error():
    with pytest.raises(ValueError, match="no key"):
        scaled_dot_product_attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)),
                                     mask=np.array([[True, False], [False, False]]))


def test_softmax_leaves_its_input_alone():
    x = np.random.default_rng(0).normal(size=(3, 7))
    before = x.copy()
    got = softmax(x)
    np.testing.assert_array_equal(x, before)  # the core never writes into its arguments
    e = np.exp(before - before.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-15)


def test_softmax_along_another_axis():
    """axis=0 normalises each column: column j is the softmax of x[:, j], by hand."""
    x = np.random.default_rng(2).normal(size=(4, 3))
    got = softmax(x, axis=0)
    for j in range(3):
        e = [math.exp(value) for value in x[:, j]]
        np.testing.assert_allclose(got[:, j], [v / sum(e) for v in e], rtol=1e-14)
