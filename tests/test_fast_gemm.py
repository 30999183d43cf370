"""_gemm.c's product (fast/gemm.py) against float64 numpy, on every edge of its tiles.

The loop works in tiles of 32 tokens and 12 rows of W, over blocks of at most 768 numbers
of n; these shapes cross each boundary (one short, one over) in both layouts. From 256
tokens (token by token) it turns round: tiles of 12 tokens and 32 rows, W copied 384 rows at
a time; TURNED crosses those. Its sums run in one order per output number, so a row's
numbers are the same bits however the rows are shared out, however many tokens come with it
and whichever way the loop runs: checked too.
"""

import numpy as np
import pytest

from attention_workshop.real.fast import gemm
from attention_workshop.real.fast.team import Team

pytestmark = pytest.mark.skipif(gemm.compiled is None,
                                reason="_gemm.c needs an AVX-512 CPU (numpy's product runs)")

SHAPES = [(1, 1, 1), (31, 11, 17), (32, 12, 16), (33, 13, 768), (100, 577, 769),
          (64, 24, 1536), (5, 49, 384)]  # (T tokens, rows of W, n)


def operands(T, rows, n, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(T, n)).astype(np.float32),
            rng.normal(size=(rows, n)).astype(np.float32))


def within_float32(got, x, w):  # got [T, rows] against float64's x @ w.T
    exact = x.astype(np.float64) @ w.astype(np.float64).T
    scale = np.abs(x).astype(np.float64) @ np.abs(w).astype(np.float64).T  # sum |x_k w_k|
    bound = 2 * x.shape[1] * np.finfo(np.float32).eps * scale + 1e-30  # n rounding steps
    assert np.all(np.abs(got - exact) <= bound)


@pytest.mark.parametrize(("T", "rows", "n"), SHAPES)
def test_tokens_first_equals_float64(T, rows, n):
    x, w = operands(T, rows, n)
    within_float32(gemm.times_transposed(x, w), x, w)


TURN_FROM = 256  # _gemm.c's TURN_FROM
TURNED = [(256, 33, 769), (269, 385, 100), (300, 31, 1537), (512, 64, 64)]


@pytest.mark.parametrize(("T", "rows", "n"), TURNED)
def test_turned_round_equals_float64_and_the_tiles_bit_for_bit(T, rows, n):
    x, w = operands(T, rows, n, seed=5)
    got = gemm.times_transposed(x, w)
    within_float32(got, x, w)
    tiles = np.concatenate([gemm.times_transposed(x[t:t + TURN_FROM - 1], w)
                            for t in range(0, T, TURN_FROM - 1)])  # each under TURN_FROM
    np.testing.assert_array_equal(got, tiles)
    with Team(2, hold_blas=True) as team, gemm.shared_by(team):
        np.testing.assert_array_equal(gemm.times_transposed(x, w), got)


@pytest.mark.parametrize(("T", "rows", "n"), SHAPES)
def test_features_first_equals_float64_and_the_other_layout_bit_for_bit(T, rows, n):
    x, w = operands(T, rows, n, seed=1)
    out = np.full((rows, T), np.nan, np.float32)
    gemm.into(w, np.ascontiguousarray(x.T), out)
    within_float32(out.T, x, w)
    np.testing.assert_array_equal(out.T, gemm.times_transposed(x, w))


def test_a_worked_case():  # by hand: rows of W are [1, 2] and [3, -1]
    x = np.float32([[1, 1], [2, 0], [0, 3]])  # three tokens
    w = np.float32([[1, 2], [3, -1]])
    np.testing.assert_array_equal(gemm.times_transposed(x, w),
                                  np.float32([[3, 2], [2, 6], [6, -3]]))


def test_strided_views_read_and_written_in_place():  # loop.py's linear_cols: W[:, cols]
    x, w = operands(40, 30, 100, seed=2)
    xf = np.ascontiguousarray(x.T)  # [n, T]
    out = np.zeros((30, 50), np.float32)
    gemm.into(w[:, 20:70], xf[20:70], out[:, 5:45])
    within_float32(out[:, 5:45].T, x[:, 20:70], w[:, 20:70])
    assert not out[:, :5].any() and not out[:, 45:].any()  # nothing written outside


def test_a_row_and_a_token_do_not_depend_on_the_company_they_keep():
    x, w = operands(70, 50, 300, seed=3)
    whole = gemm.times_transposed(x, w)
    np.testing.assert_array_equal(gemm.times_transposed(x[13:14], w), whole[13:14])
    np.testing.assert_array_equal(gemm.times_transposed(x, w[7:20]), whole[:, 7:20])
    with Team(2, hold_blas=True) as team, gemm.shared_by(team):
        np.testing.assert_array_equal(gemm.times_transposed(x, w), whole)


def test_its_threads_told_to_rest_wake_for_the_next_product():
    x, w = operands(40, 300, 64, seed=6)
    alone = gemm.times_transposed(x, w)
    with Team(2, hold_blas=True) as team, gemm.shared_by(team):
        for _ in range(3):  # rest between products, as fast/llama.py does before its stages
            gemm.rest()
            np.testing.assert_array_equal(gemm.times_transposed(x, w), alone)


def test_long_prompts_feature_by_feature_and_other_types_go_to_numpy():
    x, w = operands(gemm.TOKENS_BELOW, 20, 64, seed=4)
    assert gemm.runs(w, x, len(x))  # token by token: any length
    xf = np.ascontiguousarray(x.T)
    assert not gemm.runs(w, xf, len(x), tokens_first=False)
    assert gemm.runs(w, xf[:, :-1], len(x) - 1, tokens_first=False)
    assert not gemm.runs(w.astype(np.float64), x, 5)
    assert not gemm.runs(np.asfortranarray(w), x, 5)  # rows not contiguous (GPT-2's W.T)
    np.testing.assert_allclose(gemm.times_transposed(x, w), x @ w.T, rtol=1e-5, atol=1e-5)


def test_refuses_what_it_cannot_read():
    k = gemm.compiled
    w, x = np.ones((4, 3), np.float32), np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="shapes do not match"):
        k.weights_times(w, x, np.empty((2, 5), np.float32), True, True)
    with pytest.raises(ValueError, match="float32"):
        k.weights_times(w.astype(np.float64), x, np.empty((2, 4), np.float32), True, True)
    with pytest.raises(ValueError, match="contiguous rows"):
        k.weights_times(np.ones((3, 4), np.float32).T, x, np.empty((2, 4), np.float32), True, True)
    frozen = np.empty((2, 4), np.float32)
    frozen.setflags(write=False)
    with pytest.raises((ValueError, BufferError)):
        k.weights_times(w, x, frozen, True, True)


def test_its_own_threads_give_one_threads_bits_and_survive_a_fork():
    import os
    import signal

    x, w = operands(100, 77, 300, seed=6)
    alone = np.empty((100, 77), np.float32)
    gemm.compiled.weights_times(w, x, alone, True, True, 1)
    for threads in (2, 3, 8, 2):  # more threads than rows' blocks of 12 or than cores
        shared = np.full_like(alone, np.nan)
        gemm.compiled.weights_times(w, x, shared, True, True, threads)
        np.testing.assert_array_equal(shared, alone)
    child = os.fork()
    if child == 0:  # the pool's threads stayed in the parent: the child starts its own
        signal.alarm(20)  # a child that waits for them forever is killed, and fails
        shared = np.empty_like(alone)
        gemm.compiled.weights_times(w, x, shared, True, True, 2)
        os._exit(0 if np.array_equal(shared, alone) else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
