"""Every accelerator (real/fast/) against the readable family file it speeds up, and the
threads it uses against the ones the user allows.

Random models of each accelerated family with room for 300 tokens: the fast forward (one
thread, or each stage split over two) equals the family's readable forward (bert.py,
gpt2.py), run in float32 and in float64; the BLAS runs at one thread inside and gets its
count back after; one allowed thread means one; a stage's parts cover its work exactly once.
"""

import importlib
import threading

import numpy as np
import pytest

from attention_workshop.real.blas_threads import blas, threads_allowed
from attention_workshop.real.config import config_from_dict
from attention_workshop.real.families import bert, family
from attention_workshop.real.fast import ACCELERATORS, accelerated, team
from attention_workshop.real.fast import loop as fast_loop

threadpoolctl = pytest.importorskip("threadpoolctl")

CONFIGS = {  # 2 layers, 4 heads, d_model 32, 300 positions
    "gpt2": {"model_type": "gpt2", "n_layer": 2, "n_head": 4, "n_embd": 32, "n_positions": 300,
             "vocab_size": 50},
    "bert": {"model_type": "bert", "num_hidden_layers": 2, "num_attention_heads": 4,
             "hidden_size": 32, "intermediate_size": 64, "max_position_embeddings": 300,
             "vocab_size": 50, "type_vocab_size": 2, "hidden_act": "gelu"},
    "llama": {"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "hidden_size": 32, "intermediate_size": 48,
              "max_position_embeddings": 300, "vocab_size": 50, "rms_norm_eps": 1e-5},
    "qwen2": {"model_type": "qwen2", "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "hidden_size": 32, "intermediate_size": 48,
              "max_position_embeddings": 300, "vocab_size": 50},  # biases on q, k, v
}
PREFIX = {"bert": "encoder.layer.", "gpt2": "h.", "llama": "layers.", "qwen2": "layers."}


def accelerator(model_type):  # -> the module real/fast/ registers for the family
    return importlib.import_module(ACCELERATORS[model_type])


def random_model(model_type, seed=0):  # -> cfg, float64 weights: N(0, 0.3^2), norm scales ~1
    cfg = config_from_dict(CONFIGS[model_type])
    rng = np.random.default_rng(seed)
    weights = {}
    for name, shape in family(model_type).tensor_shapes(cfg).items():
        weights[name] = rng.normal(size=shape) * 0.3
        if name.endswith(("LayerNorm.weight", "ln_1.weight", "ln_2.weight", "ln_f.weight",
                          "layernorm.weight", "norm.weight")):
            weights[name] += 1.0
    return cfg, weights


def test_accelerated_runs_float32_of_registered_families_only():  # float64 stays readable
    assert set(ACCELERATORS) == set(CONFIGS)  # every accelerator is tested here
    for model_type in ACCELERATORS:
        cfg, _ = random_model(model_type)
        assert accelerated(cfg, "float32") is accelerator(model_type).forward
        assert accelerated(cfg, "float64") is None


@pytest.mark.parametrize("model_type", sorted(ACCELERATORS))
@pytest.mark.parametrize("T", [3, 130, 300])
@pytest.mark.parametrize("split_from", [2, 10**6])  # stages split over two threads, or not
def test_fast_forward_is_the_readable_layers(model_type, T, split_from, monkeypatch):
    monkeypatch.setattr(fast_loop, "SPLIT_FROM", split_from)
    monkeypatch.setattr(fast_loop, "threads_allowed", lambda: 2)
    cfg, w64 = random_model(model_type, seed=T)
    w32 = {name: a.astype(np.float32) for name, a in w64.items()}
    ids = np.random.default_rng(T).integers(0, cfg.n_vocab, size=T)
    fast = accelerator(model_type).forward(w32, cfg, ids)
    readable = family(model_type).forward
    for reference, atol in ((readable(w32, cfg, ids), 2e-5), (readable(w64, cfg, ids), 5e-5)):
        for key in ("attentions", "queries", "keys", "values"):
            np.testing.assert_allclose(fast[key], reference[key], rtol=0, atol=atol, err_msg=key)
        np.testing.assert_allclose(fast["head_outputs"], reference["head_outputs"], rtol=0,
                                   atol=10 * atol)
        np.testing.assert_allclose(fast["hidden_states"], reference["hidden_states"], rtol=0,
                                   atol=10 * atol)


def threads_seen(name, x):  # family, fn(cfg, weights) -> [T, d_model] -> list
    """Run the fast loop on a random `name` model from the inputs x; return, at each linear
    layer's call, (Python threads alive, the BLAS's thread count)."""
    cfg, w = random_model(name)
    fam, seen = accelerator(name), []
    original = fam.linear_rows

    def spy(*args, **kwargs):
        seen.append((threading.active_count(), blas().lib_controllers[0].num_threads))
        return original(*args, **kwargs)

    fam.linear_rows = spy
    try:
        fast_loop.run_layers_fast(fam.stages, {k: v.astype(np.float32) for k, v in w.items()},
                                  cfg, x(cfg, w).astype(np.float32), PREFIX[name])
    finally:
        fam.linear_rows = original
    return seen


def test_one_allowed_thread_means_one_block_and_one_thread():
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        assert threads_allowed() == 1
        assert fast_loop.threads_for(512) == 1
        before = threading.active_count()
        seen = threads_seen("bert", lambda cfg, w: np.ones((200, 32)))
        assert seen and all(s == (before, 1) for s in seen)


def test_the_blas_gets_its_threads_back():
    if not blas().lib_controllers:
        pytest.skip("numpy reports no BLAS library to threadpoolctl")
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        ids = np.arange(140)
        during = {threads for _, threads in threads_seen(
            "gpt2", lambda cfg, w: w["wte.weight"][ids % cfg.n_vocab])}
        assert during == {1}  # one BLAS thread per Python thread
        assert blas().lib_controllers[0].num_threads == 2  # the user's count restored


@pytest.mark.parametrize(("T", "expected"), [(5, 1), (fast_loop.ONE_BLAS_THREAD_BELOW, 2)])
def test_one_thread_keeps_the_users_blas_threads_but_for_tiny_inputs(T, expected):
    if not blas().lib_controllers:
        pytest.skip("numpy reports no BLAS library to threadpoolctl")
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        during = {threads for _, threads in threads_seen(
            "bert", lambda cfg, w: np.ones((T, 32)))}
        assert during == {expected}
        assert blas().lib_controllers[0].num_threads == 2


@pytest.mark.parametrize("with_gemm", [True, False])  # False: as on a CPU without AVX-512
def test_llamas_prompt_holds_the_blas_at_one_thread_in_its_two_threads(with_gemm, monkeypatch):
    # its attention's blocks run on the team's two threads: a BLAS of two threads inside each
    # would put four on two cores
    from attention_workshop.real.fast import gemm

    if not blas().lib_controllers:
        pytest.skip("numpy reports no BLAS library to threadpoolctl")
    if not with_gemm:
        monkeypatch.setattr(gemm, "compiled", None)
    fast_llama = accelerator("llama")
    seen, original = [], fast_llama.causal_softmax_in_place

    def spy(*args):  # called in each block of the attention, on the team's threads
        seen.append((threading.get_ident(), blas().lib_controllers[0].num_threads))
        return original(*args)

    monkeypatch.setattr(fast_llama, "causal_softmax_in_place", spy)
    cfg, w64 = random_model("llama")
    w32 = {name: a.astype(np.float32) for name, a in w64.items()}
    ids = np.arange(140) % cfg.n_vocab
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        fast = fast_llama.forward(w32, cfg, ids)
        assert blas().lib_controllers[0].num_threads == 2  # the user's count restored
    assert {threads for _, threads in seen} == {1}
    assert len({thread for thread, _ in seen}) == 2  # both threads took blocks
    readable = family("llama").forward(w32, cfg, ids)
    np.testing.assert_allclose(fast["attentions"], readable["attentions"], rtol=0, atol=2e-5)


def test_float64_is_the_same_bits_with_one_or_two_blas_threads():
    cfg, w = random_model("bert", seed=5)
    ids = np.arange(200) % cfg.n_vocab
    outs = []
    for n in (1, 2):
        with threadpoolctl.threadpool_limits(limits=n, user_api="blas"):
            outs.append(family("bert").forward(w, cfg, ids))
    for key in outs[0]:
        np.testing.assert_array_equal(outs[0][key], outs[1][key])


def test_parts_by_hand():
    assert team.parts(1152, 2) == [slice(0, 576), slice(576, 1152)]  # Q|K|V rows
    assert team.parts(130, 2) == [slice(0, 64), slice(64, 130)]  # tokens, cut at 16s
    assert team.parts(12, 2) == [slice(0, 6), slice(6, 12)]  # heads
    assert team.parts(1, 2) == [slice(0, 1)]  # one head: one part
    assert team.parts(200, 2, grain=128) == [slice(0, 200)]  # too little to hand over
    assert team.parts(256, 2, grain=128) == [slice(0, 128), slice(128, 256)]
    assert team.parts(512, 8, grain=fast_loop.WHOLE) == [slice(0, 512)]  # a layer norm


@pytest.mark.parametrize("k", [1, 2, 3, 8])
@pytest.mark.parametrize("grain", [1, 128])
def test_parts_cover_the_work_once(k, grain):
    for n in range(1, 700):
        pieces = team.parts(n, k, grain)
        covered = [i for p in pieces for i in range(n)[p]]
        assert covered == list(range(n)), (n, k)
        used = max(1, min(k, n // grain))  # threads worth using
        assert len(pieces) <= used
        sizes = [p.stop - p.start for p in pieces]
        assert min(sizes) >= min(n, grain) - team.ALIGN  # cuts land on ALIGN rows
        assert max(sizes) - min(sizes) <= (2 * team.ALIGN if n >= 64 * used else 1), (n, k)


def test_a_team_runs_each_part_once_on_its_own_thread():
    seen = []  # (part, thread)
    with team.Team(2, hold_blas=False) as crew:
        for _ in range(50):
            seen.clear()
            crew.run(team.Stage(12, lambda part: seen.append((part, threading.get_ident()))))
            assert sorted((p.start, p.stop) for p, _ in seen) == [(0, 6), (6, 12)]
            assert len({thread for _, thread in seen}) == 2
    assert not any(t.name == "attention-workshop worker" for t in threading.enumerate())


def test_a_part_that_fails_fails_the_stage_after_every_part_ended():
    ended = []

    def part(p):
        if p.start:  # the worker's part
            raise ValueError("the worker's part failed")
        ended.append(p)

    with team.Team(2, hold_blas=False) as crew:
        with pytest.raises(ValueError, match="worker's part"):
            crew.run(team.Stage(2, part))
        assert ended == [slice(0, 1)]
        crew.run(team.Stage(2, lambda p: ended.append(p)))  # the team still works
        assert sorted(p.start for p in ended[1:]) == [0, 1]


def test_shares_of_a_split_product_add_up_once_gathered():
    io = fast_loop.LayerIO(config_from_dict(CONFIGS["bert"]), 2, np.float32, None)
    out = np.ones((32, 2), np.float32)
    assert io.share(slice(0, 6), out) is out  # the first part writes into out itself
    scratch = io.share(slice(6, 12), out)  # another part: into a scratch of its own
    assert scratch is not out and scratch.shape == out.shape
    scratch[:] = 2
    assert io.gather(out) is out
    np.testing.assert_array_equal(out, 3)  # 1 + 2
    np.testing.assert_array_equal(io.gather(out), 3)  # a share is added once
    io.share(slice(6, 12), out)
    with pytest.raises(RuntimeError, match="twice"):  # overwritten before it was added
        io.share(slice(6, 12), out)


def test_a_share_never_gathered_stops_the_forward(monkeypatch):
    monkeypatch.setattr(fast_loop, "SPLIT_FROM", 2)
    monkeypatch.setattr(fast_loop, "threads_allowed", lambda: 2)
    cfg, w = random_model("bert")
    w32 = {k: v.astype(np.float32) for k, v in w.items()}
    fam = accelerator("bert")

    def forgetful(layer, cfg, io):  # the last layer norm, which gathers y's shares, left out
        return fam.stages(layer, cfg, io)[:-1]

    x = bert.embed(w32, cfg, np.arange(8))
    with pytest.raises(RuntimeError, match="never gathered"):
        fast_loop.run_layers_fast(forgetful, w32, cfg, x, "encoder.layer.")


@pytest.mark.parametrize("way", ["compiled", "numpy"])
def test_the_fast_llama_with_a_kv_cache_equals_the_readable_one(way, monkeypatch):
    """The accelerated attention on a cache: each new token's weights as the readable
    forward's, with the compiled softmax and with numpy's passes."""
    from attention_workshop.real.fast import kernels

    if way == "numpy":
        monkeypatch.setattr(kernels, "compiled", None)
    cfg, w64 = random_model("llama", seed=4)
    w32 = {name: a.astype(np.float32) for name, a in w64.items()}
    ids = np.random.default_rng(4).integers(0, cfg.n_vocab, size=40)
    fast, readable = accelerator("llama").forward, family("llama").forward
    past_fast, past_readable = fast(w32, cfg, ids[:30]), readable(w32, cfg, ids[:30])
    a = fast(w32, cfg, ids[30:], past=past_fast)
    b = readable(w64, cfg, ids[30:], past={k: past_readable[k].astype(np.float64)
                                           for k in ("keys", "values")})
    assert a["attentions"].shape == (2, 4, 10, 40)
    np.testing.assert_allclose(a["attentions"], b["attentions"], rtol=0, atol=2e-5)
    np.testing.assert_allclose(a["hidden_states"], b["hidden_states"], rtol=0, atol=2e-4)
