"""explore's switches for the wired head (the explorer page's): --no-scale, --causal, --wv.

Each is checked on "the river bank" against numbers worked by hand. Scores Q @ K.T (log lines
58-63): the [0, 0.45, 1.35]; river [0, 0.54, 0.36]; bank [0, 1.62, 1.08].
"""

import json
import math

import numpy as np
import pytest
from explore_cli import explore_json

from attention_workshop import cli

RIVER = "the river bank"
SWAP = [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]  # W_V: water <-> money


def shares(*scores):  # softmax by hand: e^s / sum e^s
    e = [math.exp(s) for s in scores]
    return [v / sum(e) for v in e]


def test_defaults_keep_the_old_document():
    doc = explore_json(RIVER)
    # the old document's keys first, as they were (the keys added since come after them)
    assert list(doc)[:3] == ["tokens", "raw", "wired"] and "settings" not in doc
    assert list(doc["wired"])[:5] == ["queries", "keys", "scores", "weights", "outputs"]
    # W_V is the identity, and the document still shows the values it gives: X's rows
    assert doc["wired"]["values"] == [[0.0, 0.0, 0.0, 1.0], [0.9, 0.0, 0.3, 0.0],
                                      [0.3, 0.3, 0.9, 0.0]]
    np.testing.assert_allclose(doc["wired"]["weights"][2], shares(0, 1.62 / 2**0.5, 1.08 / 2**0.5),
                               atol=1e-15)


def test_no_scale_softmaxes_the_undivided_scores():
    """bank: softmax([0, 1.62, 1.08]) = [1, e^1.62, e^1.08] / 8.998 = [0.111, 0.562, 0.327]."""
    doc = explore_json(RIVER, scale=False)
    assert doc["settings"] == {"scale": False, "causal": False, "w_v": "identity"}
    np.testing.assert_allclose(doc["wired"]["weights"][2], shares(0, 1.62, 1.08), atol=1e-15)
    assert [round(w, 3) for w in doc["wired"]["weights"][2]] == [0.111, 0.562, 0.327]
    assert doc["wired"]["scores"] == explore_json(RIVER)["wired"]["scores"]  # the same Q @ K.T


def test_causal_hides_later_words():
    """the sees only itself: [1, 0, 0]; river sees the and itself: softmax([0, 0.54 / sqrt 2])
    = [0.406, 0.594, 0]; bank, the last word, sees all three as before."""
    doc = explore_json(RIVER, causal=True)
    w = doc["wired"]["weights"]
    assert w[0] == [1.0, 0.0, 0.0]
    np.testing.assert_allclose(w[1], [*shares(0, 0.54 / 2**0.5), 0.0], atol=1e-15)
    assert w[2] == explore_json(RIVER)["wired"]["weights"][2]


def test_wv_that_swaps_water_and_money_swaps_the_outputs():
    """W_V with rows water -> money and money -> water: bank's wired output (log line 72,
    water 0.552 money 0.102 place 0.457 filler 0.159) comes out with the first two swapped."""
    doc = explore_json(RIVER, w_v=SWAP)
    assert doc["settings"]["w_v"].endswith("wv.json") and doc["settings"]["scale"]
    assert doc["wired"]["values"][1] == [0.0, 0.9, 0.3, 0.0]  # river hands over money now
    out = doc["wired"]["outputs"][2]
    assert [round(v, 3) for v in out] == [0.102, 0.552, 0.457, 0.159]
    plain = explore_json(RIVER)["wired"]["outputs"][2]
    np.testing.assert_allclose(out, [plain[1], plain[0], *plain[2:]], atol=1e-15)


def test_text_view_names_the_switches_and_blends_the_values(tmp_path, capsys):
    wv = tmp_path / "swap.json"
    wv.write_text(json.dumps({"matrix": SWAP}))
    assert cli.main(["explore", RIVER, "--no-scale", "--causal", "--wv", str(wv),
                     "--word", "bank"]) == 0
    out = capsys.readouterr().out
    assert (f"  switches: scores not divided by sqrt(d_k); causal mask (no word sees a later "
            f"word); W_V from {wv}") in out
    assert "wired head: weights (scores undivided, masked, softmaxed)" in out
    assert "wired head: values V = X @ W_V" in out
    assert "= bank's output  " in out.split("slow motion, wired head")[1]


@pytest.mark.parametrize(("matrix", "message"), [
    ([[1, 0], [0, 1], [0, 0], [0, 0]], "W_V ({}) is 4 x 2 but the table has 4 axes"),
    ([[1, 0, 0, 0]], "W_V ({}) is 1 x 4 but the table has 4 axes"),
])
def test_wv_of_the_wrong_shape_is_one_line_exit_2(matrix, message, tmp_path, capsys):
    wv = tmp_path / "wv.json"
    wv.write_text(json.dumps({"matrix": matrix}))
    assert cli.main(["explore", "the river bank", "--wv", str(wv)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert message.format(wv) in captured.err
