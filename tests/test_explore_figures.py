"""`explore --out DIR`: the learner's own sentence as figures, numbers recomputed by hand."""

import math

from attention_workshop import cli
from attention_workshop.figures import toy

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ROWS = {"the": [0, 0, 0, 1], "money": [0, 0.9, 0.1, 0], "bank": [0.3, 0.3, 0.9, 0]}


def test_out_draws_weights_and_the_words_three_lives(tmp_path, capsys):
    assert cli.main(["explore", "the money bank", "--word", "bank", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("explore")
    for name in ("explore_weights.png", "explore_bank.png"):
        assert (tmp_path / name).read_bytes().startswith(PNG_MAGIC)
        assert f"wrote {tmp_path / name}" in captured.err


def test_weights_figure_annotates_the_raw_weights(tmp_path, monkeypatch, capsys):
    drawn = []
    monkeypatch.setattr(toy, "save", lambda fig, path: drawn.append(fig) or path)
    assert cli.main(["explore", "the money bank", "--out", str(tmp_path)]) == 0
    cells = {t for c in drawn[0].axes[0].collections for t in getattr(c, "cell_texts", [])}
    words = ["the", "money", "bank"]
    for a in words:  # softmax of a's dot products with every word, by hand
        e = [math.exp(sum(x * y for x, y in zip(ROWS[a], ROWS[b], strict=True))) for b in words]
        assert {f"{v / sum(e):.3f}" for v in e} <= cells
    assert "0.280" in cells and "0.525" in cells  # bank's row in the lesson's table


def test_unwritable_out_writes_nothing_and_says_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert cli.main(["explore", "the river bank", "--out", str(blocker / "d")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1
