"""What every figure shares: one look, no screen, and an atomic save.

Figures are built on matplotlib.figure.Figure directly (no pyplot): nothing
global is registered, nothing needs closing, and drawing starts faster.
"""

import functools
import io

import matplotlib
from matplotlib.figure import Figure

from attention_workshop.files import write_atomic
from attention_workshop.userfiles import printable

DPI = 110
MAX_LABEL = 24  # characters of a token drawn as a label; a longer one ends in "…"
STYLE = {
    "text.parse_math": False,  # every label is plain text: "$5 for check #12 and $3" as typed
    "font.size": 10,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
    # titles sit just above their axes, with no search each draw for tick labels above it
    # (none of these figures puts any there): 10-20 ms less per titled axes
    "axes.titley": 1.0,
}


def styled(draw):
    """Decorator: run a figure-drawing function inside the workshop's rc style."""

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return draw(*args, **kwargs)

    return wrapper


def label(text, limit=MAX_LABEL):  # any text -> one line of at most `limit` characters
    """What a figure draws for a token, a word or a sentence: control characters escaped,
    a long one cut. Example: label("x" * 50) -> 23 x's and "…"; label("$5") -> "$5"."""
    return printable(text, limit)


def new_figure(width, height, margins=None, **subplots):
    """A figure and its axes. Example: fig, ax = new_figure(6, 4).

    With `margins` (subplots_adjust's fields, e.g. {"left": 0.1, "top": 0.9}) the layout is fixed,
    which draws about twice as fast; without, matplotlib's constrained layout places everything.
    """
    if margins is None:
        fig = Figure(figsize=(width, height), layout="constrained")
    else:
        fig = Figure(figsize=(width, height))
        fig.subplots_adjust(**margins)
    return fig, fig.subplots(**subplots)


def save(fig, path):  # Figure, Path | None -> Path | Figure
    """Render to PNG in memory (Agg), then write it atomically. With path None the figure
    itself is returned: a notebook shows it inline as the cell's last value."""
    if path is None:
        return fig
    buf = io.BytesIO()
    # zlib level 1: the same pixels, ~4% more bytes, the encoding 5-10% of a save faster
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None},
                pil_kwargs={"compress_level": 1})
    return write_atomic(path, buf.getvalue())


def annotate_heatmap(ax, matrix, fmt="{:.3f}", threshold=None):
    """Write each cell's value on a heatmap drawn with ax.imshow(matrix), white on dark cells."""
    threshold = (matrix.max() + matrix.min()) / 2 if threshold is None else threshold
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            color = "white" if value > threshold else "black"
            ax.text(j, i, fmt.format(value), ha="center", va="center", color=color, fontsize=9)


def annotate_cells(ax, matrix, fmt="{:.2f}", threshold=0.5, fontsize=7):
    """annotate_heatmap's numbers, drawn as glyph outlines in one collection: one draw call
    for every cell instead of one text each (the 12-head grid's 300 numbers were 40% of its
    draw time; as outlines it draws in ~60% of the time, the same numbers in the same places).

    The strings shown stay readable from the figure: `collection.cell_texts`, row by row.
    Example: annotate_cells(ax, [[0.25, 0.75]]).cell_texts -> ['0.25', '0.75'].
    """
    from matplotlib.collections import PathCollection
    from matplotlib.font_manager import FontProperties
    from matplotlib.transforms import Affine2D

    prop = FontProperties(size=fontsize)
    texts, offsets, colors = [], [], []
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            texts.append(fmt.format(value))
            offsets.append((j, i))  # the cell's centre, in data coordinates
            colors.append("white" if value > threshold else "black")
    cells = PathCollection([centred_glyphs(text, prop) for text in texts], offsets=offsets,
                           offset_transform=ax.transData, facecolors=colors, edgecolors="none",
                           transform=Affine2D().scale(1 / 72) + ax.figure.dpi_scale_trans)
    cells.cell_texts = texts
    ax.add_collection(cells, autolim=False)
    return cells


@functools.lru_cache(maxsize=512)
def centred_glyphs(text, prop):  # str, FontProperties -> Path in points, centred on (0, 0)
    """The box is that of the outline's points (its closing points, all at (0, 0), left out):
    a glyph's curves never leave their control points, and the font's outlines have a point
    at every extreme, so it is the exact extent (Path.get_extents, which solves each curve
    for its extremes, gives the same box and took 80% of a 300-number figure's time)."""
    from matplotlib.path import Path
    from matplotlib.textpath import TextPath

    path = TextPath((0, 0), text, prop=prop)
    points = path.vertices[path.codes != Path.CLOSEPOLY]  # [n, 2]
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    return Path(path.vertices - centre, path.codes)
