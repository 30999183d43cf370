"""What every figure shares: the Agg backend, one look, and an atomic save.

Import this module (not matplotlib.pyplot directly) so the backend is set before pyplot loads.
"""

import io

import matplotlib

matplotlib.use("Agg")  # files only, no screen

import matplotlib.pyplot as plt  # noqa: E402

from attention_workshop.files import write_atomic  # noqa: E402

DPI = 110
STYLE = {
    "font.size": 10,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.hashsalt": "attention-workshop",
}


def new_figure(width, height, **subplots):
    """A figure and its axes with the workshop's look. Example: fig, ax = new_figure(6, 4)."""
    with plt.rc_context(STYLE):
        return plt.subplots(figsize=(width, height), **subplots)


def save(fig, path):  # Figure, Path -> Path
    """Render to PNG in memory, write it atomically, close the figure."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return write_atomic(path, buf.getvalue())


def annotate_heatmap(ax, matrix, fmt="{:.3f}", threshold=None):
    """Write each cell's value on a heatmap drawn with ax.imshow(matrix), white on dark cells."""
    threshold = (matrix.max() + matrix.min()) / 2 if threshold is None else threshold
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            color = "white" if value > threshold else "black"
            ax.text(j, i, fmt.format(value), ha="center", va="center", color=color, fontsize=9)
