"""What explore says beside its numbers: ties and why, a note under each table, lesson claims a
table breaks, your words added to the built-in ones, capitals and punctuation. Every number
below is worked by hand from the rows and the wiring."""

import json
import math

import pytest
from explore_reference import assert_close, ref_heads

from attention_workshop import cli
from attention_workshop.embeddings import EMBED


def run(argv, capsys):
    assert cli.main(argv) == 0
    return capsys.readouterr().out


def run_json(argv, capsys):
    return json.loads(run([*argv, "--format", "json"], capsys))


@pytest.mark.parametrize("sentence", ["the river money bank", "the money river bank"])
def test_a_tie_lists_both_words_whatever_the_order(sentence, capsys):
    """bank's query is 2.0 x 0.9 = 1.8 on topic and 0 on place; river's key is 0.9 + 0 on
    topic, money's 0 + 0.9: both score 1.8 x 0.9 = 1.62, so bank's two weights are equal."""
    doc = run_json(["explore", sentence], capsys)
    bank = doc["wired"]["looks_most"][3]
    assert {t["word"] for t in bank["top"]} == {"river", "money"}
    weights = [t["weight"] for t in bank["top"]]
    scores = [0.0, 1.62, 1.62, 1.8 * 0.6]  # the, topic word, topic word, bank's own key
    e = [math.exp(s / math.sqrt(2)) for s in scores]
    assert weights == pytest.approx([e[1] / sum(e)] * 2, abs=1e-12)
    assert "only on topic" in bank["reason"] and "water + money" in bank["reason"]
    out = run(["explore", sentence], capsys).splitlines()
    start = next(i for i, line in enumerate(out) if line.startswith("  where each word looks"))
    row = next(line for line in out[start:] if line.startswith("    bank "))
    words = ", ".join(w for w in sentence.split() if w in ("river", "money"))
    assert row.endswith(f"-> {words} {e[1] / sum(e):.3f}")
    assert out[out.index(row) + 1].startswith("      wired tie: bank's query asks only on topic")


def test_money_and_river_tie_for_money_too(capsys):
    """The issue's example: money's query is 2.0 x 0.1 = 0.2 on topic only, so it scores
    river and money alike (0.2 x 0.9 = 0.18)."""
    doc = run_json(["explore", "the river money bank"], capsys)
    money = doc["wired"]["looks_most"][2]
    assert [t["word"] for t in money["top"]] == ["river", "money"]
    scores = [0.0, 0.18, 0.18, 0.2 * 0.6]
    e = [math.exp(s / math.sqrt(2)) for s in scores]
    assert money["top"][0]["weight"] == pytest.approx(e[1] / sum(e), abs=1e-12)


def test_a_flat_row_says_its_query_is_zero(capsys):
    """cash = [0.35, 0.85, 0, 0] has no place and no filler: its query is [0, 0], every
    score 0, each of the 7 words gets 1/7."""
    doc = run_json(["explore", "cash in a bank by the lake"], capsys)
    cash = doc["wired"]["looks_most"][0]
    assert len(cash["top"]) == 7
    assert all(t["weight"] == pytest.approx(1 / 7, abs=1e-15) for t in cash["top"])
    assert "[0.00, 0.00]" in cash["reason"] and "1/7" in cash["reason"]
    assert doc["notes"]["wired"]["weights"] == cash["reason"]
    assert "cash's query is all zeros" in doc["notes"]["queries_keys"]
    text = run(["explore", "cash in a bank by the lake"], capsys)
    assert "    cash    cash 0.256 -> all 7 words 0.143" in text


def wiring(tmp_path, name, matrix):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"matrix": matrix}))
    return str(path)


def test_near_tie_reason(tmp_path, capsys):
    """'s' scores a 0.5 and b 0.5001 with nothing else in the row: weights 0.49998 and
    0.50002, both printed 0.500: a near tie, not an exact one."""
    (tmp_path / "t.toml").write_text("[words]\ns = [1.0, 0.0]\na = [0.5, 0.0]\nb = [0.5001, 0.0]\n")
    doc = run_json(["explore", "a b", "--table", str(tmp_path / "t.toml"), "--replace-table",
                    "--wq", wiring(tmp_path, "q", [[1.0], [0.0]]),
                    "--wk", wiring(tmp_path, "k", [[1.0], [0.0]])], capsys)
    look = doc["wired"]["looks_most"][0]  # a's query 0.5 meets keys 0.5 and 0.5001
    assert [t["word"] for t in look["top"]] == ["a", "b"]
    assert look["reason"].startswith("near tie: equal at three decimals, not exactly")


def test_every_table_has_a_note(capsys):
    out = run(["explore", "the river bank"], capsys).splitlines()
    notes = [line for line in out if line.startswith("  notice")]
    assert len(notes) == 8  # X; Q and K; raw and wired scores, weights, outputs
    # the's query [0, 1.5] meets bank's key [0.6, 0.9]: 1.35; bank's query [1.8, 0] meets the's
    # key [0, 0]: 0. The largest asymmetry in the table.
    assert "  notice, wired head: not symmetric: the -> bank scores 1.350 but bank -> the 0.000" \
        in out
    doc = run_json(["explore", "the river bank"], capsys)
    assert doc["notes"]["raw"]["weights"].endswith("river -> bank 0.332")  # e^.54/(1+e^.9+e^.54)
    assert f"{math.exp(0.54) / (1 + math.exp(0.9) + math.exp(0.54)):.3f}" == "0.332"


def test_a_table_that_breaks_self_match_is_told_which_claim_and_why(tmp_path, capsys):
    """a = [0, 0, 0, 0.9] beside the = [0, 0, 0, 1]: a . the = 0.9 > a . a = 0.81."""
    (tmp_path / "t.toml").write_text("[words]\na = [0, 0, 0, 0.9]\n")
    argv = ["explore", "a bank by the river", "--table", str(tmp_path / "t.toml")]
    out = run(argv, capsys)
    assert "lesson claim broken here: self-match (Module 1)" in out
    assert "'a' scores 'the' 0.900 but itself only 0.810" in " ".join(out.split())
    doc = run_json(argv, capsys)
    assert doc["table"]["changed"] == ["a"] and doc["table"]["added"] == []
    assert doc["claims"][0]["holds"] is False and "0.810" in doc["claims"][0]["why"]
    assert doc["claims"][1]["holds"] is True
    # In a sentence without 'the' the claim holds, but the table still breaks it elsewhere.
    out = run(["explore", "a bank", "--table", str(tmp_path / "t.toml")], capsys)
    said = " ".join(out.split())
    assert "lesson claim broken by your table elsewhere" in said and '"a the"' in said


def test_weights_of_exactly_zero_break_the_positive_claim(tmp_path, capsys):
    """Scores 900 apart: e^-900 is 0.0 in floating point."""
    (tmp_path / "t.toml").write_text("[words]\nbig = [30, 0]\nzero = [0, 1]\n")
    doc = run_json(["explore", "big zero", "--table", str(tmp_path / "t.toml"),
                    "--replace-table", "--wq", wiring(tmp_path, "q", [[1], [0]]),
                    "--wk", wiring(tmp_path, "k", [[1], [0]])], capsys)
    assert doc["raw"]["weights"][0][1] == 0.0
    assert doc["claims"][1]["holds"] is False and "span 900" in doc["claims"][1]["why"]


def test_the_builtin_table_breaks_no_claim(capsys):
    doc = run_json(["explore", "a bank by the river"], capsys)
    assert all(claim["holds"] for claim in doc["claims"])
    assert [look["top"][0]["word"] for look in doc["raw"]["looks_most"]] == \
        ["a", "bank", "by", "the", "river"]


def test_your_words_join_the_builtin_ones(tmp_path, capsys):
    (tmp_path / "t.toml").write_text("[words]\nHeron = [0.8, 0.0, 0.4, 0.0]\n"
                                     "lake = [0.7, 0.0, 0.6, 0.0]\n")
    doc = run_json(["explore", "the heron by the lake", "--table", str(tmp_path / "t.toml")],
                   capsys)
    assert doc["table"] == {"source": f"built-in + {tmp_path / 't.toml'}", "added": ["heron"],
                            "changed": ["lake"]}
    rows = [EMBED["the"], [0.8, 0, 0.4, 0], EMBED["by"], EMBED["the"], [0.7, 0, 0.6, 0]]
    assert_close(doc, ref_heads(rows))
    text = run(["explore", "the heron by the lake", "--table", str(tmp_path / "t.toml")], capsys)
    assert "added: heron; changed: lake" in text


def test_capitals_and_punctuation_are_dropped(capsys):
    doc = run_json(["explore", "The River, bank.", "--word", "Bank"], capsys)
    assert doc["tokens"] == ["the", "river", "bank"] and doc["sentence"] == "The River, bank."
    assert_close(doc, ref_heads([EMBED[w] for w in ("the", "river", "bank")]))
    assert doc["raw"]["slow_motion"][0]["position"] == 2
    out = run(["explore", "(The  river) -- BANK!"], capsys)
    assert out.startswith('explore "the river bank" (3 words; read from "(The river) -- BANK!")')


def test_causal_mask_zeros_break_no_claim(capsys):
    """With --causal a word gives the words after it exactly 0 by design: not a broken claim.
    cash's query is [0, 0], so it spreads evenly over the one word it sees: itself."""
    doc = run_json(["explore", "cash in a bank", "--causal"], capsys)
    assert doc["wired"]["weights"][0] == [1.0, 0.0, 0.0, 0.0]
    assert all(claim["holds"] for claim in doc["claims"])
    assert "lesson claim" not in run(["explore", "cash in a bank", "--causal"], capsys)


def test_a_flat_row_under_the_causal_mask_counts_the_words_it_sees(tmp_path, capsys):
    """'zero' has no query at all; under the mask, as word 2 of 3, it sees 2 words: 1/2 each."""
    (tmp_path / "t.toml").write_text("[words]\nup = [1.0, 0.0]\nzero = [0.0, 0.0]\n")
    doc = run_json(["explore", "up zero up", "--table", str(tmp_path / "t.toml"),
                    "--replace-table", "--wq", wiring(tmp_path, "q", [[1.0], [0.0]]),
                    "--wk", wiring(tmp_path, "k", [[1.0], [0.0]]), "--causal"], capsys)
    look = doc["wired"]["looks_most"][1]
    assert [t["weight"] for t in look["top"]] == [0.5, 0.5]
    assert look["reason"].endswith("each word it sees gets 1/2")


def longest_note(argv, capsys):
    return run_json(["explore", *argv], capsys)["notes"]["rows"]


def test_two_rows_equally_long_are_a_tie(capsys, tmp_path):
    """up = [1, 0, 0.5] and down = [0, 1, 0.5]: both lengths are sqrt(1 + 0.25) = 1.118."""
    (tmp_path / "t.json").write_text('{"axes": ["x", "y", "z"], '
                                     '"words": {"up": [1, 0, 0.5], "down": [0, 1, 0.5]}}')
    (tmp_path / "w.json").write_text('{"matrix": [[1, 0], [0, 2], [0.5, 0.5]]}')
    files = ["--table", str(tmp_path / "t.json"), "--replace-table",
             "--wq", str(tmp_path / "w.json"), "--wk", str(tmp_path / "w.json")]
    assert longest_note(["up down", *files], capsys) == (
        f"longest rows, a tie: up, down ({math.sqrt(1.25):.3f} each); a row's length squared "
        "is its raw score with itself")
    assert longest_note(["down up", *files], capsys).startswith("longest rows, a tie: down, up")


def test_the_built_in_words_a_and_at_tie_exactly(capsys):
    """a = [0, 0, 0.25, 0.97], at = [0, 0, 0.85, 0.53]: 0.0625 + 0.9409 = 0.7225 + 0.2809."""
    assert longest_note(["a loan at the bank"], capsys).startswith(
        f"longest rows, a tie: a, at ({math.sqrt(1.0034):.3f} each)")
    assert longest_note(["the river bank"], capsys).startswith("longest row: the (1.000);")


def test_rows_equal_only_as_printed_are_a_near_tie(capsys, tmp_path):
    (tmp_path / "t.toml").write_text("[words]\nx = [1.0001, 0, 0, 0]\ny = [0, 1.0004, 0, 0]\n")
    note = longest_note(["x y", "--table", str(tmp_path / "t.toml")], capsys)
    assert note.startswith("longest rows, a near tie: x 1.000100, y 1.000400;")
