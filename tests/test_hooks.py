"""The named hook points (real/hooks.py) on every family: each point is called, once a layer,
in the forward's order, with the documented shape; a hook that only reads changes no bit; a
replaced value is what the rest of the pass computes from; and each head's output
(hook_z, RunResult.head_outputs) is its pattern times its values, computed here by hand.

The families' equality with transformers is in test_real_{bert,gpt2,llama}.py; interventions
checked against transformers' own hooks are test_interventions*.py's.
"""

import numpy as np
import pytest
from test_real_gpt2 import build_gpt2
from test_real_llama import SHAPES, build_llama

from attention_workshop.real import load_model
from attention_workshop.real.hooks import NAMES, Hooks, point_names

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def models(tmp_path_factory):  # {family: Model} in float64, tiny, random
    llama, gpt2 = tmp_path_factory.mktemp("llama"), tmp_path_factory.mktemp("gpt2")
    build_llama(llama, *SHAPES["grouped"], seed=3)
    build_gpt2(gpt2, 2, 4)
    return {"llama": load_model(llama, dtype="float64"), "gpt2": load_model(gpt2, dtype="float64"),
            "bert": load_model("minilm", dtype="float64")}


def recorder(names, seen):  # -> Hooks that note (name, shape) at every point, reading only
    return Hooks({name: (lambda value, name=name: seen.append((name, value.shape)))
                  for name in names})


@pytest.mark.parametrize("name", ["llama", "gpt2", "bert"])
def test_every_point_is_called_in_order_with_its_shape(models, name):
    model = models[name]
    cfg, seen = model.config, []
    result = model.run("the river bank", hooks=recorder(point_names(cfg.n_layer), seen))
    T, H, K, d, D = len(result.ids), cfg.n_head, cfg.n_kv_head, cfg.d_head, cfg.d_model
    shapes = {"attn.hook_q": (H, T, d), "attn.hook_k": (K, T, d), "attn.hook_v": (K, T, d),
              "attn.hook_scores": (H, T, T), "attn.hook_pattern": (H, T, T),
              "attn.hook_z": (H, T, d), "hook_attn_out": (T, D), "hook_mlp_out": (T, D),
              "hook_resid_post": (T, D)}
    expected = [("hook_embed", (T, D))]
    for i in range(cfg.n_layer):
        expected += [(f"blocks.{i}.{n}", shapes[n]) for n in NAMES]
    if cfg.causal:  # a decoder's final norm; BERT's last layer ends in its own layer norm
        expected.append(("ln_final.hook_normalized", (T, D)))
    assert seen == expected


@pytest.mark.parametrize("name", ["llama", "gpt2", "bert"])
def test_reading_hooks_change_no_bit(models, name):
    model = models[name]
    plain = model.run("the money bank")
    read = model.run("the money bank", hooks=recorder(point_names(model.config.n_layer), []))
    for field in ("attentions", "hidden_states", "queries", "keys", "values", "head_outputs"):
        assert np.array_equal(getattr(plain, field), getattr(read, field)), field
    if model.config.causal:
        assert np.array_equal(plain.logits, read.logits)


@pytest.mark.parametrize("name", ["llama", "gpt2", "bert"])
def test_head_outputs_are_pattern_times_values(models, name):
    """By hand: head h's output is attentions[h] @ values[h // group] (grouped-query)."""
    r = models[name].run("the river bank by the river")
    group = r.attentions.shape[1] // r.values.shape[1]
    for layer in range(r.attentions.shape[0]):
        for h in range(r.attentions.shape[1]):
            by_hand = r.attentions[layer, h] @ r.values[layer, h // group]
            np.testing.assert_allclose(r.head_outputs[layer, h], by_hand, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["llama", "gpt2", "bert"])
def test_a_replaced_pattern_is_what_the_layer_blends(models, name):
    """Layer 0's pattern replaced by uniform weights over the keys each token may see: the
    head outputs become the plain average of the visible values, and later layers move."""
    model = models[name]
    causal = model.config.causal

    def uniform(pattern):  # [H, T, S] -> each row spread evenly over its visible keys
        T = pattern.shape[-1]
        allowed = np.tril(np.ones((T, T))) if causal else np.ones((T, T))
        return np.broadcast_to(allowed / allowed.sum(-1, keepdims=True), pattern.shape).copy()

    plain = model.run("the river bank")
    r = model.run("the river bank", hooks=Hooks({"blocks.0.attn.hook_pattern": uniform}))
    T = len(r.ids)
    group = r.attentions.shape[1] // r.values.shape[1]
    for h in range(r.attentions.shape[1]):
        v = r.values[0, h // group]  # [T, d]
        means = np.cumsum(v, axis=0) / np.arange(1, T + 1)[:, None] if causal else (
            np.broadcast_to(v.mean(axis=0), v.shape))
        np.testing.assert_allclose(r.head_outputs[0, h], means, rtol=0, atol=1e-12)
    assert not np.allclose(r.hidden_states[-1], plain.hidden_states[-1])


@pytest.mark.parametrize("name", ["llama", "gpt2", "bert"])
def test_scores_hook_gives_the_same_pass(models, name):
    """Asking for the scores runs the formula in its steps: the same numbers to 1e-12, and the
    scores are q k^T / sqrt(d_head) by hand, -inf where a decoder's token may not look."""
    model = models[name]
    kept = []
    r = model.run("the river bank", hooks=Hooks({"blocks.1.attn.hook_scores": kept.append}))
    plain = model.run("the river bank")
    np.testing.assert_allclose(r.hidden_states, plain.hidden_states, rtol=0, atol=1e-10)
    group = r.queries.shape[1] // r.keys.shape[1]
    k = np.repeat(r.keys[1], group, axis=0)  # [H, T, d]
    by_hand = r.queries[1] @ np.swapaxes(k, -1, -2) / np.sqrt(r.queries.shape[-1])
    if model.config.causal:
        by_hand = np.where(np.tri(len(r.ids), dtype=bool), by_hand, -np.inf)
    np.testing.assert_allclose(kept[0], by_hand, rtol=0, atol=1e-12)


def test_hooks_chain_and_bind_to_a_layer():
    calls = []
    first = Hooks({"blocks.2.attn.hook_z": lambda z: z + 1})
    second = Hooks({"blocks.2.attn.hook_z": lambda z: calls.append(z.copy())})
    chained = first.then(second)
    out = chained.layer(2)("attn.hook_z", np.zeros(2))
    assert out.tolist() == [1.0, 1.0] and calls[0].tolist() == [1.0, 1.0]
    assert chained.layer(2).wants("attn.hook_z") and not chained.layer(1).wants("attn.hook_z")
    assert not Hooks() and Hooks()("hook_embed", "x") == "x"


def test_the_llama_accelerator_honours_hooks(tmp_path):
    """float32: the accelerator (llama.forward with its in-place attention) and the readable
    forward, both with layer 0's head 1 zeroed, agree; and the zeroed head is zero."""
    build_llama(tmp_path, *SHAPES["grouped"], seed=5)
    fast, readable = load_model(tmp_path), load_model(tmp_path, fast=False)
    assert fast.accelerator(hooks=True) is not None and readable.accelerator() is None

    def zero_head_1(z):  # [H, T, d]
        z = z.copy()
        z[1] = 0
        return z

    hooks = Hooks({"blocks.0.attn.hook_z": zero_head_1})
    a, b = fast.run("the river bank", hooks=hooks), readable.run("the river bank", hooks=hooks)
    assert not a.head_outputs[0, 1].any()
    np.testing.assert_allclose(a.logits, b.logits, rtol=0, atol=1e-4)
    np.testing.assert_allclose(a.attentions, b.attentions, rtol=0, atol=1e-6)
