"""fast/blocks.py and _kernels.c's blocks_times_vector against gguf's own dequantize.

The blocks are made by gguf.quants.quantize (llama.cpp's layout, written by gguf, not by
us); the reference numbers are gguf.quants.dequantize's float32. Each version of the kernel
this CPU runs (AVX-512, AVX2, plain C) is checked, on 1 and 2 threads: a unit vector e_j
must give column j of the dequantized matrix exactly (each weight made as gguf makes it,
times 1, plus zeros), and a random vector the float64 product within float32's rounding,
the same bits on any number of threads (each row summed by one loop in one order). Then
the real file: SmolLM2's blocks (W_Q's and W_K's rows reordered as transformers' are)
against its float32 weights, and a generated token's step (the kernel) against the readable
forward, on 1 and 2 threads.
"""

import dataclasses

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize, quantize

from attention_workshop.real.fast import gemm, kernels
from attention_workshop.real.fast.blocks import FileBlocks, from_gguf

TYPES = [Q.Q4_1, Q.Q8_0]


def compiled():
    if kernels.compiled is None:
        pytest.skip("_kernels.c was not built here (tests/test_fast_kernels.py says why)")
    return kernels.compiled


@pytest.fixture
def always_shared():  # every call of 32+ rows shared, whatever sharing measures here
    was = compiled().block_team_measured(False)
    before = compiled().block_team_size()[1]
    yield
    compiled().block_team_measured(was)
    assert compiled().block_team_size()[1] > before  # some rows really were shared


def made(qtype, rows, n, seed=0):  # -> (FileBlocks, its float32 numbers [rows, n] by gguf)
    x = np.random.default_rng(seed).normal(size=(rows, n)).astype(np.float32)
    x[0, :32] *= 1e3  # blocks of very different scales
    raw = quantize(x, qtype)
    numbers = dequantize(raw, qtype)
    blocks = from_gguf(raw, qtype, numbers)
    assert isinstance(blocks, FileBlocks)
    return blocks, numbers


def product(blocks, x, version, threads=1):  # blocks_times_vector, one version -> [rows]
    out = np.full(blocks.shape[0], np.nan, np.float32)
    compiled().blocks_times_vector(blocks.quants, blocks.scales, blocks.offsets, x, out,
                                   version, threads)
    return out


THREADS = [1, 2]
# the AVX-512 loop takes rows two at a time; the team shares from 32 rows on, in chunks of a
# quarter of the rows left (2 threads) rounded up to 16, at least 16: 1-5 rows run on the
# caller alone and 133 in chunks of 48, 32, 16, 16, 16 and 5 over the threads
ROWS = [1, 2, 5, 133]


@pytest.mark.parametrize("qtype", TYPES)
@pytest.mark.parametrize("rows", ROWS)
@pytest.mark.parametrize("threads", THREADS)
def test_each_version_makes_gguf_own_numbers(qtype, rows, threads, request):
    if threads > 1 and rows > 64:
        request.getfixturevalue("always_shared")
    blocks, numbers = made(qtype, rows, 96)
    versions = compiled().block_versions()
    assert versions[-1] == "c"
    for version in versions:
        for j in range(96):
            unit = np.zeros(96, np.float32)
            unit[j] = 1.0
            np.testing.assert_array_equal(product(blocks, unit, version, threads),
                                          numbers[:, j], err_msg=f"{version}, column {j}")
    if threads > 1 and rows > 64:
        assert compiled().block_team_size()[0] >= threads  # the rows were shared out


@pytest.mark.parametrize("qtype", TYPES)
@pytest.mark.parametrize("threads", THREADS)
def test_each_version_is_the_float32_product(qtype, threads, request):
    if threads > 1:
        request.getfixturevalue("always_shared")
    blocks, numbers = made(qtype, 237, 1536, seed=1)
    x = np.random.default_rng(2).normal(size=1536).astype(np.float32)
    exact = numbers.astype(np.float64) @ x.astype(np.float64)
    size = np.abs(numbers.astype(np.float64)) @ np.abs(x.astype(np.float64))  # |W| |x|
    for version in compiled().block_versions():
        got = product(blocks, x, version, threads)
        assert (np.abs(got - exact) / size).max() < 1e-6, version
        np.testing.assert_array_equal(got, product(blocks, x, version, 1), err_msg=version)


def test_threads_share_the_rows_of_many_products_at_once(always_shared):
    """Two Python threads each making products on 2 threads: one holds the team, the other
    computes alone; every product is the one-thread product's bits."""
    import threading

    blocks, _ = made(Q.Q4_1, 300, 128, seed=5)
    xs = np.random.default_rng(6).normal(size=(40, 128)).astype(np.float32)
    alone = [product(blocks, x, None) for x in xs]
    wrong = []

    def many():
        for _ in range(5):
            wrong.extend(i for i, x in enumerate(xs)
                         if not np.array_equal(product(blocks, x, None, 2), alone[i]))

    both = [threading.Thread(target=many) for _ in range(2)]
    for t in both:
        t.start()
    for t in both:
        t.join()
    assert wrong == []


def test_sharing_sets_the_threads_of_a_one_token_product(monkeypatch):
    from attention_workshop.real.fast import blocks as module

    seen = []
    monkeypatch.setattr(module, "threads_allowed", lambda: 3)  # the user's, when unset
    w, numbers = made(Q.Q8_0, 70, 64)
    real = compiled()

    class Spy:
        def blocks_times_vector(self, *args):
            seen.append(args[-1])
            return real.blocks_times_vector(*args)

    monkeypatch.setattr(kernels, "compiled", Spy())
    one = np.random.default_rng(7).normal(size=(1, 64)).astype(np.float32)
    with module.sharing(2):
        with module.sharing(1):
            inner = one @ w.T
        outer = one @ w.T
    unset = one @ w.T
    assert seen == [1, 2, 3]  # the innermost sharing, else threads_allowed()
    np.testing.assert_array_equal(inner, outer)
    np.testing.assert_array_equal(inner, unset)
    np.testing.assert_allclose(inner, one @ numbers.T, rtol=1e-5, atol=1e-5)


def tokens_product(blocks, x, version, threads=1):  # blocks_times_tokens -> [T, rows]
    out = np.full((len(x), blocks.shape[0]), np.nan, np.float32)
    compiled().blocks_times_tokens(blocks.quants, blocks.scales, blocks.offsets, x, out,
                                   version, threads)
    return out


@pytest.mark.parametrize("qtype", TYPES)
@pytest.mark.parametrize("T", [2, 7, 8, 9, 23])  # a group of 8 tokens, part of one, several
@pytest.mark.parametrize("threads", THREADS)
def test_a_few_tokens_at_once_make_gguf_own_numbers_and_the_float32_product(qtype, T, threads,
                                                                             request):
    if threads > 1:
        request.getfixturevalue("always_shared")
    blocks, numbers = made(qtype, 133, 96, seed=T)
    units = np.zeros((T, 96), np.float32)
    columns = np.random.default_rng(T).permutation(96)[:T]
    units[np.arange(T), columns] = 1.0  # token t picks column columns[t]
    x = np.random.default_rng(T + 1).normal(size=(T, 96)).astype(np.float32)
    exact = x.astype(np.float64) @ numbers.astype(np.float64).T  # [T, rows]
    size = np.abs(x.astype(np.float64)) @ np.abs(numbers.astype(np.float64)).T
    for version in compiled().block_versions():
        np.testing.assert_array_equal(tokens_product(blocks, units, version, threads),
                                      numbers[:, columns].T, err_msg=version)
        got = tokens_product(blocks, x, version, threads)
        assert (np.abs(got - exact) / size).max() < 1e-6, version
        np.testing.assert_array_equal(got, tokens_product(blocks, x, version, 1), err_msg=version)


@pytest.mark.parametrize("qtype", TYPES)
@pytest.mark.parametrize("T", [3, 8, 23])
def test_a_prompt_token_gets_the_bits_of_a_generated_one(qtype, T):
    """Each SIMD version's few-token loop sums a row in its one-token loop's order (AVX-512:
    two chains of 16 lanes; AVX2: a block's sum scaled into one chain of 8 lanes, the offsets
    after), so a prompt token's product is the one-token product's bits, not only close."""
    versions = [v for v in compiled().block_versions() if v != "c"]
    if not versions:
        pytest.skip("this CPU has neither AVX-512 nor AVX2 (the plain C loop runs token by token)")
    blocks, _ = made(qtype, 133, 576, seed=T)
    x = np.random.default_rng(T).normal(size=(T, 576)).astype(np.float32)
    x[:, :32] *= 1e3  # one block far louder than the rest: a different order would show
    for version in versions:
        each = np.stack([product(blocks, row, version) for row in x])
        np.testing.assert_array_equal(tokens_product(blocks, x, version), each, err_msg=version)


def test_a_row_too_long_for_the_stack_gets_the_same_bits():
    """AVX2 keeps x's 4-bit block sums on the stack for rows of up to 512 blocks; a longer
    row makes them as it goes (no memory asked for): the same bits as the few-token loop,
    which keeps them in memory, and the float64 product within float32's rounding."""
    if "avx2" not in compiled().block_versions():
        pytest.skip("this CPU has no AVX2")
    blocks, numbers = made(Q.Q4_1, 5, 32 * 513, seed=9)
    x = np.random.default_rng(10).normal(size=(3, 32 * 513)).astype(np.float32)
    each = np.stack([product(blocks, row, "avx2") for row in x])
    np.testing.assert_array_equal(tokens_product(blocks, x, "avx2"), each)
    exact = x.astype(np.float64) @ numbers.astype(np.float64).T
    size = np.abs(x.astype(np.float64)) @ np.abs(numbers.astype(np.float64)).T
    assert (np.abs(each - exact) / size).max() < 1e-6


@pytest.mark.parametrize("qtype", TYPES)
def test_x_at_w_t_runs_the_kernel_below_24_tokens_and_the_blas_from_there(qtype, monkeypatch):
    from attention_workshop.real.fast.blocks import TOKENS_FROM_BLAS

    blocks, numbers = made(qtype, 40, 64)
    rng = np.random.default_rng(3)
    one, few, many = (rng.normal(size=(t, 64)).astype(np.float32)
                      for t in (1, 6, TOKENS_FROM_BLAS))
    np.testing.assert_array_equal(one @ blocks.T, product(blocks, one[0], None)[None])
    np.testing.assert_array_equal(few @ blocks.T, tokens_product(blocks, few, None))
    # from 24 tokens: the float32 matrix's product (fast/gemm.py: _gemm.c's loop or numpy's)
    np.testing.assert_array_equal(many @ blocks.T, gemm.times_transposed(many, numbers))
    np.testing.assert_array_equal(blocks[[3, 0]], numbers[[3, 0]])  # an embedding's rows
    assert np.asarray(blocks).shape == (40, 64) and len(blocks) == 40
    monkeypatch.setattr(kernels, "compiled", None)  # built without a C compiler: numpy
    monkeypatch.setattr(gemm, "compiled", None)
    np.testing.assert_array_equal(one @ blocks.T, one @ numbers.T)


def test_other_types_keep_only_the_float32_matrix():
    x = np.ones((2, 64), np.float32)
    raw = quantize(x, Q.F16)
    assert from_gguf(raw, Q.F16, x) is x
    wide = x.astype(np.float64)  # Module 4's float64 weights: no blocks
    assert from_gguf(quantize(x, Q.Q8_0), Q.Q8_0, wide) is wide


def test_the_kernel_refuses_wrong_sizes_and_versions():
    k = compiled()
    blocks, _ = made(Q.Q4_1, 4, 64)
    x, out = np.ones(64, np.float32), np.empty(4, np.float32)
    with pytest.raises(ValueError, match="multiple of 32"):
        k.blocks_times_vector(blocks.quants, blocks.scales, blocks.offsets, x[:40], out)
    with pytest.raises(ValueError, match="multiple of 32"):
        k.blocks_times_vector(blocks.quants[:3], blocks.scales, blocks.offsets, x, out)
    with pytest.raises(TypeError, match="float32"):
        k.blocks_times_vector(blocks.quants, blocks.scales, blocks.offsets, x, out.astype(float))
    with pytest.raises(ValueError, match="no 'sse9' version"):
        k.blocks_times_vector(blocks.quants, blocks.scales, blocks.offsets, x, out, "sse9")
    xs = np.ones((3, 64), np.float32)
    with pytest.raises(ValueError, match=r"out \[T, rows\]"):  # 3 tokens in, 2 out
        k.blocks_times_tokens(blocks.quants, blocks.scales, blocks.offsets, xs,
                              np.empty((2, 4), np.float32))
    with pytest.raises(ValueError, match=r"x \[T, n\]"):  # a vector, not [T, n]
        k.blocks_times_tokens(blocks.quants, blocks.scales, blocks.offsets, x,
                              np.empty((1, 4), np.float32))


@pytest.fixture(scope="module")
def smollm2():
    from smollm2_reference import smollm2_path

    from attention_workshop.real import load_model

    smollm2_path()
    return load_model("smollm2")


def test_smollm2_keeps_the_file_blocks_of_every_matrix(smollm2):
    blocks = smollm2.blocks
    assert len(blocks) == 30 * 7 + 1  # seven matrices a layer and the tied embedding
    assert all(b.array is smollm2.weights[name] for name, b in blocks.items())
    assert sum(b.bytes_read for b in blocks.values()) < 0.21 * sum(
        b.array.nbytes for b in blocks.values())
    rng = np.random.default_rng(4)
    for name in ("layers.0.self_attn.q_proj.weight", "layers.29.self_attn.k_proj.weight",
                 "layers.7.mlp.down_proj.weight", "embed_tokens.weight"):
        w = blocks[name]
        for j in rng.choice(w.shape[1], 3, replace=False):  # W_Q, W_K: rows in transformers'
            unit = np.zeros(w.shape[1], np.float32)  # order, blocks moved with them
            unit[j] = 1.0
            np.testing.assert_array_equal((unit[None] @ w.T)[0], w.array[:, j], err_msg=name)


@pytest.mark.parametrize("threads", THREADS)
def test_a_generated_token_step_equals_the_readable_forward(smollm2, threads, request):
    if threads > 1:
        request.getfixturevalue("always_shared")
    from threadpoolctl import threadpool_limits

    readable = dataclasses.replace(smollm2, fast=False)
    with threadpool_limits(limits=threads, user_api="blas"):  # as OMP_NUM_THREADS would
        prompt = smollm2.run("The river bank was")
        step = smollm2.run([1217], past=prompt)  # one token: the kernel, on `threads`
    if threads > 1:
        assert kernels.compiled.block_team_size()[0] >= threads
    plain = readable.run([1217], past=readable.run("The river bank was"))
    np.testing.assert_allclose(step.attentions, plain.attentions, rtol=0, atol=1e-5)
    np.testing.assert_allclose(step.logits, plain.logits, rtol=0, atol=1e-3)
    assert int(step.logits.argmax()) == int(plain.logits.argmax())
