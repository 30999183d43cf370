"""The embedding table and the W_Q / W_K wiring explore runs on: built in, or the learner's own
TOML or JSON files.

Table file (TOML; JSON holds the same keys, {"axes": [...], "words": {...}}):

    axes = ["water", "money", "place", "filler"]   # optional: one name per column
    [words]
    the = [0.0, 0.0, 0.0, 1.0]
    lake = [0.8, 0.0, 0.5, 0.0]

Wiring file, one per matrix (rows = the table's axes, columns = channels):

    channels = ["topic", "place"]                  # optional: one name per column
    matrix = [[0.0, 0.0], [0.0, 0.0], [2.0, 0.0], [0.0, 1.5]]

A table file adds its words to the built-in 20 (a word already there gets the file's row);
with replace=True (`--replace-table`) the file's words are the whole table.

The file is read through attention_workshop.reading (a regular file, at most 4 MB, UTF-8,
shallow, every number finite); then every problem with its shape is one line in the same
wording, `cannot read table file 'FILE': ...; see docs/explore.md`.
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED
from attention_workshop.embeddings import AXES, EMBED
from attention_workshop.reading import printable, read_data, refuse

CHANNELS = ("topic", "place")  # the built-in wiring's two channels
HELP = "see docs/explore.md"


@dataclass(frozen=True)
class Table:
    """word -> row on the named axes. Example: Table({"the": [0, 0, 0, 1.0]}, ("water", ...))."""

    words: dict  # str -> [d_model]
    axes: tuple
    source: str = "built-in"
    added: tuple = ()  # words a file added to the built-in table
    replaced: tuple = ()  # built-in words whose row a file changed

    def __repr__(self):  # the sizes, not every row
        from attention_workshop.explore.short_repr import table_repr
        return table_repr(self)


@dataclass(frozen=True)
class Wiring:
    """One projection: rows are the table's axes, columns are channels ([d_model, d_k])."""

    matrix: np.ndarray  # [d_model, d_k]
    channels: tuple
    source: str = "built-in"


def builtin_table():
    return Table(dict(EMBED), AXES)


def builtin_wiring():  # -> (W_Q, W_K)
    return Wiring(W_Q_WIRED, CHANNELS), Wiring(W_K_WIRED, CHANNELS)


def load_table(path, replace=False):  # -> Table
    """Read a table file: its words added to the built-in table, or (replace=True) alone.

    Example: `[words] heron = [0.8, 0, 0.4, 0]` -> the built-in 20 words and heron.
    """
    what = "table file"
    doc = read_data(path, what, HELP)
    words = doc.get("words")
    if not isinstance(words, dict) or not words:
        raise refuse(what, path, "it needs a [words] section mapping each word to a list of "
                     "numbers, e.g. river = [0.9, 0.0, 0.3, 0.0]", HELP)
    rows = {}
    for word, values in words.items():
        key = word.lower()
        if key in rows:
            raise refuse(what, path, f"word '{printable(key, 40)}' appears twice (words are "
                         "lower-cased)", "keep one row per word")
        rows[key] = _row(values, what, path, f"word '{printable(word, 40)}'")
    width = _same_width(rows, what, path)
    axes = _names(doc.get("axes"), width, "axes", what, path)
    if replace:
        return Table(rows, axes, str(path))
    return _added_to_builtin(rows, axes, doc.get("axes") is not None, what, path)


def _added_to_builtin(rows, axes, named, what, path):  # -> Table
    """The built-in table with the file's rows added (or, for a word it has, in its place)."""
    width = len(next(iter(rows.values())))
    if width != len(AXES) or (named and tuple(axes) != AXES):
        have = f"axes {', '.join(axes)}" if named else f"{width} columns"
        raise refuse(what, path, f"its {have} are not the built-in table's "
                     f"({', '.join(AXES)}), so its words cannot join the built-in ones",
                     "add --replace-table to use your table alone")
    words = dict(EMBED) | rows
    return Table(words, AXES, f"built-in + {path}",
                 added=tuple(w for w in rows if w not in EMBED),
                 replaced=tuple(w for w in rows if w in EMBED))


def load_wiring(path, name):  # name: "W_Q" | "W_K" | "W_V" -> Wiring
    """Read one wiring matrix. Example: `matrix = [[1.0], [0.0]]` -> 2 axes x 1 channel."""
    what = f"{name} file"
    doc = read_data(path, what, HELP)
    matrix = doc.get("matrix")
    if not isinstance(matrix, list) or not matrix:
        raise refuse(what, path, "it needs matrix = [[...], ...] with one row per embedding "
                     "axis and one column per channel", HELP)
    rows = {str(i + 1): _row(r, what, path, f"matrix row {i + 1}") for i, r in enumerate(matrix)}
    width = _same_width(rows, what, path, noun="row")
    channels = _names(doc.get("channels"), width, "channels", what, path)
    return Wiring(np.array(list(rows.values())), channels, str(path))


def _row(values, what, path, name):  # -> [n] floats (reading.py has checked they are finite)
    if not isinstance(values, list) or not values:
        raise refuse(what, path, f"{name} must be a non-empty list of numbers",
                     "write it like [0.9, 0.0, 0.3]")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise refuse(what, path, f"{name} holds {printable(repr(v), 40)}, which is not a "
                         "number", "use plain numbers")
    return np.array(values, dtype=float)


def _same_width(rows, what, path, noun="word"):  # dict[str, [n]] -> n
    (first, row0), *rest = rows.items()
    for name, row in rest:
        if len(row) != len(row0):
            raise refuse(what, path, f"{noun} '{printable(name, 40)}' has {len(row)} numbers but "
                         f"'{printable(first, 40)}' has {len(row0)}",
                         f"give every {noun} the same number")
    return len(row0)


def _names(names, width, key, what, path):  # -> tuple of `width` names
    if names is None:
        stem = "axis" if key == "axes" else "channel"
        return AXES if key == "axes" and width == len(AXES) else tuple(
            f"{stem}{i + 1}" for i in range(width))
    if (not isinstance(names, list) or len(names) != width
            or not all(isinstance(n, str) and n for n in names)):
        raise refuse(what, path, f"{key} must list {width} names, one per column", HELP)
    return tuple(names)
