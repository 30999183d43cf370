"""A learner's own embedding table or W_Q / W_K wiring, read from a TOML or JSON file.

Table file (TOML; JSON holds the same keys, {"axes": [...], "words": {...}}):

    axes = ["water", "money", "place", "filler"]   # optional: one name per column
    [words]
    the = [0.0, 0.0, 0.0, 1.0]
    lake = [0.8, 0.0, 0.5, 0.0]

Wiring file, one per matrix (rows = the table's axes, columns = channels):

    channels = ["topic", "place"]                  # optional: one name per column
    matrix = [[0.0, 0.0], [0.0, 0.0], [2.0, 0.0], [0.0, 1.5]]

Every number must be finite; every problem becomes one WorkshopError line that
names the file, what is wrong, and what to do (docs/explore.md has examples).
"""

import json
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED
from attention_workshop.embeddings import AXES, EMBED
from attention_workshop.errors import WorkshopError

CHANNELS = ("topic", "place")  # the built-in wiring's two channels
HELP = "see docs/explore.md"


@dataclass(frozen=True)
class Table:
    """word -> row on the named axes. Example: Table({"the": [0, 0, 0, 1.0]}, ("water", ...))."""

    words: dict  # str -> [d_model]
    axes: tuple
    source: str = "built-in"


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


def read_document(path, what):  # str | Path -> dict
    """Parse a .toml or .json file into a dict, or raise one WorkshopError line."""
    path = Path(path)
    where = f"{what} file '{path}'"
    if path.suffix.lower() not in (".toml", ".json"):
        raise WorkshopError(f"{where}: name it *.toml or *.json so its format is known; {HELP}")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise WorkshopError(f"{where} does not exist; check the path") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise WorkshopError(f"{where} cannot be read ({reason}); check the path") from None
    try:
        doc = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        kind = path.suffix.lower().lstrip(".").upper()
        raise WorkshopError(f"{where} is not valid {kind} ({_one_line(exc)}); {HELP}") from None
    if not isinstance(doc, dict):
        raise WorkshopError(f"{where}: expected a table of keys at the top; {HELP}")
    return doc


def load_table(path):  # -> Table
    """Read a table file. Example: `[words] the = [0, 0, 0, 1]` -> Table with axes axis1..axis4."""
    doc = read_document(path, "table")
    where = f"table file '{path}'"
    words = doc.get("words")
    if not isinstance(words, dict) or not words:
        raise WorkshopError(f"{where}: needs a [words] section mapping each word to a list of "
                            f"numbers, e.g. river = [0.9, 0.0, 0.3, 0.0]; {HELP}")
    rows = {}
    for word, values in words.items():
        key = word.lower()
        if key in rows:
            raise WorkshopError(f"{where}: word '{key}' appears twice (words are lower-cased); "
                                "keep one row per word")
        rows[key] = _row(values, f"{where}: word '{word}'")
    width = _same_width(rows, where)
    axes = _names(doc.get("axes"), width, "axes", where)
    return Table(rows, axes, str(path))


def load_wiring(path, what):  # what: "W_Q" | "W_K" -> Wiring
    """Read one wiring matrix. Example: `matrix = [[1.0], [0.0]]` -> 2 axes x 1 channel."""
    doc = read_document(path, what)
    where = f"{what} file '{path}'"
    matrix = doc.get("matrix")
    if not isinstance(matrix, list) or not matrix:
        raise WorkshopError(f"{where}: needs matrix = [[...], ...] with one row per embedding "
                            f"axis and one column per channel; {HELP}")
    rows = {str(i + 1): _row(r, f"{where}: matrix row {i + 1}") for i, r in enumerate(matrix)}
    width = _same_width(rows, where, noun="row")
    channels = _names(doc.get("channels"), width, "channels", where)
    return Wiring(np.array(list(rows.values())), channels, str(path))


def _row(values, where):  # -> [n] finite floats
    if not isinstance(values, list) or not values:
        raise WorkshopError(f"{where} must be a non-empty list of numbers, e.g. [0.9, 0.0, 0.3]")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise WorkshopError(f"{where} holds {v!r}, which is not a number; use plain numbers")
        if not math.isfinite(v):
            raise WorkshopError(f"{where} holds {v}; every number must be finite (no NaN or inf)")
    return np.array(values, dtype=float)


def _same_width(rows, where, noun="word"):  # dict[str, [n]] -> n
    (first, row0), *rest = rows.items()
    for name, row in rest:
        if len(row) != len(row0):
            raise WorkshopError(f"{where}: {noun} '{name}' has {len(row)} numbers but '{first}' "
                                f"has {len(row0)}; give every {noun} the same number")
    return len(row0)


def _names(names, width, key, where):  # -> tuple of `width` names
    if names is None:
        stem = "axis" if key == "axes" else "channel"
        return AXES if key == "axes" and width == len(AXES) else tuple(
            f"{stem}{i + 1}" for i in range(width))
    if (not isinstance(names, list) or len(names) != width
            or not all(isinstance(n, str) and n for n in names)):
        raise WorkshopError(f"{where}: {key} must list {width} names, one per column")
    return tuple(names)


def _one_line(exc):
    return " ".join(str(exc).split())
