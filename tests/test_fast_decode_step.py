"""real/fast/decode_step.py: a generated token's step equals llama.py's readable forward, its
cache grows in place without changing an earlier step's, and its three compiled loops give
layers.py's and the core's numbers."""

import dataclasses

import numpy as np
import pytest

from attention_workshop.attention import scaled_dot_product_attention
from attention_workshop.real.fast import kernels
from attention_workshop.real.fast.buffers import extended
from attention_workshop.real.fast.decode_step import frequencies, turn_at
from attention_workshop.real.layers import rms_norm, rotary_angles, rotate, share_heads

OUTPUTS = ("attentions", "hidden_states", "queries", "keys", "values", "head_outputs")


@pytest.fixture(scope="module")
def smollm2():
    from smollm2_reference import smollm2_path

    from attention_workshop.real import load_model

    smollm2_path()
    return load_model("smollm2")


@pytest.fixture
def k():
    if kernels.compiled is None:
        pytest.skip("_kernels.c is not built")
    return kernels.compiled


def address(array):
    return array.__array_interface__["data"][0]


def test_steps_equal_the_readable_forward(smollm2, k):
    readable = dataclasses.replace(smollm2, fast=False)
    fast, plain = smollm2.run("The river bank was"), readable.run("The river bank was")
    for token in (1217, 260, 3174):  # three steps, each on the one before's cache
        fast, plain = smollm2.run([token], past=fast), readable.run([token], past=plain)
        for name in OUTPUTS:
            ours, theirs = getattr(fast, name), getattr(plain, name)
            assert ours.shape == theirs.shape, name
            if name == "attentions":  # the weights within 1e-5, as every equality test
                np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-5, err_msg=name)
            else:  # float32's rounding of sums in another order (hidden states reach ~600)
                np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-4, err_msg=name)
        assert int(fast.logits.argmax()) == int(plain.logits.argmax())


def test_a_step_keeps_the_earlier_caches_and_a_second_branch_gets_its_own(smollm2, k):
    prompt = smollm2.run("The river bank was")
    first = smollm2.run([1217], past=prompt)
    kept = first.keys.copy()
    second = smollm2.run([260], past=first)  # written after first's rows, in its memory
    assert address(second.keys) == address(first.keys)
    other = smollm2.run([3174], past=first)  # first's memory already goes on: a copy
    assert address(other.keys) != address(first.keys)
    np.testing.assert_array_equal(first.keys, kept)
    np.testing.assert_array_equal(second.keys[:, :, :-1], kept)
    np.testing.assert_array_equal(other.keys[:, :, :-1], kept)
    assert not np.array_equal(second.keys[:, :, -1], other.keys[:, :, -1])
    again = smollm2.run([260], past=first)  # the same token again: the same numbers
    np.testing.assert_array_equal(again.keys, second.keys)
    np.testing.assert_array_equal(again.attentions, second.attentions)


def test_extended_grows_in_place_only_at_its_end():
    cache = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    a = extended(cache, room=8)  # a prompt's cache: copied, one row more
    assert a.shape == (2, 3, 5, 5) and a.base.shape == (2, 3, 8, 5)
    np.testing.assert_array_equal(a[:, :, :4], cache)
    a[:, :, 4] = -1.0
    b = extended(a, room=8)
    assert b.base is a.base and b.shape == (2, 3, 6, 5)
    np.testing.assert_array_equal(b[:, :, :5], a)
    assert extended(a, room=8).base is not a.base  # a second step from a: its own memory
    assert extended(a[:, :, :3], room=8).base is not a.base  # not at the end: a copy
    full = extended(extended(cache, room=5), room=5)  # no room left: new memory, grown
    assert full.shape == (2, 3, 6, 5)


def test_extended_reuses_a_gone_caches_memory_and_never_a_held_ones():
    cache = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    a = extended(cache, room=8, slot="test cache")
    first = address(a)
    a[:, :, 4] = -1.0
    del a  # the generation is over: its memory may take the next one's cache
    b = extended(cache + 1, room=8, slot="test cache")
    assert address(b) == first
    np.testing.assert_array_equal(b[:, :, :4], cache + 1)
    c = extended(cache + 2, room=8, slot="test cache")  # b still held: new memory
    assert address(c) != first
    np.testing.assert_array_equal(b[:, :, :4], cache + 1)  # b's numbers untouched
    np.testing.assert_array_equal(c[:, :, :4], cache + 2)
    d = extended(cache + 3, room=8, slot="test values")  # another kind: its own slot
    assert address(d) not in (first, address(c))


@pytest.mark.parametrize(("d", "theta"), [(64, 100000.0), (128, 10000.0), (16, 500000.0)])
def test_a_steps_turn_is_rotary_angles_bit_for_bit(d, theta):
    for position in [0, 1, 2, 17, 511, 4095, 8191]:
        cos, sin = rotary_angles([position], d, theta)
        mine = turn_at(position, d, theta)
        assert mine[0].dtype == mine[1].dtype == np.float64 and mine[0].shape == (d,)
        np.testing.assert_array_equal(mine[0].view(np.uint64), cos[0].view(np.uint64))
        np.testing.assert_array_equal(mine[1].view(np.uint64), sin[0].view(np.uint64))
    assert not frequencies(d, theta).flags.writeable  # shared between steps: never written


@pytest.mark.parametrize("n", [1, 7, 16, 576])
def test_rms_norm_row_is_layers_rms_norm(k, n):
    rng = np.random.default_rng(n)
    x, w = rng.normal(size=(1, n)).astype(np.float32), rng.normal(size=n).astype(np.float32)
    out = np.empty_like(x)
    k.rms_norm_row(x, w, 1e-5, out)
    np.testing.assert_allclose(out, rms_norm(x, w, 1e-5), rtol=1e-6, atol=1e-7)
    by_hand = np.empty(2, np.float32)  # [3, 4]: mean square 12.5
    k.rms_norm_row(np.array([3.0, 4.0], np.float32), np.ones(2, np.float32), 0.0, by_hand)
    np.testing.assert_allclose(by_hand, [3 / 12.5 ** 0.5, 4 / 12.5 ** 0.5], rtol=1e-6)


@pytest.mark.parametrize("position", [0, 1, 37, 511])
def test_rotary_gives_layers_rotate_bits(k, position):
    x = np.random.default_rng(position).normal(size=(9, 1, 64)).astype(np.float32)
    cos, sin = rotary_angles([position], 64, 100000.0)
    turned = x.copy()
    k.rotary(turned, cos[0], sin[0])
    np.testing.assert_array_equal(turned, rotate(x, cos, sin))


@pytest.mark.parametrize(("H", "K", "S"), [(9, 3, 1), (9, 3, 40), (4, 4, 17), (8, 1, 300)])
@pytest.mark.parametrize("d", [64, 24])  # 64: AVX-512's loop where the CPU has it; 24: the plain
def test_attend_cached_is_the_formula_with_shared_heads(k, H, K, S, d):
    rng = np.random.default_rng(S)
    room = 320
    q = rng.normal(size=(H, 1, d)).astype(np.float32)
    keys, values = (rng.normal(size=(K, room, d)).astype(np.float32) for _ in range(2))
    weights, z = np.empty((H, 1, S), np.float32), np.empty((H, 1, d), np.float32)
    k.attend_cached(q, keys, values, K, S, 1 / d ** 0.5, weights, z)
    out, pattern = scaled_dot_product_attention(q.astype(np.float64),
                                                share_heads(keys[:, :S], H).astype(np.float64),
                                                share_heads(values[:, :S], H).astype(np.float64))
    np.testing.assert_allclose(weights, pattern, rtol=0, atol=1e-6)
    np.testing.assert_allclose(z, out, rtol=0, atol=1e-5)


def test_the_loops_refuse_wrong_sizes(k):
    q, w, z = np.zeros((9, 64), np.float32), np.zeros((9, 5), np.float32), np.zeros((9, 64),
                                                                                    np.float32)
    cache = np.zeros((3, 4, 64), np.float32)
    with pytest.raises(ValueError, match="attend_cached"):
        k.attend_cached(q, cache, cache, 3, 5, 0.125, w, z)  # 5 keys, room for 4
    with pytest.raises(ValueError, match="attend_cached"):
        k.attend_cached(q, cache, cache, 2, 4, 0.125, w[:, :4].copy(), z)  # 9 heads over 2
    with pytest.raises(ValueError, match="rows of the weight's size"):
        k.rms_norm_row(q[0], q[0, :10], 1e-5, q[1])
    with pytest.raises(ValueError, match="P positions"):
        k.rotary(np.zeros((2, 5), np.float32), np.zeros(12), np.zeros(12), 4)  # 3 positions of 4
    with pytest.raises(ValueError, match="even size"):
        k.rotary(np.zeros((2, 5), np.float32), np.zeros(5), np.zeros(5))
    with pytest.raises(TypeError, match="float64"):
        k.rotary(q, np.zeros(64, np.float32), np.zeros(64, np.float32))


def test_a_prompts_rows_at_once_as_one_at_a_time_and_as_the_readable_formulas(k):
    # fast/llama.py's norm and turn: every row of a prompt in one call
    from attention_workshop.real.fast.llama import norm, turn
    from attention_workshop.real.layers import rms_norm, rotary_angles, rotate

    rng = np.random.default_rng(5)
    x, weight = rng.normal(size=(7, 64)).astype(np.float32), rng.normal(size=64).astype(np.float32)
    rows = np.empty_like(x)
    k.rms_norm_row(x, weight, 1e-5, rows)
    for r in range(7):
        one = np.empty(64, np.float32)
        k.rms_norm_row(x[r], weight, 1e-5, one)
        np.testing.assert_array_equal(rows[r], one)
    np.testing.assert_allclose(norm(x, weight, 1e-5), rms_norm(x, weight, 1e-5), rtol=2e-6,
                               atol=2e-6)
    q = rng.normal(size=(3, 7, 64)).astype(np.float32)  # 3 heads, 7 positions from 4
    cos, sin = rotary_angles(np.arange(4, 11), 64, 10000.0)
    np.testing.assert_array_equal(turn(q, cos, sin), rotate(q, cos, sin))  # the same bits
    kept = q.copy()
    turn(q[:, ::1], cos, sin)
    np.testing.assert_array_equal(q, kept)  # the caller's array is not turned
    huge = x * np.float32(1e30)  # squares past float32: numpy's formula, which raises
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        norm(huge, weight, 1e-5)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_compiled_layer_loop_gives_the_python_loop_bits(smollm2, k, threads, monkeypatch):
    """decode_layers runs decode_step.layers' calls in its order: every output the same bits
    (three steps, so the cache rows it wrote are read back by the next), on 1 and 2 threads."""
    from attention_workshop.real.fast import decode_step

    monkeypatch.setattr(decode_step, "threads_allowed", lambda: threads)
    w, cfg = smollm2.fast_weights, smollm2.config
    planned = decode_step.plan(w, cfg)
    assert planned is not None and planned.addresses.shape == (30, 14)
    prompt = smollm2.run("The river bank was")
    runs = {}
    for side in ("compiled", "python"):
        w.__dict__.pop("made", None)  # the plan, gathered again (or refused) on the next step
        if side == "python":
            monkeypatch.setattr(decode_step, "plan", lambda w, cfg: None)
        past, runs[side] = {"keys": prompt.keys, "values": prompt.values}, []
        for token in (1217, 260, 3174):
            out = decode_step.step(w, cfg, [token], past)
            runs[side].append(out)
            past = {"keys": out["keys"], "values": out["values"]}
    w.__dict__.pop("made", None)
    for compiled, python in zip(runs["compiled"], runs["python"], strict=True):
        for name in OUTPUTS:
            np.testing.assert_array_equal(compiled[name], python[name], err_msg=name)


def test_the_plan_turns_down_what_decode_layers_cannot_read(smollm2, k):
    from attention_workshop.real.families import Weights
    from attention_workshop.real.fast import decode_step

    w, cfg = smollm2.fast_weights, smollm2.config
    assert decode_step.plan(w, cfg) is not None
    assert decode_step.plan(w, dataclasses.replace(cfg, activation="gelu")) is None
    assert decode_step.plan(w, dataclasses.replace(cfg, bias=True)) is None
    plain = Weights({**w, "layers.4.mlp.up_proj.weight": w["layers.4.mlp.up_proj.weight"].array})
    assert decode_step.plan(plain, cfg) is None  # one matrix as float32 only: the Python loop
    blocks = w["layers.2.self_attn.k_proj.weight"]
    wrong = Weights({**w, "layers.2.self_attn.k_proj.weight": type(blocks)(
        blocks.array, blocks.quants[:, :-1].copy(), blocks.scales, blocks.offsets)})
    assert decode_step.plan(wrong, cfg) is None  # quants of another size: never read blind
    sizes = np.array([30, 576, 9, 3, 64, 1536, 8, 9], np.int64)  # S = 9 > room = 8
    with pytest.raises(ValueError, match="do not match"):
        k.decode_layers(decode_step.plan(w, cfg).addresses, sizes, np.zeros(576, np.float32),
                        np.zeros(64), np.zeros(64), *[np.zeros(1, np.float32)] * 6, 1e-5,
                        0.125, 1)
