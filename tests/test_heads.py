"""Head patterns (real/analysis/head_patterns.py): the test sequence, the scores, the ranking
and the copy loss, against plain-Python loops, attention arrays whose answer is known by
construction, torch, and transformers' own attentions and logits on the same ids."""

import math
from pathlib import Path

import numpy as np
import pytest
from head_reference import reference_scores, target_cells

from attention_workshop.errors import WorkshopError
from attention_workshop.real.analysis import head_patterns as hp

torch = pytest.importorskip("torch")


def causal_rows(rng, L, H, T):  # random attention rows, each a causal softmax-like row
    weights = rng.random((L, H, T, T)) * np.tril(np.ones((T, T)))
    return weights / weights.sum(axis=-1, keepdims=True)


def test_ids_are_reproducible_free_of_special_tokens_and_repeated():
    special = {0, 1, 2, 50256}
    ids = hp.repeated_ids(50257, special)
    assert ids == hp.repeated_ids(50257, special)  # same seed, same ids
    assert ids != hp.repeated_ids(50257, special, seed=1)
    assert len(ids) == 2 * hp.HALF == 100
    assert ids[:50] == ids[50:] and len(set(ids[:50])) == 50  # each token once per half
    assert not special & set(ids) and all(0 <= i < 50257 for i in ids)
    led = hp.repeated_ids(50257, special, lead=50256)
    assert led == [50256, *ids]  # the lead goes first; the rest is the same draw


def test_a_vocabulary_too_small_is_refused():
    with pytest.raises(WorkshopError, match="has 8 ordinary tokens, but the head patterns need 50"):
        hp.repeated_ids(9, special={0})


@pytest.mark.parametrize("lead", [0, 1])
@pytest.mark.parametrize("kind", list(hp.KINDS))
def test_scores_equal_loops_over_the_cells_found_from_the_ids(kind, lead):
    ids = hp.repeated_ids(1000, lead=999 if lead else None, half=7)
    attentions = causal_rows(np.random.default_rng(3), 2, 3, len(ids))
    expected = reference_scores(attentions, ids, kind, lead)
    np.testing.assert_allclose(hp.pattern_scores(attentions, kind, lead), expected,
                               rtol=0, atol=1e-12)


def test_scores_of_heads_built_to_match_each_pattern():
    """Head 0 puts all of each row on its induction target, head 1 on the previous token,
    head 2 on position 0, head 3 spreads evenly (causal): the answers are known by hand."""
    half, lead = 5, 1
    T = lead + 2 * half
    A = np.zeros((1, 4, T, T))
    for i in range(1, T):
        r = i - lead
        A[0, 0, i, i - half + 1 if r >= half else i] = 1.0  # first half: itself
        A[0, 1, i, i - 1] = 1.0
        A[0, 2, i, 0] = 1.0
    A[0, 0, 0, 0] = A[0, 1, 0, 0] = A[0, 2, 0, 0] = 1.0
    A[0, 3] = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    even = {"induction": sum(1 / (i + 1) for i in range(lead + half, T)) / half,
            "previous": sum(1 / (i + 1) for i in range(lead + 1, T)) / (2 * half - 1),
            "sink": sum(1 / (i + 1) for i in range(1, T)) / (T - 1)}
    # head 1's first repeated token looks at the lead, one back: inside 'previous' only
    # from r = 1 on, so previous scores exactly 1; the lead is position 0, so sink 1 too
    expected = {"induction": [1.0, 0.0, 0.0, even["induction"]],
                "previous": [0.0, 1.0, 0.0, even["previous"]],
                "sink": [0.0, 1 / (T - 1), 1.0, even["sink"]]}
    for kind, row in expected.items():
        np.testing.assert_allclose(hp.pattern_scores(A, kind, lead)[0], row, rtol=0,
                                   atol=1e-15)
        assert hp.chance(kind, T, lead) == pytest.approx(even[kind], abs=1e-15)
        assert hp.chance(kind, T, lead, causal=False) == pytest.approx(1 / T, abs=1e-15)


def test_uneven_sequences_and_unknown_kinds_are_refused():
    with pytest.raises(WorkshopError, match="not a part repeated once"):
        hp.pattern_cells("induction", 8, lead=1)
    with pytest.raises(WorkshopError, match="unknown head pattern 'copy'; choose one of "
                                            "induction, previous, sink"):
        hp.pattern_cells("copy", 8)


def test_ranking_equals_python_sorted():
    scores = np.random.default_rng(5).random((4, 6)).round(1)  # rounding makes ties
    everyone = sorted(((float(scores[lay, h]), lay, h) for lay in range(4) for h in range(6)),
                      key=lambda t: (-t[0], t[1], t[2]))
    assert hp.ranked(scores, 24) == [(lay, h, s) for s, lay, h in everyone]
    assert hp.ranked(scores, 5) == [(lay, h, s) for s, lay, h in everyone[:5]]


@pytest.mark.parametrize("lead", [0, 1])
def test_copy_loss_equals_torch_cross_entropy(lead):
    half, n_vocab = 6, 40
    ids = hp.repeated_ids(n_vocab, lead=39 if lead else None, half=half)
    logits = np.random.default_rng(1).standard_normal((len(ids), n_vocab)) * 3
    t_logits, t_ids = torch.tensor(logits), torch.tensor(ids)

    def torch_loss(first_target, last_target):  # targets at sequence positions, inclusive
        rows = torch.arange(first_target, last_target + 1)
        return torch.nn.functional.cross_entropy(t_logits[rows - 1], t_ids[rows]).item()

    first, second = hp.copy_loss(logits, ids, lead)
    assert first == pytest.approx(torch_loss(lead + 1, lead + half - 1), abs=1e-12)
    assert second == pytest.approx(torch_loss(lead + half + 1, lead + 2 * half - 1), abs=1e-12)
    zero = hp.copy_loss(np.zeros((len(ids), n_vocab)), ids, lead)
    assert zero == pytest.approx((math.log(n_vocab), math.log(n_vocab)), abs=1e-12)


def test_repr_is_one_short_line():
    found = hp.HeadScores("induction", list(range(100)), np.full((12, 12), 0.25),
                          [(5, 1, 0.9121), (4, 11, 0.5)], 10.834, 1.2149)
    assert repr(found) == ("HeadScores(induction, 12 layers x 12 heads on 100 ids, "
                           "top L5 H1 0.912, loss 10.83 -> 1.21 nats)")


def test_top_must_be_a_whole_number_from_one():
    for top in (0, -1, 2.5, True):
        with pytest.raises(WorkshopError, match="top must be a whole number, at least 1"):
            hp.heads(None, "sink", top=top)  # refused before the model is touched


@pytest.fixture(scope="module")
def minilm():
    from attention_workshop.real import load_model

    try:
        return load_model("minilm")
    except WorkshopError:
        pytest.skip("MiniLM's weights are not installed")


def test_minilm_scores_equal_transformers_on_the_same_ids(minilm):
    from head_reference import minilm_bert, torch_run

    found = {kind: hp.heads(minilm, kind, top=3) for kind in hp.KINDS}
    ids = found["sink"].ids
    assert all(f.ids == ids for f in found.values())  # one sequence for every kind
    assert ids[0] == 101 and len(ids) == 101  # [CLS] leads, as in every text MiniLM reads
    attentions, _ = torch_run(minilm_bert(), ids)
    for kind, f in found.items():
        expected = reference_scores(attentions, ids, kind, lead=1)
        np.testing.assert_allclose(f.scores, expected, rtol=0, atol=1e-4)
        assert f.top == hp.ranked(f.scores, 3)
        assert f.loss_first is None and f.loss_second is None
    assert doc_row("minilm") == [shown(found[kind], 1) for kind in hp.KINDS]


@pytest.mark.parametrize(("n_layer", "n_head"), [(2, 4), (3, 2)])
def test_tiny_gpt2_scores_and_copy_loss_equal_transformers(tmp_path, n_layer, n_head):
    from head_reference import build_causal_gpt2, torch_run

    from attention_workshop.real import load_model

    reference = build_causal_gpt2(tmp_path, n_layer, n_head, seed=n_layer)
    ours = load_model(tmp_path)
    for kind in hp.KINDS:
        found = hp.heads(ours, kind, top=n_layer * n_head)
        ids = found.ids
        assert len(ids) == 100 and ids[:50] == ids[50:]  # no special token here: nothing leads
        attentions, logits = torch_run(reference, ids)
        expected = reference_scores(attentions, ids, kind, lead=0)
        np.testing.assert_allclose(found.scores, expected, rtol=0, atol=1e-4)
        rows, cols = np.array(target_cells(ids, kind, 0)).T
        one_off = attentions[..., rows, np.where(cols > 0, cols - 1, 1)].mean(axis=-1)
        assert np.abs(one_off - expected).max() > 1e-3  # a cell one off would be seen
        targets = torch.tensor(ids)
        cross = torch.nn.functional.cross_entropy
        first = cross(logits[0:49], targets[1:50]).item()  # targets r = 1 .. 49
        second = cross(logits[50:99], targets[51:100]).item()  # targets r = 51 .. 99
        assert (found.loss_first, found.loss_second) == pytest.approx((first, second), abs=1e-4)


@pytest.fixture(scope="module")
def smollm2():  # our SmolLM2, from the same GGUF file as the reference (skip without it)
    from smollm2_reference import smollm2_path

    from attention_workshop.real import load_model

    return load_model(smollm2_path())


def test_smollm2_heads_and_copy_loss_equal_transformers(smollm2, smollm2_model):
    """The heads that copy are really there: transformers' own attentions on the same ids
    hold the pattern, and its logits predict the repeat far better than the first half."""
    from head_reference import torch_run

    found = {kind: hp.heads(smollm2, kind, top=5) for kind in hp.KINDS}
    ids = found["induction"].ids
    assert len(ids) == 100 and not {*range(17)} & set(ids)  # no control token, nothing leads
    attentions, logits = torch_run(smollm2_model, ids)
    for kind, f in found.items():
        expected = reference_scores(attentions, ids, kind, lead=0)
        np.testing.assert_allclose(f.scores, expected, rtol=0, atol=1e-4)
    best = reference_scores(attentions, ids, "induction", lead=0).max()
    targets, cross = torch.tensor(ids), torch.nn.functional.cross_entropy
    first = cross(logits[0:49], targets[1:50]).item()
    second = cross(logits[50:99], targets[51:100]).item()
    assert best > 0.5 and second < first / 3  # an induction head, and the copy it makes
    f = found["induction"]
    assert (f.loss_first, f.loss_second) == pytest.approx((first, second), abs=1e-3)
    assert doc_row("smollm2") == [shown(found[kind], n) for kind, n in (("induction", 3),
                                  ("previous", 2), ("sink", 2))]
    assert f"copy loss: {first:.2f} nats on the first half, {second:.2f} on the" in DOC


DOC_LINES = (Path(__file__).parents[1] / "docs" / "heads.md").read_text().splitlines()
DOC = " ".join(" ".join(DOC_LINES).split())  # the prose with its line breaks undone


def doc_row(model):  # docs/heads.md's table row for `model` -> its 3 cells, the top heads only
    row = next(line for line in DOC_LINES if line.startswith(f"| {model} |"))
    cells = row.strip(" |").split(" | ")[1:]
    return [cell.split(" (")[0].removeprefix("none: best ") for cell in cells]


def shown(found, n):  # HeadScores -> its top n as the doc writes them: 'L18 H6 0.935, ...'
    return ", ".join(f"L{lay} H{h} {s:.3f}" for lay, h, s in found.top[:n])


def test_one_run_serves_every_kind(tmp_path):
    """heads(model, kind, result=run) gives what heads(model, kind) computes by itself; a run
    of other ids is refused."""
    from test_real_llama import SHAPES, build_llama

    from attention_workshop.real import load_model
    from attention_workshop.real.analysis.head_patterns import heads, sequence_for

    build_llama(tmp_path, *SHAPES["grouped"])  # a byte-level vocabulary of ~300 tokens
    model = load_model(tmp_path)
    run = model.run(sequence_for(model)[0])
    for kind in ("induction", "previous", "sink"):
        alone, shared = heads(model, kind, 3), heads(model, kind, 3, run)
        np.testing.assert_array_equal(alone.scores, shared.scores)
        assert alone.top == shared.top and alone.loss_second == shared.loss_second
    with pytest.raises(ValueError, match="not the run"):
        heads(model, "sink", 3, model.run([3, 4, 5]))


def test_scores_over_seeds_are_the_mean_and_spread_of_transformers_scores(tmp_path):
    """heads_over_seeds on 3 sequences: each sequence's ids drawn with its own seed, the mean
    and the sample standard deviation (statistics.stdev) of transformers' scores on them, the
    ranking by the mean, and each sequence's top head counted."""
    import statistics

    from head_reference import build_causal_gpt2, torch_run

    from attention_workshop.real import load_model

    reference = build_causal_gpt2(tmp_path, 2, 4, seed=7)
    ours = load_model(tmp_path)
    found = hp.heads_over_seeds(ours, "previous", top=8, seeds=3)
    assert found.seeds == [0, 1, 2] and len({tuple(r.ids) for r in found.runs}) == 3
    theirs = []
    for seed, run in zip(found.seeds, found.runs, strict=True):
        assert run.ids == hp.repeated_ids(ours.config.n_vocab, seed=seed)
        theirs.append(reference_scores(torch_run(reference, run.ids)[0], run.ids, "previous", 0))
    for lay in range(2):
        for h in range(4):
            cell = [float(t[lay, h]) for t in theirs]
            assert found.scores[lay, h] == pytest.approx(statistics.fmean(cell), abs=1e-4)
            assert found.spread[lay, h] == pytest.approx(statistics.stdev(cell), abs=1e-4)
    assert found.top == hp.ranked(found.scores, 8)
    firsts = [tuple(int(i) for i in np.unravel_index(np.argmax(t), t.shape)) for t in theirs]
    assert dict(found.top_counts(0)) == {k: firsts.count(k) for k in set(firsts)}
    one = hp.heads_over_seeds(ours, "previous", top=8, seeds=1)
    np.testing.assert_array_equal(one.scores, hp.heads(ours, "previous", 8).scores)
    assert not one.spread.any()
    for bad in (0, 101, True, 2.0):
        with pytest.raises(WorkshopError, match="seeds must be a whole number from 1 to 100"):
            hp.heads_over_seeds(ours, "previous", seeds=bad)


def test_the_docs_spread_row_is_transformers_scores_over_five_sequences(smollm2, smollm2_model):
    """docs/heads.md's "smollm2 (5 sequences)" row: the mean and sample std (statistics) of
    transformers' scores on the 5 seeds' ids, and each sequence's own top head counted."""
    import statistics

    from head_reference import torch_run

    row = next(line for line in DOC_LINES if line.startswith("| smollm2 (5 sequences) |"))
    cells = row.strip(" |").split(" | ")[1:]
    sequences = [hp.sequence_for(smollm2, seed=seed)[0] for seed in range(hp.SEEDS)]
    runs = [torch_run(smollm2_model, ids)[0] for ids in sequences]  # once each, for every kind
    for kind, cell in zip(hp.KINDS, cells, strict=True):
        per_seed = [reference_scores(attentions, ids, kind, 0)
                    for attentions, ids in zip(runs, sequences, strict=True)]
        stack = np.stack(per_seed)  # [5, 30, 9]
        mean = stack.mean(axis=0)
        order = np.argsort(-mean, axis=None, kind="stable")[:cell.count("±")]
        shown = []
        for lay, h in zip(*np.unravel_index(order, mean.shape), strict=True):
            std = statistics.stdev(float(v) for v in stack[:, lay, h])
            shown.append(f"L{lay} H{h} {mean[lay, h]:.3f} ± {std:.3f}")
        assert [part.split(" (")[0] for part in cell.split(", ")] == shown
        if "top on" in cell:
            best = np.unravel_index(order[0], mean.shape)
            firsts = sum(np.unravel_index(np.argmax(s), s.shape) == best for s in stack)
            assert f"(top on {firsts} of {hp.SEEDS})" in cell
