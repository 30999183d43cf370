"""The compiled attention against the float64 formula, and numpy's passes where it does not
run: fast/llama.py's prompt attention (_kernels.c's attend_prompt, head sizes 16-64 by 16; on
one thread and on two, with and without cached keys before the prompt's) and an encoder's,
feature by feature as fast/loop.py holds it (attend_features, through ops.attention_heads)."""

import math

import numpy as np
import pytest

from attention_workshop.real.fast import kernels
from attention_workshop.real.fast import llama as fast_llama
from attention_workshop.real.fast.team import Team

pytestmark = pytest.mark.skipif(kernels.compiled is None, reason="_kernels.c not built")


def formula(q, k, v):  # [H, T, d], [H, S, d] twice -> float64 (z [H, T, d], weights [H, T, S])
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    T, S = q.shape[1], k.shape[1]
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
    scores = np.where(np.tri(T, S, S - T, dtype=bool), scores, -np.inf)  # row t: keys <= S-T+t
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return weights @ v, weights


@pytest.mark.parametrize("way", ["compiled", "numpy"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("H", "T", "cached", "d"),
                         [(9, 1, 0, 64), (9, 5, 0, 64), (3, 37, 7, 64), (2, 130, 0, 16),
                          (4, 66, 3, 48)])
def test_prompt_attention_equals_the_formula(way, threads, H, T, cached, d, monkeypatch):
    if way == "numpy":
        monkeypatch.setattr(kernels, "compiled", None)
    rng = np.random.default_rng(T + d)
    q = rng.normal(size=(H, T, d)).astype(np.float32)
    k, v = (rng.normal(size=(H, cached + T, d)).astype(np.float32) for _ in range(2))
    with Team(threads, hold_blas=True) as team:
        z, weights = fast_llama.attention(team)(q, k, v, None)
    z64, w64 = formula(q, k, v)
    np.testing.assert_allclose(weights, w64, rtol=0, atol=1e-6)
    assert not weights[np.broadcast_to(~np.tri(T, cached + T, cached, dtype=bool),
                                       weights.shape)].any()  # exactly 0 where unseen
    np.testing.assert_allclose(z, z64, rtol=0, atol=1e-5)


def test_the_loops_take_head_sizes_of_16_to_64_by_16_on_avx512_or_avx2():
    runs = kernels.compiled.attend_runs
    simd = bool({"avx512", "avx2"} & set(kernels.compiled.block_versions()))
    assert [runs(d) for d in (8, 16, 24, 48, 64, 80)] == [False, simd, False, simd, simd, False]


@pytest.mark.skipif(kernels.compiled is None or not kernels.compiled.attend_runs(64),
                    reason="the compiled attention runs on AVX-512 and AVX2 CPUs")
def test_the_compiled_rows_do_not_depend_on_how_they_are_shared():
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(3, 50, 64)).astype(np.float32) for _ in range(3))
    whole = [np.empty((3, 50, 50), np.float32), np.empty((3, 50, 64), np.float32)]
    kernels.compiled.attend_prompt(q, k, v, *whole, 0.125, 0, 150)
    parts = [np.full((3, 50, 50), np.nan, np.float32), np.full((3, 50, 64), np.nan, np.float32)]
    for a, b in ((0, 7), (7, 61), (61, 150)):  # cuts inside heads and inside a group of rows
        kernels.compiled.attend_prompt(q, k, v, *parts, 0.125, a, b)
    np.testing.assert_array_equal(parts[0], whole[0])
    np.testing.assert_array_equal(parts[1], whole[1])


def test_attend_prompt_refuses_what_it_cannot_read():
    q = np.zeros((2, 4, 16), np.float32)
    k = np.zeros((2, 6, 16), np.float32)
    w, z = np.zeros((2, 4, 6), np.float32), np.zeros((2, 4, 16), np.float32)
    attend = kernels.compiled.attend_prompt
    with pytest.raises(ValueError, match="attend_prompt"):
        attend(q, k, k, w, z, 0.25, 0, 9)  # rows past H T
    with pytest.raises(ValueError, match="attend_prompt"):
        short = np.zeros((2, 3, 16), np.float32)
        attend(q, short, short, w, z, 0.25, 0, 8)  # fewer keys than rows
    with pytest.raises(ValueError, match="attend_prompt"):
        attend(q, k, k, w, z, 0.0, 0, 8)  # no scale
    with pytest.raises(ValueError, match="attend_prompt"):
        attend(q[..., :8].copy(), k[..., :8].copy(), k[..., :8].copy(), w, z[..., :8].copy(),
               0.25, 0, 8)  # a head size its loop does not take
    with pytest.raises(TypeError, match="float32"):
        attend(q.astype(np.float64), k, k, w, z, 0.25, 0, 8)
    with pytest.raises(ValueError, match="C-contiguous"):
        attend(q, k, k, w[:, :, :3], z, 0.25, 0, 8)


def encoder_formula(qkv, H, d):  # [3 D, T] -> float64 (weights [H, T, T], context [D, T])
    q, k, v = (qkv[i * H * d:(i + 1) * H * d].astype(np.float64).reshape(H, d, -1)
               for i in range(3))
    scores = q.transpose(0, 2, 1) @ k / math.sqrt(d)  # [H, T, T]
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    z = weights @ v.transpose(0, 2, 1)  # [H, T, d]
    return weights, z.transpose(0, 2, 1).reshape(H * d, -1)


@pytest.mark.parametrize("way", ["compiled", "numpy"])
@pytest.mark.parametrize(("H", "T", "d"), [(4, 1, 32), (4, 5, 16), (3, 37, 64), (12, 130, 32)])
def test_encoder_attention_feature_by_feature_equals_the_formula(way, H, T, d, monkeypatch):
    """ops.attention_heads as fast/loop.py calls it (MiniLM's layout), heads in two parts."""
    from attention_workshop.real.fast import ops

    if way == "numpy":
        monkeypatch.setattr(kernels, "compiled", None)
    rng = np.random.default_rng(T * d)
    qkv = rng.normal(size=(3 * H * d, T)).astype(np.float32)
    weights = np.full((H, T, T), np.nan, np.float32)
    context = np.full((H * d, T), np.nan, np.float32)
    values = np.full((H, T, d), np.nan, np.float32)
    for heads in (slice(0, H // 2), slice(H // 2, H)):
        ops.attention_heads(qkv, heads, d, None, weights, context, values)
    w64, context64 = encoder_formula(qkv, H, d)
    np.testing.assert_allclose(weights, w64, rtol=0, atol=1e-6)
    np.testing.assert_allclose(context, context64, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(values, qkv[2 * H * d:].reshape(H, d, T).transpose(0, 2, 1))


def test_attend_features_refuses_what_it_cannot_read():
    qkv = np.zeros((3 * 32, 5), np.float32)
    w, ctx, v = (np.zeros(shape, np.float32) for shape in ((2, 5, 5), (32, 5), (2, 5, 16)))
    attend = kernels.compiled.attend_features
    with pytest.raises(ValueError, match="attend_features"):
        attend(qkv, w, ctx, v, 8, 0.25, 0, 4)  # a head size not of 16s
    with pytest.raises(ValueError, match="attend_features"):
        attend(qkv, w, ctx, v, 16, 0.25, 0, 3)  # heads past H
    with pytest.raises(ValueError, match="attend_features"):
        attend(qkv[:90], w, ctx, v, 16, 0.25, 0, 2)  # not 3 D rows
