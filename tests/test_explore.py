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
    # The original document, unchanged, and the fields added beside it.
    assert list(doc)[:3] == ["tokens", "raw", "wired"]
    assert set(doc) == {"tokens", "raw", "wired", "sentence", "table", "notes", "claims"}
    assert set(doc["raw"]) == {"scores", "weights", "outputs", "looks_most"}
    assert set(doc["wired"]) == {"queries", "keys", "scores", "weights", "outputs", "values",
                                 "looks_most"}
    assert doc["wired"]["values"] == [list(EMBED[w]) for w in sentence.split()]  # W_V = identity
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
    """Module 1's exercise: bank's recipe over the, money, bank applied to X_money, each term
    from the printed numbers, as a learner rebuilds it by hand (the lesson's way)."""
    assert cli.main(["explore", "the money bank", "--word", "bank"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [EMBED[w] for w in ("the", "money", "bank")]
    ref = ref_heads(rows)
    for head in ("raw", "wired"):
        recipe = [round(w, 3) for w in ref[head]["weights"][2]]  # as printed
        start = next(i for i, line in enumerate(lines) if line.startswith(f"  slow motion, {head}"))
        terms = []
        for k, word in enumerate(("the", "money", "bank")):
            products = [recipe[k] * v for v in rows[k]]
            terms.append(products)
            cells = lines[start + 3 + k].split()
            assert cells[:3] == [f"{recipe[k]:.3f}", "x", word]
            assert all(abs(float(c) - p) <= 5e-4 + 1e-12 for c, p in zip(cells[3:], products,
                                                                           strict=True))
        sums = [float(c) for c in lines[start + 6].split()[-4:]]
        shown = [[float(c) for c in lines[start + 3 + k].split()[3:]] for k in range(3)]
        assert sums == pytest.approx([sum(col) for col in zip(*shown, strict=True)], abs=1e-12)
        exact = [f"{v:.3f}" for v in ref[head]["outputs"][2]]
        if [f"{v:.3f}" for v in sums] == exact:
            assert lines[start + 6].split()[:3] == ["=", "bank's", "output"]
        else:  # the rounded weights drift: the full-precision output follows, named as such
            assert lines[start + 6].split()[:3] == ["=", "column", "sums"]
            assert lines[start + 7].startswith("    bank's output at full precision: water=")
    assert f"{ref['raw']['outputs'][2][1]:.3f}" == "0.409"  # the lesson's money column sum


def test_slow_motion_of_the_river_bank_as_the_lesson_rebuilds_it(capsys):
    """The lesson's hand arithmetic: 0.317 x 0.9 = 0.285 (not the unrounded weight's 0.286),
    so the water column adds to 0.434 beside bank's full-precision 0.435."""
    assert cli.main(["explore", "the river bank", "--word", "bank"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("  slow motion, raw head: bank's recipe [0.185, 0.317, 0.498] over "
                        "the, river, bank")
    assert lines[start + 4].split() == ["0.317", "x", "river", "0.285", "0.000", "0.095",
                                        "0.000"]
    assert lines[start + 6].split() == ["=", "column", "sums", "0.434", "0.149", "0.543",
                                        "0.185"]
    assert "water=0.435" in lines[start + 7]


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
