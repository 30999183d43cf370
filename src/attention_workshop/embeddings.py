"""The toy embedding table: every word is a row on four named axes.

The four lesson rows (the, river, money, bank) never change; the other rows
exist so learners can explore more sentences about the same two topics.
"""

import numpy as np

AXES = ("water", "money", "place", "filler")

SENT_RIVER = "the river bank"
SENT_MONEY = "the money bank"

# word -> (water, money, place, filler)
_ROWS = {
    # the four lesson rows
    "the": (0.0, 0.0, 0.0, 1.0),
    "river": (0.9, 0.0, 0.3, 0.0),
    "money": (0.0, 0.9, 0.1, 0.0),
    "bank": (0.3, 0.3, 0.9, 0.0),
    # exploration rows: more water words, money words, places and filler. Each leans on its
    # topic axis and carries enough of a second one that, in every sentence over these words,
    # a word's dot product with itself beats its dot product with any other word by at least
    # 0.02 (Module 1's "itself, always"; tests/test_embeddings.py checks every pair). So only
    # "the" is pure filler: a shorter pure-filler row would score higher against "the" than
    # against itself; the other filler words fan out from "the" toward place.
    "water": (0.95, 0.0, 0.0, 0.0),
    "stream": (0.85, 0.4, 0.0, 0.0),  # a stream of money, too
    "lake": (0.8, 0.0, 0.5, 0.0),
    "fish": (0.7, 0.2, 0.6, 0.0),
    "boat": (0.8, 0.45, 0.3, 0.0),
    "shore": (0.5, 0.0, 0.8, 0.0),
    "cash": (0.35, 0.85, 0.0, 0.0),  # liquid money
    "loan": (0.0, 0.85, 0.35, 0.0),
    "deposit": (0.5, 0.7, 0.3, 0.0),  # a river deposits silt, a bank takes deposits
    "account": (0.0, 0.7, 0.6, 0.0),
    "office": (0.0, 0.3, 0.95, 0.0),
    "a": (0.0, 0.0, 0.25, 0.97),
    "of": (0.0, 0.0, 0.49, 0.87),
    "by": (0.0, 0.0, 0.69, 0.72),
    "at": (0.0, 0.0, 0.85, 0.53),
    "in": (0.0, 0.0, 0.95, 0.3),
}

LESSON_WORDS = ("the", "river", "money", "bank")

EMBED = {word: np.array(row) for word, row in _ROWS.items()}


def embed(sentence, table=None):  # str | list[str] -> [T, 4]
    """Stack one table row per word of `sentence` into a matrix X.

    Example: embed("the river bank") -> [[0, 0, 0, 1], [0.9, 0, 0.3, 0], [0.3, 0.3, 0.9, 0]]
    (3 words x 4 axes). `sentence` may be a string (split on spaces) or a list of words;
    `table` maps word -> row and defaults to EMBED. An unknown word raises KeyError.
    """
    table = EMBED if table is None else table
    words = tokenize(sentence)
    if not words:
        raise ValueError("the sentence is empty")
    return np.stack([np.asarray(table[w], dtype=float) for w in words])


def tokenize(sentence):  # str | list[str] -> list[str]
    """Split a sentence into lower-case words. Example: "The river  bank" -> [the, river, bank]."""
    if isinstance(sentence, str):
        return sentence.lower().split()
    return [w.lower() for w in sentence]
