"""How explore's and a model run's results show in a notebook: tables whose numbers are the
results' own (checked against hand-worked values and loops), every text escaped, and the plain
repr left alone for a terminal."""

from html.parser import HTMLParser

import numpy as np
import pytest

from attention_workshop.explore import Exploration, explore
from attention_workshop.notebook_html import MAX_TOKENS
from attention_workshop.real.model import RunResult


class Tables(HTMLParser):
    """Every <table> as {caption: [[cell text, ...] per row]} (cells include the row label)."""

    def __init__(self, text):
        super().__init__()
        self.tables, self.rows, self.cell, self.caption, self.where = {}, None, None, None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.rows, self.caption = [], ""
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.cell = ""
        elif tag == "caption":
            self.where = "caption"

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.rows[-1].append(self.cell)
            self.cell = None
        elif tag == "caption":
            self.where = None
        elif tag == "table":
            self.tables[self.caption] = self.rows

    def handle_data(self, data):
        if self.where == "caption":
            self.caption += data
        elif self.cell is not None:
            self.cell += data


def numbers(rows):  # table rows -> the numeric body as a float array (header and labels dropped)
    return np.array([[float(v) for v in row[1:]] for row in rows[1:]])


def test_exploration_shows_both_heads_with_the_lessons_numbers():
    ex = explore("the river bank")
    tables = Tables(ex._repr_html_()).tables
    raw = numbers(tables["raw head: weights (row = looking word)"])
    wired = numbers(tables["wired head: weights (scores / sqrt(2))"])
    # worked by hand in the lessons: bank's rows under each head
    assert raw[2].tolist() == [0.185, 0.317, 0.498]
    assert wired[2].tolist() == [0.159, 0.500, 0.341]
    # and every cell is the softmax of the scores, computed here with exp and a sum
    S = numbers(tables["wired head: scores Q @ K.T"]) / np.sqrt(2)
    assert np.abs(np.exp(S) / np.exp(S).sum(axis=1, keepdims=True) - wired).max() < 2e-3
    looks = tables["where each word looks most (ties listed together)"]
    assert looks[3] == ["bank", "bank 0.498", "river 0.500"]
    assert tables["rows of X: the lookup, the same in every sentence"][0] == \
        ["", "water", "money", "place", "filler"]


def test_exploration_lists_ties_and_why():
    """bank's wired query [1.8, 0] meets river's and money's keys, both 0.9 on topic: a tie."""
    looks = Tables(explore("the river money bank")._repr_html_()).tables[
        "where each word looks most (ties listed together)"]
    bank = next(i for i, row in enumerate(looks) if row and row[0] == "bank")
    assert looks[bank][2] == "river, money 0.333"
    assert looks[bank + 1][1].startswith("wired tie: bank's query asks only on topic")


def test_exploration_repr_stays_plain():
    """At a prompt: a few plain lines (tests/test_api.py checks their numbers), no HTML."""
    ex = explore("the river bank")
    assert repr(ex).startswith("Exploration('the river bank': 3 words x 4 axes")
    assert "<" not in repr(ex) and len(repr(ex).splitlines()) == 4


def test_every_text_is_escaped():
    tokens = ["<i>it</i>", "a&b"]
    X = np.eye(2)
    heads = {"scores": X, "weights": X, "outputs": X}
    ex = Exploration(tokens, X, heads, {**heads, "queries": X, "keys": X}, ("<ax>", "y"),
                     ("c", "d"), ("<script>alert(1)</script>", "w", "k"))
    text = ex._repr_html_()
    assert "<i>" not in text and "<script>" not in text and "<ax>" not in text
    assert "&lt;i&gt;it&lt;/i&gt;" in text and "a&amp;b" in text
    assert "&lt;script&gt;" in text


def run_result(tokens, attentions, special):
    L, H, T, _ = attentions.shape
    zeros = np.zeros((L, H, T, 2))
    return RunResult(tokens=tokens, ids=list(range(T)), special=special, attentions=attentions,
                     hidden=np.zeros((T, 4)), hidden_states=np.zeros((L + 1, T, 4)),
                     queries=zeros, keys=zeros, values=zeros)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_run_result_grid_is_each_heads_largest_word_to_word_weight(seed):
    rng = np.random.default_rng(seed)
    L, H, T = 2, 3, 5
    A = rng.random((L, H, T, T))
    A /= A.sum(axis=-1, keepdims=True)
    special = [True, False, False, False, True]
    tokens = ["[CLS]", "x<y", "b", "c", "[SEP]"]
    tables = Tables(run_result(tokens, A, special)._repr_html_()).tables
    grid = next(rows for caption, rows in tables.items() if caption.startswith("each head"))
    expected = np.zeros((L, H))  # the loop the grid's caption describes
    for lay in range(L):
        for h in range(H):
            expected[lay, h] = max(A[lay, h, i, j] for i in range(T) for j in range(T)
                                   if i != j and not special[i] and not special[j])
    assert np.abs(numbers(grid) - expected).max() <= 5e-4
    assert [row[0] for row in grid[1:]] == ["layer 0", "layer 1"]  # layers count from 0
    assert grid[0][1:] == ["H0", "H1", "H2"]
    heads = [caption for caption in tables if caption.startswith("layer ")]
    assert len(heads) == 3
    assert "x&lt;y" in run_result(tokens, A, special)._repr_html_()


def test_long_runs_show_the_grid_but_no_weight_tables():
    T = MAX_TOKENS + 1
    A = np.full((1, 2, T, T), 1 / T)
    special = [True] + [False] * (T - 2) + [True]
    result = run_result([f"t{i}" for i in range(T)], A, special)
    tables = Tables(result._repr_html_()).tables
    assert not [c for c in tables if c.startswith("layer ")]
    assert repr(result).startswith("RunResult(tokens=['t0'")


def test_minilm_run_shows_the_logs_bank_to_river_head():
    """results.log [S7] line 2: bank -> river in L0 H4 = 0.788; the grid's L0 H4 cell is bank's
    look at river (that head's largest word-to-word weight)."""
    from attention_workshop.real import load_model

    result = load_model("minilm", dtype=np.float64).run("the river bank")
    tables = Tables(result._repr_html_()).tables
    grid = next(rows for caption, rows in tables.items() if caption.startswith("each head"))
    assert grid[1][0] == "layer 0" and grid[1][1 + 4] == "0.788"
    assert tables[""][1][1:] == ["[CLS]", "the", "river", "bank", "[SEP]"]
