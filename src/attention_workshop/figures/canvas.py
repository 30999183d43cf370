"""What every figure shares: one look, no screen, and an atomic save.

Figures are built on matplotlib.figure.Figure directly (no pyplot): nothing
global is registered, nothing needs closing, and drawing starts faster.
"""

import functools
import io

import matplotlib
from matplotlib.figure import Figure

from attention_workshop.figures import FORMATS
from attention_workshop.reading import printable
from attention_workshop.writing import write_atomic

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
    # (none of these figures puts any there): less drawing per titled axes (docs/benchmarks.md)
    "axes.titley": 1.0,
    # glyphs drawn from their outlines as they are, not first fitted to the pixel grid by
    # FreeType's autohinter: the same letters, less drawing time in every figure (the
    # Agg backend sizes and renders every glyph of every text on its own)
    "text.hinting": "no_hinting",
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


# the same bytes for the same figure: no dates, no version, ids from a fixed salt
METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None},
            "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}
VECTOR = {"svg.fonttype": "none",  # SVG text stays text (the reader's fonts draw it)
          "svg.hashsalt": "attention-workshop", "pdf.fonttype": 42}  # PDF: TrueType, searchable


def named(path, fmt):  # Path, "png" | "svg" | "pdf" -> the same name in that format
    """Example: named(Path("out/scaling.png"), "svg") -> Path("out/scaling.svg")."""
    return path.with_suffix(f".{fmt}")


def save(fig, path):  # Figure, Path | None -> Path | Figure
    """Render in memory, then write it atomically, in the format the file name ends with:
    .png (Agg), .svg (its text as text) or .pdf. With path None the figure itself is
    returned: a notebook shows it inline as the cell's last value."""
    if path is None:
        return fig
    fmt = path.suffix.removeprefix(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"a figure is saved as {', '.join(FORMATS)}, not {path.name!r}")
    buf = io.BytesIO()
    if fmt == "png":
        # zlib level 1: the same pixels, ~4% more bytes, the encoding 5-10% of a save faster
        fig.savefig(buf, format="png", dpi=DPI, metadata=METADATA["png"],
                    pil_kwargs={"compress_level": 1})
    else:
        from attention_workshop.figures.glyphs import as_text

        with matplotlib.rc_context(VECTOR):
            as_text(fig).savefig(buf, format=fmt, dpi=DPI, metadata=METADATA[fmt])
    return write_atomic(path, buf.getvalue())
