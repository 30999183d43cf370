"""layer_norm, gelu and the head split against math.erf and torch, in float32 and float64."""

import math

import numpy as np
import pytest

from attention_workshop.real.fast import float32 as fast32
from attention_workshop.real.fast.float32 import erfc_positive
from attention_workshop.real.layers import (
    erfc,
    gelu,
    gelu_new,
    layer_norm,
    merge_heads,
    split_heads,
)

torch = pytest.importorskip("torch")


def test_erfc_against_math():
    xs = np.linspace(-6, 6, 2001)
    expected = np.array([math.erfc(x) for x in xs])
    np.testing.assert_allclose(erfc(xs), expected, rtol=1.2e-7, atol=0)
    assert erfc(np.float32(1.0)).dtype == np.float32


def test_erfc_positive_against_math():
    """Abramowitz & Stegun 7.1.26 promises |error| <= 1.5e-7; evaluated in float64 it keeps it."""
    zs = np.linspace(0, 8, 8001)
    expected = np.array([math.erfc(z) for z in zs])
    assert np.abs(erfc_positive(zs) - expected).max() < 2e-7
    assert erfc_positive(np.float32(1.0)).dtype == np.float32


def test_gelu_float32_equals_torch_float32():
    """float32 gelu (A&S erfc) against torch's float32 gelu, both signs and far tails."""
    x = np.linspace(-12, 12, 48001).astype(np.float32)
    expected = torch.nn.functional.gelu(torch.from_numpy(x), approximate="none").numpy()
    # a few float32 ulps (2.4e-7 each near |x| = 3): torch's own float32 gelu rounds too
    np.testing.assert_allclose(gelu(x), expected, rtol=0, atol=2e-6)  # the readable formula
    np.testing.assert_allclose(fast32.gelu(x), expected, rtol=0, atol=2e-6)  # the accelerator's
    assert fast32.gelu(x).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_equals_torch(dtype):
    x = np.linspace(-12, 12, 4001).astype(dtype)
    exact = torch.nn.functional.gelu(torch.from_numpy(x.astype(np.float64))).numpy()
    tanh = torch.nn.functional.gelu(torch.from_numpy(x.astype(np.float64)),
                                    approximate="tanh").numpy()
    assert gelu(x).dtype == gelu_new(x).dtype == dtype
    f32 = dtype == np.float32
    np.testing.assert_allclose(gelu(x), exact, rtol=0, atol=2e-6 if f32 else 2e-8)
    np.testing.assert_allclose(gelu_new(x), tanh, rtol=0, atol=2e-6 if f32 else 1e-12)
    assert gelu(np.array([1.0]))[0] == pytest.approx(0.5 * (1 + math.erf(1 / math.sqrt(2))))


@pytest.mark.parametrize("seed", range(3))
def test_layer_norm_equals_torch(seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((7, 48)) * 5 + 3).astype(np.float32)
    w, b = rng.standard_normal(48).astype(np.float32), rng.standard_normal(48).astype(np.float32)
    expected = torch.nn.functional.layer_norm(
        torch.from_numpy(x), (48,), torch.from_numpy(w), torch.from_numpy(b), eps=1e-5).numpy()
    for norm in (layer_norm, fast32.layer_norm):  # the readable formula, the accelerator's
        got = norm(x, w, b, 1e-5)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=0, atol=2e-6)


def test_split_and_merge_heads():
    x = np.arange(2 * 6).reshape(2, 6)  # T = 2, d_model = 6, 3 heads of width 2
    heads = split_heads(x, 3)
    np.testing.assert_array_equal(heads[1], [[2, 3], [8, 9]])  # head 1 owns columns 2-3
    np.testing.assert_array_equal(merge_heads(heads), x)
