"""Module 6's figures show the module's numbers: each Figure captured (save replaced) and its
titles, cells and curves checked against the Result, recomputed apart where they are derived."""

import numpy as np
import pytest
from shared_run import alone

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED
from attention_workshop.embeddings import SENT_RIVER
from attention_workshop.figures import training
from attention_workshop.modules import module6


@pytest.fixture(scope="module")
def drawn():
    result, _ = alone(module6)  # module6.run(Log(), {}), once a session (shared_run.py)
    figures = {}
    original = training.save
    try:
        for name, drawing in training.FIGURES.items():
            training.save = lambda fig, path, name=name: figures.setdefault(name, fig)
            drawing.draw(result, None)
    finally:
        training.save = original
    return result, figures


def test_each_figure_is_titled_and_registered(drawn):
    _, figures = drawn
    assert set(figures) == set(training.FIGURES)
    for fig in figures.values():
        assert fig.get_suptitle().startswith("Module 6: ")


def test_wiring_heatmaps_are_the_learned_and_wired_forms(drawn):
    result, figures = drawn
    learned, wired = (ax.get_images()[0].get_array() for ax in
                      figures["learned_wiring.png"].axes[:2])
    by_hand = [[sum(result.W_Q[i, c] * result.W_K[j, c] for c in range(2)) for j in range(4)]
               for i in range(4)]
    np.testing.assert_allclose(learned, by_hand, rtol=1e-12)
    assert wired[2, 0] == wired[2, 1] == 2.0 and wired[3, 2] == 1.5  # W_Q_WIRED x W_K_WIRED
    np.testing.assert_array_equal(wired, W_Q_WIRED @ W_K_WIRED.T)
    bars = figures["learned_wiring.png"].axes[2].containers
    np.testing.assert_allclose([b.get_height() for b in bars[1]], result.bank_learned[SENT_RIVER])


def test_curves_are_the_snapshots(drawn):
    result, figures = drawn
    ax0, ax1 = figures["induction_forms.png"].axes[:2]
    first, second = ax0.get_lines()[:2]
    assert list(second.get_xdata()) == [s.step for s in result.snapshots]
    assert list(second.get_ydata()) == [s.second_copy for s in result.snapshots]
    assert list(first.get_ydata()) == [s.first_copy for s in result.snapshots]
    assert [line.get_label() for line in ax1.get_lines()] == [
        "L1 H0 induction", "L1 H1 induction", "L0 H0 previous", "L0 H1 previous"]
    assert list(ax1.get_lines()[0].get_ydata()) == [s.induction[1, 0] for s in result.snapshots]


def test_patterns_before_and_after(drawn):
    result, figures = drawn
    axes = figures["induction_patterns.png"].axes
    before = next(s for s in result.snapshots if s.step == result.phase[0])
    np.testing.assert_array_equal(axes[0].get_images()[0].get_array(), before.attentions[0, 0])
    np.testing.assert_array_equal(axes[-1].get_images()[0].get_array(),
                                  result.snapshots[-1].attentions[1, 1])
    assert axes[-1].get_title().startswith(f"step {result.snapshots[-1].step}, L1 H1")
