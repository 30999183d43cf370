"""figures/glyphs.py: text as glyph outlines, placed where matplotlib itself writes that text.

The reference is matplotlib's own layout: the same tokens as tick labels on a twin panel,
their boxes measured by the renderer.
"""

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.path import Path
from matplotlib.textpath import TextPath

from attention_workshop.figures import glyphs
from attention_workshop.figures.canvas import new_figure


def ink_boxes(collection, shift=(0, 0)):  # -> [(x0, y0, x1, y1)] in pixels, one per path
    boxes = []
    for path, offset in zip(collection.get_paths(), collection.get_offsets(), strict=True):
        placed = path.transformed(collection.get_transform())  # points -> pixels
        anchor = collection.get_offset_transform().transform(offset) + shift
        points = placed.vertices[path.codes != Path.CLOSEPOLY] + anchor
        boxes.append((*points.min(axis=0), *points.max(axis=0)))
    return boxes


@pytest.mark.parametrize(("tokens", "size"), [
    (["[CLS]", "the", "river", "bank", "[SEP]"], 8),
    (["a", "interest", "loans", "(yes)"], 5),
])
def test_edge_labels_sit_where_tick_labels_would(tokens, size):
    T = len(tokens)
    fig, (mine, theirs) = new_figure(6, 3, ncols=2, margins={
        "left": 0.15, "right": 0.95, "bottom": 0.3, "top": 0.95, "wspace": 0.5})
    image = mine.imshow(np.eye(T))
    theirs.imshow(np.eye(T))
    labels = glyphs.edge_labels(image, tokens, size)
    theirs.set_xticks(range(T), tokens, rotation=90, fontsize=size)
    theirs.set_yticks(range(T), tokens, fontsize=size)
    theirs.tick_params(length=0, pad=glyphs.PAD)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # places the tick labels
    shift = theirs.transData.transform((0, 0)) - mine.transData.transform((0, 0))
    texts = theirs.get_xticklabels() + theirs.get_yticklabels()
    assert labels.labels == tokens
    for k, ((x0, y0, x1, y1), text) in enumerate(zip(ink_boxes(labels, shift), texts,
                                                      strict=True)):
        box = text.get_window_extent(canvas.get_renderer())
        assert text.get_text() == tokens[k % T]
        # the outline lies inside matplotlib's box for the same label (to a pixel) ...
        assert box.x0 - 1 <= x0 and x1 <= box.x1 + 1 and box.y0 - 1 <= y0 and y1 <= box.y1 + 1
        # ... and ends where that box ends: a column's label at its top, a row's at its right
        assert abs((y1 - box.y1) if k < T else (x1 - box.x1)) <= 1


@pytest.mark.parametrize("extent", [None, (2.0, 4.0, 7.0, 3.0)])
def test_cell_numbers_are_centred_on_their_cells(extent):
    """Each number's outline, in pixels, has its middle on its cell's centre: with imshow's
    own extent (cell (i, j) at (j, i)) or an image placed elsewhere (head_grid's)."""
    fig, ax = new_figure(3, 3, margins={"left": 0.1, "right": 0.9, "bottom": 0.1, "top": 0.9})
    matrix = np.array([[0.25, 0.75], [1.0, 0.0]])
    image = ax.imshow(matrix, extent=extent)
    if extent is not None:
        ax.set(xlim=(0, 5), ylim=(8, 0))
    cells = glyphs.annotate_cells(image)
    assert cells.cell_texts == ["0.25", "0.75", "1.00", "0.00"]
    left, right, bottom, top = image.get_extent()
    for (x0, y0, x1, y1), (i, j) in zip(ink_boxes(cells), [(0, 0), (0, 1), (1, 0), (1, 1)],
                                        strict=True):
        middle = (left + (j + 0.5) * (right - left) / 2, top + (i + 0.5) * (bottom - top) / 2)
        np.testing.assert_allclose([(x0 + x1) / 2, (y0 + y1) / 2], ax.transData.transform(middle),
                                   atol=1e-9)
    white = [tuple(c) == (1.0, 1.0, 1.0, 1.0) for c in cells.get_facecolors()]
    assert white == [False, True, True, False]


@pytest.mark.parametrize("text", ["0.36", "[CLS]", "gq(|)", "interest"])
def test_an_outline_box_is_its_exact_extent(text):
    """The box from the outline's points equals matplotlib's exact curve extents."""
    from matplotlib.font_manager import FontProperties

    prop = FontProperties(size=7)
    _, box = glyphs.outline(text, prop)
    exact = TextPath((0, 0), text, prop=prop).get_extents()
    np.testing.assert_allclose(box, exact.bounds[:2] + (exact.x1, exact.y1), atol=1e-9)
