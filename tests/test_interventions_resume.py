"""A run continued from layer l (real/resume.py) has the numbers of the whole run under the same
hooks, bit for bit in float64, in every family: the layers below are the plain run's, and the
layers from l on are the same weight arrays run again. And head_effects' losses equal torch's
cross entropy on transformers' logits under the same ablation (tests/interventions_reference.py).
"""

import numpy as np
import pytest
from head_reference import build_causal_gpt2
from interventions_reference import intervened, reference
from test_real_qwen2 import SHAPES, build_qwen2

from attention_workshop.real import load_model
from attention_workshop.real.analysis.head_effects import effect, loss_rows, switched_off
from attention_workshop.real.interventions import ablation, random_heads
from attention_workshop.real.resume import continued, first_layer, layers_of, lower

torch = pytest.importorskip("torch")

FIELDS = ("attentions", "hidden_states", "queries", "keys", "values", "head_outputs")
IDS = [5, 17, 40, 3, 99, 61, 5, 17, 40, 3, 99, 61]  # 6 ids repeated once


@pytest.fixture(scope="module")
def gpt2_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpt2")
    return folder, build_causal_gpt2(folder, n_layer=3)


@pytest.fixture(scope="module")
def qwen2_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("qwen2")
    layers, *rest = SHAPES["one_kv_tied"]
    return folder, build_qwen2(folder, layers, *rest, seed=3)


def models(gpt2_folder, qwen2_folder):  # -> [(name, float64 Model, heads)]
    return [("gpt2", load_model(gpt2_folder[0], dtype=np.float64), [(1, 2), (2, 0)]),
            ("qwen2", load_model(qwen2_folder[0], dtype=np.float64), [(1, 5), (2, 1)]),
            ("minilm", load_model("minilm", dtype=np.float64), [(3, 1), (4, 7), (5, 0)])]


def assert_same(a, b):
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    if a.logits is not None:
        np.testing.assert_array_equal(a.logits, b.logits)


def test_continued_equals_the_whole_run_bit_for_bit(gpt2_folder, qwen2_folder):
    for name, model, heads in models(gpt2_folder, qwen2_folder):
        ids = IDS if name != "minilm" else model.encode("the river bank by the money bank")
        hooks = ablation(model.config, heads)
        whole, plain = model.run(ids, hooks=hooks), model.run(ids)
        assert first_layer(hooks) == heads[0][0]
        assert_same(continued(model, plain, first_layer(hooks), hooks), whole)
        part = lower(model, ids, heads[0][0] + 1)  # layers 0 .. the first head's, only
        assert len(part.attentions) == heads[0][0] + 1
        np.testing.assert_array_equal(part.attentions, plain.attentions[:heads[0][0] + 1])
        assert_same(continued(model, part, heads[0][0], hooks), whole)
        assert not np.array_equal(whole.hidden, plain.hidden), name  # the heads did something


def test_layers_are_renumbered_and_others_kept():
    named = {"layers.3.mlp.up_proj.weight": 3, "layers.1.x": 1, "embed_tokens.weight": 0,
             "encoder.layer.2.attention.self.query.weight": 2}
    assert layers_of(named, 2, 4) == {"layers.1.mlp.up_proj.weight": 3, "embed_tokens.weight": 0,
                                      "encoder.layer.0.attention.self.query.weight": 2}
    assert layers_of(named, 0, 2) == {"layers.1.x": 1, "embed_tokens.weight": 0}


def test_a_hook_below_the_start_is_refused(gpt2_folder):
    model = load_model(gpt2_folder[0], dtype=np.float64)
    plain = model.run(IDS)
    with pytest.raises(ValueError, match="below layer 2"):
        continued(model, plain, 2, ablation(model.config, [(1, 0)]))


def test_losses_equal_torch_cross_entropy_under_the_same_ablation(gpt2_folder):
    folder, theirs = gpt2_folder
    ours = load_model(folder)  # float32, as transformers
    heads, lead = [(1, 2), (2, 0)], 0
    found = effect(ours, ours.run(IDS), heads, draws=2, lead=lead)
    rows = loss_rows(IDS, lead)
    assert rows["first"].tolist() == [0, 1, 2, 3, 4] and rows["repeat"].tolist() == [6, 7, 8, 9, 10]

    def torch_loss(logits, part):  # mean cross entropy of the next token at those rows
        r = rows[part]
        return float(torch.nn.functional.cross_entropy(torch.tensor(logits[r]),
                                                       torch.tensor(IDS)[r + 1]))

    d_head = ours.config.d_head
    for result_losses, hs in ((found.before, []), (found.after, heads),
                              *((lo, drawn) for drawn, lo in found.random)):
        with intervened(theirs, d_head, hs):
            logits = reference(theirs, IDS)[2]
        for part in ("first", "repeat"):
            assert result_losses[part] == pytest.approx(torch_loss(logits, part), abs=1e-5)
    assert found.after["repeat"] != pytest.approx(found.before["repeat"], abs=1e-3)


def test_random_heads_are_a_fair_control():
    from types import SimpleNamespace

    cfg = SimpleNamespace(n_layer=30, n_head=9)
    chosen = [(18, 6), (17, 4), (17, 3)]
    draws = random_heads(cfg, chosen, 4)
    assert draws == random_heads(cfg, chosen, 4)  # fixed seed: the same every call
    assert len(draws) == 4 and all(len(d) == 3 and len(set(d)) == 3 for d in draws)
    assert all(15 <= lay <= 20 and (lay, h) not in chosen for d in draws for lay, h in d)
    assert len({tuple(d) for d in draws}) > 1
    edge = random_heads(SimpleNamespace(n_layer=2, n_head=2), [(0, 0), (1, 1)], 1)[0]
    assert sorted(edge) == [(0, 1), (1, 0)]  # the pool: every head but the chosen


def test_switched_off_without_heads_is_the_plain_run(gpt2_folder):
    model = load_model(gpt2_folder[0], dtype=np.float64)
    plain = model.run(IDS)
    assert switched_off(model, plain, []) is plain
