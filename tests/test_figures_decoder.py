"""Module 4's figures show Module 4's numbers: the pattern grids every head's score, the
writing figure each new token's attention row of the head it names."""

import numpy as np
import pytest
from shared_run import alone
from smollm2_reference import smollm2_path

from attention_workshop.figures import decoder
from attention_workshop.modules import module4


@pytest.fixture(scope="module")
def m4():
    smollm2_path()
    return alone(module4)[0]  # module4.run(Log(), {}), once a session (shared_run.py)


def numbers(ax):  # the numbers written on a heatmap's cells, in reading order
    [cells] = [c for c in ax.collections if hasattr(c, "cell_texts")]
    return cells.cell_texts


def test_pattern_grids_write_every_heads_score(m4):
    fig = decoder.pattern_grids(m4, None)
    axes = fig.axes[:3]
    for ax, kind in zip(axes, ("induction", "previous", "sink"), strict=True):
        scores = m4.patterns[kind].scores  # [30, 9]
        T = len(m4.patterns[kind].ids)  # 100 ids, nothing leads: row i of a causal head sees i + 1
        rows = {"induction": range(50, 100), "previous": range(1, 100), "sink": range(1, 100)}
        level = np.mean([1 / (i + 1) for i in rows[kind]])  # chance, by hand
        assert T == 100
        assert numbers(ax) == ["\u00b7" if v <= level else str(round(100 * v))
                               for v in scores.ravel()]  # hundredths, a dot at chance
        framed = [(round(p.get_y() + 0.5), round(p.get_x() + 0.5)) for p in ax.patches]
        assert framed == [(lay, h) for lay, h, _ in m4.patterns[kind].top[:3]]
        assert ax.get_xlabel() == "head" and kind.split("-")[0] in ax.get_title()
        lay, head, score = m4.patterns[kind].top[0]
        assert f"best L{lay} H{head} = {score:.2f}; chance {level:.3f}" in ax.get_title()
    assert axes[0].get_ylabel() == "layer"


def test_writing_shows_each_new_tokens_row(m4):
    fig = decoder.writing(m4, None)
    ax = fig.axes[0]
    g = m4.continuation
    layer, head = decoder.content_head(g)
    assert f"layer {layer}, head {head}" in fig._suptitle.get_text()
    expected = [f"{w:.2f}" for s in g.steps for w in s.attention[layer, head]]
    assert numbers(ax) == expected  # row i: the weights over the tokens before new token i
    labels = [t.get_text() for t in ax.get_yticklabels()]
    tokens = [*g.prompt_tokens, *(s.token for s in g.steps)]
    P = len(g.prompt_ids)  # row i is the row of position P + i - 1, which wrote token P + i
    assert labels == [f"{P + i - 1}: {tokens[P + i - 1]} \u2192 {s.token}"
                      for i, s in enumerate(g.steps)]
    assert ax.get_ylabel() == "the position that looks \u2192 the token it writes"
    np.testing.assert_allclose([s.attention[layer, head].sum() for s in g.steps], 1.0)
