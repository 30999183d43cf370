"""The explorer page: one offline HTML file where the learner builds a sentence, moves W_Q, W_K
and W_V, and watches attention change; [S5] and a real model's heads beside them.

`data.py` gathers the engine's numbers, `page.py` inlines them with the template, the style and
the scripts (package data in this folder: engine.js holds the attention math, tested equal to
the Python engine in a real browser).
"""

from pathlib import Path

from attention_workshop.figures.explorer.data import explorer_data, real_data
from attention_workshop.figures.explorer.page import explorer_html

__all__ = ["explorer_data", "explorer_html", "real_data", "write_explorer"]

FILENAME = "explorer.html"


def write_explorer(folder, data):  # Path, dict -> Path
    from attention_workshop.files import write_atomic

    return write_atomic(Path(folder) / FILENAME, explorer_html(data))
