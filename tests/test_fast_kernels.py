"""real/fast/_kernels.c, the compiled loops, on their own: built wherever a C compiler is; exp
from 0 down to float32's smallest normal number against float64; NaN, infinity and masked
scores as numpy's passes give them; arrays of the wrong kind refused, not misread.

(tests/test_fast_ops.py checks each kernel against the float64 formulas, both ways.)
"""

import math
import shutil
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from attention_workshop.real.fast import kernels
from attention_workshop.real.fast.ops import (
    causal_softmax_in_place,
    gelu_in_place,
    layer_norm_columns,
    silu_times_in_place,
    softmax_rows_in_place,
)


def test_built_wherever_a_c_compiler_is():
    compiler = shutil.which("cc") or shutil.which("gcc")
    headers = Path(sysconfig.get_paths()["include"], "Python.h").is_file()
    assert not kernels.stale, "_kernels.c's build is older than its source: pip install -e ."
    if compiler and headers:
        assert kernels.compiled is not None, (
            f"a C compiler ({compiler}) and Python's headers are here, but _kernels.c was "
            "not built: reinstall (pip install -e .) and read the compiler's message")


@pytest.fixture
def k():
    if kernels.compiled is None:
        pytest.skip("_kernels.c was not built here (see test_built_wherever_a_c_compiler_is)")
    return kernels.compiled


def numpy_way(fn, *args, monkeypatch):  # the same fast_ops call with numpy's passes
    with monkeypatch.context() as m:
        m.setattr(kernels, "compiled", None)
        with np.errstate(all="ignore"):  # NaN and infinity are answers here
            return fn(*args)


def test_exp_down_to_float32s_smallest(k):
    # softmax([x, 0]) = [e^x / (e^x + 1), 1 / (e^x + 1)]: after the max is subtracted, the
    # kernel's exp at -|x|, from 0 down to -88 (where float32's normal numbers end)
    x = np.concatenate([np.linspace(-88.0, 88.0, 20001), [-0.0, 1e-30, -1e-30]])
    rows = np.stack([x, np.zeros_like(x)], axis=1).astype(np.float32)
    k.softmax_rows(rows, 2)
    x64 = x.astype(np.float32).astype(np.float64)
    expected = np.stack([1 / (1 + np.exp(-x64)), 1 / (np.exp(x64) + 1)], axis=1)
    np.testing.assert_allclose(rows, expected, rtol=1e-6, atol=1e-37)


def test_gelu_special_values_as_numpy_gives_them(k, monkeypatch):
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 100, -100, 0.0, -0.0, 1e-30, -1e-30,
                  5.5, -5.5, -12.0, 3.0e-39], np.float32)
    got = gelu_in_place(x.copy()[None])[0]
    expected = numpy_way(gelu_in_place, x.copy()[None], monkeypatch=monkeypatch)[0]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))  # NaN for NaN and inf
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-30)
    by_hand = [math.nan, math.nan, math.nan, 1e30, 0, 100, 0, 0, 0]  # inf Phi(inf): inf - inf
    np.testing.assert_allclose(got[:9], np.array(by_hand, np.float32), atol=0)


def test_silu_times_special_values_as_numpy_gives_them(k, monkeypatch):
    g = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 100, -100, 0.0, -0.0, 1e-30, 5.5,
                  -5.5, -12.0, 88.0, -87.0, 3.0e-39], np.float32)
    u = np.linspace(-2, 3, len(g)).astype(np.float32)
    got = silu_times_in_place(g.copy(), u)
    expected = numpy_way(silu_times_in_place, g.copy(), u, monkeypatch=monkeypatch)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))  # NaN for NaN, -inf
    np.testing.assert_array_equal(got[1:5], expected[1:5])  # inf, -inf, +-1e30: as numpy's
    # numpy's 0.5 (1 + tanh(x / 2)) loses digits where sigmoid is small (x = -12: 8e-4 of
    # the value, 1e-7 of the scale); x / (1 + e^-x) keeps them: float64 is the judge here
    exact = [x / (1 + math.exp(-x)) * y for x, y in zip(g[5:].tolist(), u[5:].tolist(),
                                                        strict=True)]
    np.testing.assert_allclose(got[5:], exact, rtol=1e-6, atol=1e-37)  # float64, by hand
    with pytest.raises(ValueError, match="same size"):
        k.silu_times(g, u[:3])


def test_softmax_special_values_as_numpy_gives_them(k, monkeypatch):
    s = np.array([[1, np.inf, 0, 0, 2],  # +inf: the max; inf - inf is NaN, and so the sum
                  [-np.inf, 0, 0, 0, -np.inf],  # masked: exactly 0
                  [np.nan, 0, 0, 0, 0],  # NaN spreads through the sum
                  [-60, 0, -np.inf, 1, 60],
                  [3, 3, 3, 3, 3]], np.float32)
    got = softmax_rows_in_place(s.copy())
    expected = numpy_way(softmax_rows_in_place, s.copy(), monkeypatch=monkeypatch)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-30)
    assert np.isnan(got[[0, 2]]).all()  # so check_finite sees it
    assert (got[1, [0, 4]] == 0).all() and got[3, 2] == 0  # masked scores weigh exactly 0
    np.testing.assert_allclose(got[4], 0.2, rtol=1e-7)  # five equal scores, by hand


@pytest.mark.parametrize("n", [1, 15, 16, 17, 33, 512])  # the 16 lanes: none, one, and tails
def test_softmax_rows_of_every_length(k, n):
    rng = np.random.default_rng(n)
    s = (rng.normal(size=(3, n)) * 8).astype(np.float32)
    expected = np.exp(s.astype(np.float64))
    expected /= expected.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(softmax_rows_in_place(s), expected, rtol=2e-6, atol=1e-12)


def test_layer_norm_one_token_by_hand(k):
    x = np.array([[1.0], [3.0], [5.0]], np.float32)  # one token: mean 3, variance 8 / 3
    out = np.empty_like(x)
    k.layer_norm_columns(x, out, np.float32([1, 2, 1]), np.float32([0, 0, 1]), 0.0, 1)
    z = math.sqrt(3 / 8) * 2  # (5 - 3) / sqrt(8 / 3)
    np.testing.assert_allclose(out[:, 0], [-z, 0, z + 1], rtol=1e-6)
    assert x[0, 0] == 1.0  # x is read, not written


@pytest.mark.parametrize(("T", "S"), [(1, 1), (1, 31), (16, 16), (5, 37), (40, 40)])
def test_the_causal_softmax_gives_the_masked_softmax_bits(k, T, S, monkeypatch):
    # the same lanes as softmax_rows after -inf on the unseen keys: equal bits, not only close
    s = np.random.default_rng(S).normal(size=(2, T, S)).astype(np.float32) * 30
    masked = s.copy()
    np.copyto(masked, -np.inf, where=~np.tri(T, S, S - T, dtype=bool))
    np.testing.assert_array_equal(causal_softmax_in_place(s.copy(), 0.125),
                                  softmax_rows_in_place(masked, 0.125))
    np.testing.assert_allclose(numpy_way(causal_softmax_in_place, s.copy(), 0.125,
                                         monkeypatch=monkeypatch), masked, rtol=0, atol=1e-6)


@pytest.mark.parametrize(("first", "last", "S"), [(0, 64, 200), (64, 128, 200), (130, 131, 131)])
def test_a_block_of_rows_gets_the_same_bits_as_in_the_whole(k, first, last, S, monkeypatch):
    # fast/llama.py's row blocks: rows first..last of T = S prompt tokens, seen = first
    s = np.random.default_rng(first).normal(size=(2, S, S)).astype(np.float32) * 30
    whole = causal_softmax_in_place(s.copy(), 0.125)
    block = np.ascontiguousarray(s[:, first:last])
    np.testing.assert_array_equal(causal_softmax_in_place(block, 0.125, seen=first),
                                  whole[:, first:last])
    block = np.ascontiguousarray(s[:, first:last])
    np.testing.assert_allclose(numpy_way(lambda b: causal_softmax_in_place(b, 0.125, first),
                                         block, monkeypatch=monkeypatch),
                               whole[:, first:last], rtol=0, atol=1e-6)


def test_wrong_arrays_are_refused(k):
    with pytest.raises(TypeError, match="float32"):
        k.gelu(np.zeros(4))  # float64
    with pytest.raises((BufferError, ValueError)):
        k.gelu(np.zeros((4, 4), np.float32)[:, ::2])  # not contiguous
    frozen = np.zeros(4, np.float32)
    frozen.setflags(write=False)
    with pytest.raises((BufferError, ValueError)):
        k.gelu(frozen)
    with pytest.raises(ValueError, match="rows"):
        k.softmax_rows(np.zeros(6, np.float32), 4)
    for scale in (0.0, -1.0, math.nan):  # exp(scale (row - max)) needs scale > 0
        with pytest.raises(ValueError, match="scale"):
            k.softmax_rows(np.zeros(4, np.float32), 4, scale)
    with pytest.raises(ValueError, match=r"\[heads, 4, 3\]"):  # S < T: not causal rows
        k.causal_softmax(np.zeros(12, np.float32), 4, 3)
    with pytest.raises(ValueError, match=r"\[heads, 2, 5\]"):
        k.causal_softmax(np.zeros(12, np.float32), 2, 5)
    x = np.zeros((3, 2), np.float32)
    with pytest.raises(ValueError, match="weight and bias"):
        k.layer_norm_columns(x, x, np.ones(3, np.float32), np.ones(2, np.float32), 0.0, 2)


def test_fast_ops_falls_back_for_arrays_the_loops_do_not_read(k, monkeypatch):
    # a float64 array or a strided view goes to numpy's passes, with the same answer
    x = np.random.default_rng(0).normal(size=(4, 6))
    strided = np.asarray(x, np.float32)[:, ::2]
    expected = numpy_way(gelu_in_place, strided.copy(), monkeypatch=monkeypatch)
    np.testing.assert_allclose(gelu_in_place(strided), expected, rtol=0, atol=0)
    w, b = np.ones(4), np.zeros(4)  # float64 weights
    got = layer_norm_columns(x.astype(np.float32), w, b, 1e-12, slice(0, 6))
    mean, var = x.mean(axis=0), x.var(axis=0)
    np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-12), atol=1e-5)
