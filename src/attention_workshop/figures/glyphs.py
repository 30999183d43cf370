"""Text drawn as glyph outlines, one collection per panel: the numbers in heatmap cells (every
heatmap: the weight tables, the Module 3 grids' up to 300 numbers) and the tokens along the
12-head grid's edges (120 labels). matplotlib lays out and renders every Text on its own
(each costs far more to draw: docs/benchmarks.md; and a tick brings two lines and a second
label with it); an outline collection is built from cached glyph paths and drawn in one
call. The same strings in the same places, the same font.

Each collection keeps the strings it shows, for tests and readers of the figure:
`cell_texts` (row by row) and `labels` (the tokens, in order), and `as_texts`: the same
strings as matplotlib Text would place them. A vector file (SVG, PDF) keeps its text as text,
selectable and searchable: `as_text(fig)` swaps each collection for those Texts before such a
save.
"""

import functools

import numpy as np
from matplotlib.collections import PathCollection
from matplotlib.font_manager import FontProperties
from matplotlib.path import Path
from matplotlib.textpath import TextPath
from matplotlib.transforms import Affine2D

PAD = 3  # points between a panel's edge and its labels, as tick_params(length=0, pad=3) left


def annotate_cells(image, fmt="{:.2f}", threshold=0.5, fontsize=7):
    """Each cell's value on a heatmap (the AxesImage ax.imshow(matrix) returned, rows from the
    top), centred on its cell wherever the image lies, white on dark cells (above `threshold`).

    Example: annotate_cells(ax.imshow([[0.25, 0.75]])).cell_texts -> ['0.25', '0.75'].
    """
    prop = FontProperties(size=fontsize)
    texts, offsets, colors = [], [], []
    for i, row in enumerate(image.get_array()):
        for j, value in enumerate(row):
            if value is np.ma.masked:  # a cell left out (not yet written): no number
                continue
            texts.append(fmt.format(value))
            offsets.append(centre(image, i, j))
            colors.append("white" if value > threshold else "black")
    cells = _collection(image.axes, [centred(text, prop) for text in texts], offsets, colors)
    cells.cell_texts = texts
    cells.as_texts = [(text, xy, (0, 0), {"color": color, "fontsize": fontsize, "ha": "center",
                                          "va": "center"})
                      for text, xy, color in zip(texts, offsets, colors, strict=True)]
    return cells


def edge_labels(image, tokens, fontsize):
    """The tokens under a heatmap (turned to read upwards, one under each column) and to its
    left (one beside each row): where set_xticks(range(T), tokens, rotation=90) and
    set_yticks put them on the image's own panel, without the ticks.

    Example: edge_labels(ax.imshow(weights), ["the", "bank"], 8).labels -> ['the', 'bank'].
    """
    prop = FontProperties(size=fontsize)
    left, _, bottom, _ = image.get_extent()
    T = len(tokens)
    paths = [under(t, prop) for t in tokens] + [beside(t, prop) for t in tokens]
    offsets = ([(centre(image, 0, j)[0], bottom) for j in range(T)]
               + [(left, centre(image, i, 0)[1]) for i in range(T)])
    labels = _collection(image.axes, paths, offsets, "black")
    labels.set_clip_on(False)  # they lie outside the panel
    labels.labels = list(tokens)
    style = {"color": "black", "fontsize": fontsize}
    labels.as_texts = (
        [(t, xy, (0, -PAD), {**style, "rotation": 90, "ha": "center", "va": "top"})
         for t, xy in zip(tokens, offsets[:T], strict=True)]
        + [(t, xy, (-PAD, 0), {**style, "ha": "right", "va": "center_baseline"})
           for t, xy in zip(tokens, offsets[T:], strict=True)])
    return labels


def as_text(fig):  # Figure -> the same Figure, each outline collection swapped for Texts
    """For a vector save: every collection made here becomes the Texts it stands for, at the
    same places (data coordinates, moved by the same points), in the same font and colour.
    Example: a heatmap's 9 cell numbers -> 9 Texts '0.25', ... on its Axes."""
    for ax in fig.axes:
        for shapes in [c for c in ax.collections if hasattr(c, "as_texts")]:
            for text, xy, shift, style in shapes.as_texts:
                ax.annotate(text, xy, xytext=shift, textcoords="offset points",
                            annotation_clip=False, **style)
            shapes.remove()
    return fig


def centre(image, i, j):  # AxesImage, row, column -> the cell's centre in data coordinates
    """Example: an image of [2, 2] with imshow's own extent (-0.5, 1.5, 1.5, -0.5):
    centre(image, 1, 0) -> (0.0, 1.0)."""
    left, right, bottom, top = image.get_extent()
    rows, cols = image.get_array().shape[:2]
    return left + (j + 0.5) * (right - left) / cols, top + (i + 0.5) * (bottom - top) / rows


def _collection(ax, paths, offsets, colors):  # paths in points, offsets in data coordinates
    shapes = PathCollection(paths, offsets=offsets, offset_transform=ax.transData,
                            facecolors=colors, edgecolors="none",
                            transform=Affine2D().scale(1 / 72) + ax.figure.dpi_scale_trans)
    ax.add_collection(shapes, autolim=False)
    return shapes


@functools.lru_cache(maxsize=1024)
def outline(text, prop):  # str, FontProperties -> (Path in points, its box (x0, y0, x1, y1))
    """The box is that of the outline's points (its closing points, all at (0, 0), left out):
    a glyph's curves never leave their control points, and the font's outlines have a point
    at every extreme, so it is the exact extent (Path.get_extents solves each curve for its
    extremes: the same box, but a third of the 12-head grid's drawing time)."""
    path = TextPath((0, 0), text, prop=prop)
    points = path.vertices[path.codes != Path.CLOSEPOLY]  # [n, 2]
    return path, (*points.min(axis=0), *points.max(axis=0))


def moved(path, dx, dy, turn=False):  # Path -> Path, turned 90 degrees first if asked
    vertices = path.vertices[:, ::-1] * (-1, 1) if turn else path.vertices  # (x, y) -> (-y, x)
    return Path(vertices + (dx, dy), path.codes)


def centred(text, prop):  # -> Path centred on (0, 0) both ways
    path, (x0, y0, x1, y1) = outline(text, prop)
    return moved(path, -(x0 + x1) / 2, -(y0 + y1) / 2)


def line_box(prop):  # -> (ascent, descent) of a line of text: "lp"'s, as matplotlib measures
    _, (_, y0, _, y1) = outline("lp", prop)
    return y1, -y0


def beside(text, prop):  # -> Path ending PAD points left of (0, 0), its baseline's middle there
    """Right-aligned; vertically as matplotlib's y tick labels ("center_baseline"): the middle
    of the line's ascent on the row's centre, so every label's baseline lines up."""
    path, (_, _, x1, _) = outline(text, prop)
    ascent, _ = line_box(prop)
    return moved(path, -PAD - x1, -ascent / 2)


def under(text, prop):  # -> Path reading upwards, ending PAD points below (0, 0), centred on it
    """As matplotlib's x tick labels turned 90 degrees: the line's box (ascent and descent)
    centred on the column, the end of the text at the top."""
    path, (_, _, x1, _) = outline(text, prop)
    ascent, descent = line_box(prop)
    return moved(path, (ascent - descent) / 2, -PAD - x1, turn=True)
