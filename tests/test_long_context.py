"""real/analysis/long_context.py against transformers' SmolLM2: the rotary wavelengths from its own
inv_freq, the score by distance from its own apply_rotary_pos_emb, the cache's bytes from
its own DynamicCache after a forward pass; and the numbers notebook 04 prints, by hand."""

import numpy as np
import pytest

from attention_workshop.real.analysis.long_context import (
    cache_sizes,
    score_by_distance,
    wavelengths,
)

torch = pytest.importorskip("torch")


def test_wavelengths_are_two_pi_over_transformers_inv_freq(smollm2_model):
    inv_freq = smollm2_model.model.rotary_emb.inv_freq.double().numpy()  # [32]
    ours = wavelengths(64, 100000.0)
    np.testing.assert_allclose(ours, 2 * np.pi / inv_freq, rtol=1e-6)
    assert len(ours) == 32 and ours[0] == pytest.approx(2 * np.pi)
    assert ours[-1] == pytest.approx(2 * np.pi * 100000 ** (62 / 64))  # 438,460
    assert round(ours[-1]) == 438460 and (ours > 8192).sum() == 12
    assert (wavelengths(64, 10000.0) > 8192).sum() == 7


def test_score_by_distance_equals_transformers_rotation(smollm2_model):
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    rng = np.random.default_rng(3)
    q, k = rng.standard_normal(64), rng.standard_normal(64)
    distances = [0, 1, 3, 8, 100, 512]
    ours = score_by_distance(q, k, 64, 100000.0, distances)
    rotary = smollm2_model.model.rotary_emb
    x = torch.zeros(1, 1, 576)
    for d, score in zip(distances, ours, strict=True):
        for m in (0, 40):  # wherever the pair stands
            cos, sin = rotary(x, torch.tensor([[m + d, m]]))
            qt = torch.tensor(q).view(1, 1, 1, 64)
            kt = torch.tensor(k).view(1, 1, 1, 64)
            qm, _ = apply_rotary_pos_emb(qt, qt, cos[:, :1].double(), sin[:, :1].double())
            kn, _ = apply_rotary_pos_emb(kt, kt, cos[:, 1:].double(), sin[:, 1:].double())
            assert score == pytest.approx(float(qm.flatten() @ kn.flatten()) / 8, abs=1e-4)
    assert ours[0] == pytest.approx(q @ k / 8, abs=1e-12)  # distance 0: no turn at all


def test_cache_bytes_equal_transformers_cache_after_a_forward_pass(smollm2_model):
    from types import SimpleNamespace

    n = 40
    with torch.no_grad():
        out = smollm2_model(input_ids=torch.arange(100, 100 + n)[None], use_cache=True)
    held = sum(layer.keys.nbytes + layer.values.nbytes for layer in out.cache.layers)
    cfg = SimpleNamespace(n_layer=30, n_kv_head=3, n_head=9, d_head=64)
    rows = {(t, name): (grouped, full) for t, name, grouped, full in cache_sizes(cfg, [n, 8192])}
    assert rows[(n, "float32")][0] == held == n * 2 * 30 * 3 * 64 * 4  # float32, 3 KV heads
    assert rows[(n, "bfloat16")] == (held // 2, 3 * held // 2)
    assert rows[(8192, "float32")] == (377_487_360, 1_132_462_080)  # by hand: 8192 x 46,080
