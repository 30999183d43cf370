"""Each figure says what it shows: a title, named axes, and the numbers the lessons read off it.

The expected numbers are recomputed here with plain Python, independently of the package.
"""

import math

import numpy as np
import pytest

from attention_workshop.figures import toy
from attention_workshop.report import Log
from attention_workshop.workshop import compute

ROWS = {"the": [0, 0, 0, 1], "river": [0.9, 0, 0.3, 0], "money": [0, 0.9, 0.1, 0],
        "bank": [0.3, 0.3, 0.9, 0]}


def plain_weights(words):
    """Raw attention weights by hand: softmax over each row of dot products."""
    out = []
    for a in words:
        scores = [sum(x * y for x, y in zip(ROWS[a], ROWS[b], strict=True)) for b in words]
        e = [math.exp(s) for s in scores]
        out.append([v / sum(e) for v in e])
    return out


@pytest.fixture(scope="module")
def drawn():
    """Draw every toy figure, keeping the Figure objects instead of writing files."""
    results = compute(Log(), real=False)
    figures = {}
    original = toy.save
    for name, drawing in toy.FIGURES.items():
        toy.save = lambda fig, path, name=name: figures.setdefault(name, fig)
        try:
            drawing(results, None)
        finally:
            toy.save = original
    return figures


def test_every_figure_has_a_title(drawn):
    assert set(drawn) == set(toy.FIGURES)
    for fig in drawn.values():
        titles = [ax.get_title() for ax in fig.axes] + [fig.get_suptitle()]
        assert any(len(t) > 10 for t in titles)


def test_heatmaps_annotate_every_raw_weight(drawn):
    fig = drawn["weights_heatmaps.png"]
    cells = {t for ax in fig.axes for c in ax.collections for t in getattr(c, "cell_texts", [])}
    for words in (["the", "river", "bank"], ["the", "money", "bank"]):
        for row in plain_weights(words):
            for w in row:
                assert f"{w:.3f}" in cells
    assert "0.500" in cells and "0.341" in cells  # bank's wired row


def test_three_lives_bars_on_the_named_axes(drawn):
    ax = drawn["bank_three_lives.png"].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["water", "money", "place", "filler"]
    labels = [t.get_text() for t in ax.texts]
    w = plain_weights(["the", "river", "bank"])[2]
    simple = [sum(w[i] * ROWS[word][axis] for i, word in enumerate(["the", "river", "bank"]))
              for axis in range(4)]
    for value in [0.3, 0.3, 0.9, 0.0, *simple, 0.552, 0.102, 0.457, 0.159]:
        assert f"{value:.3f}" in labels


def test_bank_split_is_on_the_water_money_plane(drawn):
    ax = drawn["bank_split.png"].axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("water", "money")
    notes = " ".join(t.get_text() for t in ax.texts)
    assert "(0.435, 0.149)" in notes and "(0.158, 0.409)" in notes


def test_scaling_curves_red_climbs_blue_stays_flat(drawn):
    ax = drawn["scaling.png"].axes[0]
    red, blue = ax.get_lines()[:2]
    assert list(red.get_xdata()) == [4, 16, 64, 256]
    assert [round(v, 3) for v in red.get_ydata()] == [0.522, 0.750, 0.879, 0.941]
    assert [round(v, 3) for v in blue.get_ydata()] == [0.338, 0.356, 0.362, 0.366]
    assert ax.get_ylabel() and ax.get_xlabel().startswith("d")


def test_pipeline_names_every_step(drawn):
    words = " ".join(t.get_text() for t in drawn["pipeline.png"].axes[0].texts)
    for step in ("Q = X @ W_Q", "K = X @ W_K", "V = X @ W_V", "Q @ K.T", "sqrt(d_k)", "softmax",
                 "weights @ V"):
        assert step in words


def test_no_path_returns_the_figure_for_a_notebook(tmp_path):
    """save(fig, None), as the notebooks call the figures: the Figure itself, no file written."""
    words = ["the", "river", "bank"]
    fig = toy.weight_grid([("raw", words, np.array(plain_weights(words)))], "weights", None)
    assert type(fig).__name__ == "Figure" and not list(tmp_path.iterdir())
    (cells,) = [c for c in fig.axes[0].collections if hasattr(c, "cell_texts")]
    assert cells.cell_texts == [f"{w:.3f}" for row in plain_weights(words) for w in row]


def test_head_grid_shows_every_weight_of_every_head():
    """The real figures draw their numbers as glyph outlines (glyphs.annotate_cells): each
    head's collection holds every cell's value, centred on its cell of that head's image,
    white on dark cells; each image is titled with its head."""
    from attention_workshop.figures import encoder as real

    rng = np.random.default_rng(4)
    weights = rng.random((3, 4, 4))
    weights /= weights.sum(axis=-1, keepdims=True)
    fig = real.head_grid(["a", "b", "c", "d"], weights, "heads", None)
    ax = fig.axes[0]  # every head's image, in one Axes measured in inches
    numbers = [c for c in ax.collections if hasattr(c, "cell_texts")]
    titles = [t for t in ax.texts if t.get_text().startswith("head")]
    assert len(ax.images) == len(numbers) == len(titles) == 3
    for h, (image, cells, title) in enumerate(zip(ax.images, numbers, titles, strict=True)):
        np.testing.assert_array_equal(image.get_array(), weights[h])
        assert cells.cell_texts == [f"{w:.2f}" for row in weights[h] for w in row]
        left, right, bottom, top = image.get_extent()
        side = right - left
        centres = [(left + (j + 0.5) * side / 4, top + (i + 0.5) * side / 4)
                   for i in range(4) for j in range(4)]
        np.testing.assert_allclose(cells.get_offsets(), centres)
        white = [tuple(c) == (1.0, 1.0, 1.0, 1.0) for c in cells.get_facecolors()]
        assert white == [w > 0.5 for row in weights[h] for w in row]
        assert title.get_text() == f"head {h}"
        assert title.get_position() == pytest.approx((left + side / 2, top - 6 / 72))


def test_three_lives_title_clears_the_axis_offset_of_large_values():
    """A user's table may hold values so large that the y axis shows its scale ("1e7")
    above the axes: the title moves up out of its way, as in matplotlib's own layout."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    lives = [("lookup row", np.array([1e7, 2e7, 3e7])), ("wired head", np.array([2e7, 0, 1e7]))]
    fig = toy.three_lives("w", "a long sentence with the word w in it, and more words after "
                          "it", ["x", "y", "z"], lives, None)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    ax = fig.axes[0]
    offset = ax.yaxis.offsetText
    assert offset.get_text()  # the scale is shown above the axis
    title, scale = (t.get_window_extent(canvas.get_renderer()) for t in (ax.title, offset))
    assert not title.overlaps(scale)


def test_scaling_labels_clear_the_dashed_line_and_the_log_axes_say_so(drawn):
    """No number (0.941 is the one nearest) and no note crosses the dashed 1.0 line; both
    x axes say they are log-spaced, and on the right sqrt(d) is a straight line (log-log),
    so x4 along d reads as x2 up the std."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = drawn["scaling.png"]
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    ax, ax_std = fig.axes
    one = ax.transData.transform((4, 1.0))[1]  # the dashed line's height in pixels
    texts = [t for t in ax.texts if t.get_text()]
    assert {"0.941", "1.0 = one key takes everything"} <= {t.get_text() for t in texts}
    for text in texts:
        box = text.get_window_extent(canvas.get_renderer())
        assert not box.y0 < one < box.y1, text.get_text()
    assert "log scale" in ax.get_xlabel() and "log scale" in ax_std.get_xlabel()
    assert (ax_std.get_xscale(), ax_std.get_yscale()) == ("log", "log")
    line = ax_std.get_lines()[0]
    points = ax_std.transData.transform(np.column_stack([line.get_xdata(), line.get_ydata()]))
    slopes = np.diff(points[:, 1]) / np.diff(points[:, 0])
    assert np.ptp(slopes) < 1e-6 * abs(slopes[0])  # one straight line


def test_bank_heads_numbers_are_readable_at_the_png_size():
    """real_bank_heads.png: each cell's number is at least 10 pixels tall in the PNG as
    written (canvas.DPI), fits inside its cell, and the two grids do not overlap."""
    from types import SimpleNamespace

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from attention_workshop.figures import canvas
    from attention_workshop.figures import encoder as real

    rng = np.random.default_rng(7)
    m3 = SimpleNamespace(to_river=rng.random((6, 12)), to_money=rng.random((6, 12)))
    original = real.save
    real.save = lambda fig, path: fig
    try:
        fig = real.bank_heads(m3, None)
    finally:
        real.save = original
    FigureCanvasAgg(fig).draw()
    grids = [ax for ax in fig.axes if ax.images]
    assert len(grids) == 2
    boxes = [ax.get_window_extent() for ax in grids]
    assert not boxes[0].overlaps(boxes[1])
    for ax, grid in zip(grids, (m3.to_river, m3.to_money), strict=True):
        (cells,) = [c for c in ax.collections if hasattr(c, "cell_texts")]
        assert cells.cell_texts == [f"{w:.2f}" for row in grid for w in row]
        pixels = canvas.DPI / 72  # the glyph paths are in points
        heights = [p.get_extents().height * pixels for p in cells.get_paths()]
        widths = [p.get_extents().width * pixels for p in cells.get_paths()]
        box = ax.get_window_extent()
        cell_width = box.width / 12 * canvas.DPI / fig.dpi
        assert min(heights) >= 10 and max(widths) < 0.8 * cell_width
