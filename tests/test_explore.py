"""explore's numbers against a plain-Python attention written here, loop by loop."""

import json

import numpy as np
import pytest
from explore_reference import assert_close, ref_heads
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_workshop import cli
from attention_workshop.embeddings import EMBED
from attention_workshop.explore import explore, slow_motion
from attention_workshop.explore.json_view import as_json
from attention_workshop.explore.tables import Wiring

WORDS = sorted(EMBED)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8))
def test_both_heads_match_loops_for_any_sentence(words):
    doc = as_json(explore(" ".join(words)))
    assert doc["tokens"] == words
    assert_close(doc, ref_heads([EMBED[w] for w in words]))


numbers = st.floats(-3, 3, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), st.integers(1, 3), st.data())
def test_any_wiring_matches_loops(words, d_k, data):
    wq = data.draw(st.lists(st.lists(numbers, min_size=d_k, max_size=d_k), min_size=4, max_size=4))
    wk = data.draw(st.lists(st.lists(numbers, min_size=d_k, max_size=d_k), min_size=4, max_size=4))
    channels = tuple(f"c{i}" for i in range(d_k))
    ex = explore(" ".join(words), None, Wiring(np.array(wq), channels, "q"),
                 Wiring(np.array(wk), channels, "k"))
    assert_close(as_json(ex), ref_heads([EMBED[w] for w in words], wq, wk))


def test_lesson_numbers_for_the_river_bank():
    """The lessons print bank's raw recipe [0.185, 0.317, 0.498], wired [0.159, 0.500, 0.341],
    and its wired output water=0.552 money=0.102 place=0.457 filler=0.159."""
    ex = explore("the river bank")
    np.testing.assert_allclose(ex.raw["weights"][2], [0.185, 0.317, 0.498], atol=5e-4)
    np.testing.assert_allclose(ex.wired["weights"][2], [0.159, 0.500, 0.341], atol=5e-4)
    np.testing.assert_allclose(ex.wired["outputs"][2], [0.552, 0.102, 0.457, 0.159], atol=5e-4)


@pytest.mark.parametrize("sentence", ["the river bank", "the money bank", "a loan at the bank"])
def test_json_command_full_precision(sentence, capsys):
    assert cli.main(["explore", sentence, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"tokens", "raw", "wired"}
    assert set(doc["raw"]) == {"scores", "weights", "outputs"}
    assert set(doc["wired"]) == {"queries", "keys", "scores", "weights", "outputs"}
    assert_close(doc, ref_heads([EMBED[w] for w in sentence.split()]))
    # Full precision: the printed floats are the computed floats, bit for bit.
    assert doc["raw"]["weights"] == explore(sentence).raw["weights"].tolist()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), st.data())
def test_slow_motion_rows_sum_to_the_output(words, data):
    ex = explore(" ".join(words))
    i = data.draw(st.integers(0, len(words) - 1))
    ref = ref_heads([EMBED[w] for w in words])
    for head in ("raw", "wired"):
        recipe = ref[head]["weights"][i]
        scaled, output = slow_motion(getattr(ex, head)["weights"][i], ex.X)
        expected = [[w * v for v in EMBED[t]] for w, t in zip(recipe, words, strict=True)]
        np.testing.assert_allclose(scaled, expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(output, ref[head]["outputs"][i], rtol=0, atol=1e-12)


def test_slow_motion_text_for_the_money_bank(capsys):
    """Module 1's exercise: bank's recipe over the, money, bank applied to X_money."""
    assert cli.main(["explore", "the money bank", "--word", "bank"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [EMBED[w] for w in ("the", "money", "bank")]
    ref = ref_heads(rows)
    for head in ("raw", "wired"):
        recipe = ref[head]["weights"][2]
        start = next(i for i, line in enumerate(lines) if line.startswith(f"  slow motion, {head}"))
        for k, word in enumerate(("the", "money", "bank")):
            cells = [f"{recipe[k] * v:.3f}" for v in rows[k]]
            assert lines[start + 3 + k].split() == [f"{recipe[k]:.3f}", "x", word, *cells]
        total = [f"{v:.3f}" for v in ref[head]["outputs"][2]]
        assert lines[start + 6].split() == ["=", "bank's", "output", *total]
    assert f"{ref['raw']['outputs'][2][1]:.3f}" == "0.409"  # the lesson's money column sum


def test_raw_and_wired_tables_share_lines_when_short(capsys):
    assert cli.main(["explore", "the river bank"]) == 0
    out = capsys.readouterr().out
    assert "raw head: scores X @ X.T" in out
    line = next(x for x in out.splitlines() if x.startswith("    bank") and "1.620" in x)
    ref = ref_heads([EMBED[w] for w in ("the", "river", "bank")])
    expected = [f"{v:.3f}" for v in (*ref["raw"]["scores"][2], *ref["wired"]["scores"][2])]
    assert line.split() == ["bank", *expected[:3], "bank", *expected[3:]]


def test_long_sentence_stacks_tables(capsys):
    sentence = "a boat by the shore of the river bank"
    assert cli.main(["explore", sentence]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  wired head: scores Q @ K.T" in lines  # on a line of its own
    assert max(len(x) for x in lines) <= 100
