"""Ablation and patching, proved equal to transformers with the same intervention done its own
way: a forward pre-hook on each layer's output projection (o_proj, attention.output.dense,
c_proj) that zeroes, averages or replaces the head's slice of its input
(tests/interventions_reference.py). Ours runs through the forward's hook_z.

float32: logits within 1e-3 and attentions within 1e-5 (every layer: those after the first
switched-off head are the ones that move), hidden states within 1e-4 for MiniLM (an encoder:
no logits); SmolLM2, MiniLM, a tiny GPT-2 and a tiny Qwen2 (its logits relative to their
size: its weights are scaled up); zero, mean, patch; greedy decoding with heads off
writes transformers' ids under the same hook for 32 tokens; an empty ablation is a plain run
bit for bit. Each case also checks that the intervention changed the reference, so it
cannot pass by doing nothing.
"""

import numpy as np
import pytest
from head_reference import build_causal_gpt2, minilm_bert
from interventions_reference import (
    greedy,
    intervened,
    max_scaled_error,
    projection_inputs,
    reference,
)
from smollm2_reference import smollm2_path
from test_real_qwen2 import SHAPES, build_qwen2

from attention_workshop.real import load_model
from attention_workshop.real.analysis.head_patterns import repeated_ids, sequence_for
from attention_workshop.real.model import special_ids

torch = pytest.importorskip("torch")

SMOL_HEADS = [(18, 6), (17, 4), (3, 1)]  # two induction heads, a sink head
HOWS = ["zero", "mean", "patch"]


@pytest.fixture(scope="module")
def smol():
    smollm2_path()  # skips (fails under CI) without the wheel
    return load_model("smollm2")


def run_both(ours, theirs, ids, other, heads, how, d_head):
    # -> (our RunResult, their (attentions, hidden, logits), their plain run)
    plain = reference(theirs, ids)
    if how == "patch":
        source = projection_inputs(theirs, other)
        result = ours.run(ids, patch=dict.fromkeys(heads, ours.run(other)))
        hooks = intervened(theirs, d_head, patch=dict.fromkeys(heads, source))
    else:
        result = ours.run(ids, ablate=heads, how=how)
        hooks = intervened(theirs, d_head, heads, how)
    with hooks:
        return result, reference(theirs, ids), plain


@pytest.mark.parametrize("how", HOWS)
def test_smollm2_equals_transformers(smol, smollm2_model, how):
    ids, _ = sequence_for(smol)  # Module 4's repeated sequence, 100 ids
    other = repeated_ids(smol.config.n_vocab, special_ids(smol.tokenizer), seed=1)
    result, (attentions, _, logits), plain = run_both(smol, smollm2_model, ids, other,
                                                      SMOL_HEADS, how, smol.config.d_head)
    assert np.abs(logits - plain[2]).max() > 0.5  # the intervention moved their logits
    np.testing.assert_allclose(result.attentions, attentions, rtol=0, atol=1e-5)
    np.testing.assert_allclose(result.logits, logits, rtol=0, atol=1e-3)


MINILM_HEADS = [(0, 2), (0, 4), (1, 9), (4, 7)]


@pytest.mark.parametrize("how", HOWS)
def test_minilm_equals_transformers(minilm_reference, how):
    ours, theirs = load_model("minilm"), minilm_bert()
    ids = ours.encode("the river bank")
    other = ours.encode("the money bank")  # the same length: 5 tokens
    result, (attentions, hidden, _), plain = run_both(ours, theirs, ids, other, MINILM_HEADS,
                                                      how, ours.config.d_head)
    assert np.abs(hidden - plain[1]).max() > 0.1
    np.testing.assert_allclose(result.attentions, attentions, rtol=0, atol=1e-5)
    np.testing.assert_allclose(result.hidden_states, hidden, rtol=0, atol=1e-4)


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):  # -> (ours, transformers'), 2 layers x 4 heads, random
    folder = tmp_path_factory.mktemp("gpt2")
    theirs = build_causal_gpt2(folder)
    return load_model(folder), theirs


@pytest.mark.parametrize("how", HOWS)
def test_tiny_gpt2_equals_transformers(tiny_gpt2, how):
    ours, theirs = tiny_gpt2
    ids = [5, 17, 40, 3, 99, 5, 17, 40, 3, 99, 7]
    other = [8, 1, 2, 60, 61, 62, 8, 1, 2, 60, 11]
    result, (attentions, hidden, logits), plain = run_both(
        ours, theirs, ids, other, [(0, 1), (1, 2), (1, 3)], how, ours.config.d_head)
    assert np.abs(logits - plain[2]).max() > 1e-3
    np.testing.assert_allclose(result.attentions, attentions, rtol=0, atol=1e-5)
    np.testing.assert_allclose(result.logits, logits, rtol=0, atol=1e-3)
    assert max_scaled_error(result.hidden_states, hidden) < 1e-5


@pytest.mark.parametrize("how", HOWS)
def test_tiny_qwen2_equals_transformers(tmp_path, how):
    theirs = build_qwen2(tmp_path, *SHAPES["grouped_untied"], seed=5)  # 2 layers, 4 over 2
    ours = load_model(tmp_path)
    ids = [5, 17, 40, 3, 99, 5, 17, 40, 3, 99, 7]
    other = [8, 1, 2, 60, 61, 62, 8, 1, 2, 60, 11]
    result, (attentions, hidden, logits), plain = run_both(
        ours, theirs, ids, other, [(0, 1), (1, 2), (1, 3)], how, ours.config.d_head)
    scale = np.abs(logits).max()  # weights x 4 make large logits: compare relative to them
    assert np.abs(logits - plain[2]).max() > 1e-2 * scale
    np.testing.assert_allclose(result.attentions, attentions, rtol=0, atol=1e-5)
    assert np.abs(result.logits - logits).max() < 1e-5 * scale
    assert max_scaled_error(result.hidden_states, hidden) < 1e-5


def test_smollm2_greedy_with_heads_off_writes_transformers_ids(smol, smollm2_model):
    prompt = "apple river seven blue chair lamp apple river seven blue"
    heads = [(18, 6), (17, 4), (17, 3), (18, 7), (17, 5)]  # [S14]'s top 5 induction heads
    plain = smol.generate(prompt, tokens=32)
    generation = smol.generate(prompt, tokens=32, ablate=heads)
    ids = generation.prompt_ids
    with intervened(smollm2_model, smol.config.d_head, heads, "zero"):
        theirs = greedy(smollm2_model, ids, 32, smol.eos_id)
    assert generation.new_ids == theirs
    assert generation.new_ids != plain.new_ids  # the heads' absence shows in the text


@pytest.mark.parametrize("family", ["smollm2", "minilm", "gpt2"])
def test_an_empty_ablation_is_a_plain_run_bit_for_bit(family, smol, tiny_gpt2):
    model = {"smollm2": smol, "gpt2": tiny_gpt2[0]}.get(family) or load_model("minilm")
    ids = model.encode("the river bank was wet")
    plain, empty = model.run(ids), model.run(ids, ablate=[], patch={})
    for name in ("attentions", "hidden_states", "queries", "keys", "values", "head_outputs"):
        np.testing.assert_array_equal(getattr(empty, name), getattr(plain, name), err_msg=name)
    if plain.logits is not None:
        np.testing.assert_array_equal(empty.logits, plain.logits)
