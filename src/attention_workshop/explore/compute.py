"""explore's computation: the raw head and the wired head on the same input, number for number.

The raw head is Module 1's `simple_attention` (scores X @ X.T); the wired head is
Module 2's `wired_attention` (scores Q @ K.T, divided by sqrt(d_k)). Both blend
the raw rows of X, so their outputs sit on the table's named axes. Options (the explorer
page's switches) change the wired head only: no division, a causal mask, a W_V.
"""

import difflib
import string
from dataclasses import dataclass

import numpy as np

from attention_workshop.attention import causal_mask, scaled_dot_product_attention, simple_attention
from attention_workshop.embeddings import tokenize
from attention_workshop.errors import WorkshopError
from attention_workshop.explore.tables import builtin_table, builtin_wiring
from attention_workshop.reading import printable
from attention_workshop.sentences import check_sentence

MAX_WORDS = 50  # a 50 x 50 table is already wider than any screen; 5,000 words would take minutes


@dataclass(frozen=True)
class Options:
    """The wired head's switches; the defaults are Module 2's head (wired_attention)."""

    scale: bool = True  # divide the scores by sqrt(d_k)
    causal: bool = False  # each word sees only itself and the words before it
    w_v: object = None  # a tables.Wiring [d_model, d_model]; None: the identity, values = X


@dataclass(frozen=True)
class Exploration:
    """Everything `explore` prints: the inputs, then each head's numbers."""

    tokens: list  # T words
    X: np.ndarray  # [T, d_model]
    raw: dict  # scores, weights [T, T]; outputs [T, d_model]
    wired: dict  # queries, keys [T, d_k]; values [T, d_model]; scores, weights [T, T]; outputs
    axes: tuple
    channels: tuple
    sources: tuple = ("built-in", "built-in", "built-in")  # table, W_Q, W_K
    options: Options = Options()
    typed: str = ""  # the sentence as given, before capitals and punctuation were dropped
    w_k: np.ndarray | None = None  # [d_model, d_k] the wiring the keys came from
    table: object = None  # the Table the rows came from (tables.Table)

    def _repr_html_(self):  # a notebook shows tables
        from attention_workshop.notebook_html import exploration_html
        return exploration_html(self)

    def text(self, word=None):  # -> what `explore SENTENCE [--word WORD]` prints
        from attention_workshop.explore.views import render
        return render("text", self, word)

    def __repr__(self):  # a prompt shows the sizes and a few numbers, not every array
        from attention_workshop.explore.short_repr import exploration_repr
        return exploration_repr(self)


def words_of(sentence, table):  # str, Table -> list[str]
    """Lower-case words; punctuation around a word is dropped unless the table holds the word
    with it. Example: words_of("The River, bank.", builtin_table()) -> [the, river, bank]."""
    words = []
    for word in tokenize(sentence):
        if word not in table.words:
            word = word.strip(string.punctuation)
        if word:
            words.append(word)
    return words


def lookup(sentence, table):  # str, Table -> (list[str], [T, d_model])
    """Split the sentence and stack its rows, or raise one WorkshopError line.

    Example: lookup("The river bank.", builtin_table()) -> (["the", "river", "bank"], X [3, 4]).
    """
    check_sentence(sentence)
    tokens = words_of(sentence, table)
    if not tokens:
        raise WorkshopError('the sentence is empty; give some words, e.g. "the river bank"')
    if len(tokens) > MAX_WORDS:
        raise WorkshopError(f"the sentence has {len(tokens)} words; explore reads at most "
                            f"{MAX_WORDS}: shorten it")
    unknown = [w for w in dict.fromkeys(tokens) if w not in table.words]
    if unknown:
        raise WorkshopError(_unknown_words(unknown, table))
    return tokens, np.stack([table.words[w] for w in tokens])


def _unknown_words(unknown, table):
    """Example: "'lak' is not in the built-in table (closest: lake, bank); pick a known word..."."""
    known = sorted(table.words)
    parts = []
    for word in unknown:
        close = difflib.get_close_matches(word, known, n=3)
        shown = printable(word, 40)  # a word may hold escape codes or run for a page
        parts.append(f"'{shown}' (closest: {', '.join(close)})" if close else f"'{shown}'")
    verb = "is" if len(unknown) == 1 else "are"
    where = "built-in table" if table.source == "built-in" else f"table '{table.source}'"
    listing = "" if "closest" in " ".join(parts) else f"; known words: {_some(known)}"
    return (f"{', '.join(parts)} {verb} not in the {where}{listing}; use known words "
            "or add rows with --table FILE (see docs/explore.md)")


def _some(words, limit=30):
    return ", ".join(words[:limit]) + (", ..." if len(words) > limit else "")


def check_wiring(width, w_q, w_k, w_v=None):
    """W_Q and W_K need one row per table axis and the same number of channels; W_V (if any)
    maps the axes to themselves, width x width, so outputs stay on the named axes."""
    for w, name in ((w_q, "W_Q"), (w_k, "W_K")):
        rows = w.matrix.shape[0]
        if rows != width:
            hint = "give --wq and --wk files" if w.source == "built-in" else "one row per axis"
            raise WorkshopError(f"{name} ({w.source}) has {rows} rows but the table has {width} "
                                f"axes; {hint} (see docs/explore.md)")
    if w_q.matrix.shape[1] != w_k.matrix.shape[1]:
        raise WorkshopError(f"W_Q has {w_q.matrix.shape[1]} channels but W_K has "
                            f"{w_k.matrix.shape[1]}; queries and keys need the same width d_k")
    if w_v is not None and w_v.matrix.shape != (width, width):
        rows, cols = w_v.matrix.shape
        raise WorkshopError(f"W_V ({w_v.source}) is {rows} x {cols} but the table has {width} "
                            f"axes; W_V maps the axes to themselves: give {width} rows of "
                            f"{width} numbers (see docs/explore.md)")


def wired_head(X, w_q, w_k, options):  # [T, d_model], [d_model, d_k] x2, Options -> dict
    """Module 2's head, with the options. Q = X W_Q, K = X W_K, V = X W_V (X itself while
    W_V is the identity); weights = softmax(Q K^T / sqrt(d_k)), masked if causal.

    Example: "the river bank" with scale=False: bank's scores [0, 1.62, 1.08] go into softmax
    undivided -> [0.111, 0.562, 0.327], against [0.159, 0.500, 0.341] divided by sqrt(2).
    """
    Q, K = X @ w_q, X @ w_k  # [T, d_k] each
    V = X if options.w_v is None else X @ options.w_v.matrix  # [T, d_model]
    mask = causal_mask(len(X)) if options.causal else None  # [T, T]
    # Undivided: the formula divides q by sqrt(d_k), so hand it q * sqrt(d_k) (exact to an ulp).
    q = Q if options.scale else Q * np.sqrt(Q.shape[1])
    outputs, weights = scaled_dot_product_attention(q, K, V, mask)
    return {"queries": Q, "keys": K, "values": V, "scores": Q @ K.T, "weights": weights,
            "outputs": outputs}


def explore(sentence, table=None, w_q=None, w_k=None, options=None):  # -> Exploration
    """Run both heads on one sentence (`options`: the wired head's switches, see Options).

    Example: explore("the river bank").wired["weights"][2] -> [0.159, 0.500, 0.341] (rounded),
    against the raw head's [0.185, 0.317, 0.498].
    """
    table = table or builtin_table()
    default_q, default_k = builtin_wiring()
    w_q, w_k = w_q or default_q, w_k or default_k
    options = options or Options()
    tokens, X = lookup(sentence, table)  # [T, d_model]
    check_wiring(X.shape[1], w_q, w_k, options.w_v)
    with np.errstate(over="ignore", invalid="ignore"):
        raw_out, raw_w = simple_attention(X)
        raw = {"scores": X @ X.T, "weights": raw_w, "outputs": raw_out}
        wired = wired_head(X, w_q.matrix, w_k.matrix, options)
    if not all(np.isfinite(a).all() for a in (*raw.values(), *wired.values())):
        raise WorkshopError("the numbers are too large to score (a dot product overflowed); "
                            "use table and wiring entries of a sensible size, e.g. within +-1000")
    channels = w_q.channels if w_q.source != "built-in" else w_k.channels
    sources = (table.source, w_q.source, w_k.source)
    return Exploration(tokens, X, raw, wired, table.axes, channels, sources, options,
                       typed=sentence, w_k=w_k.matrix, table=table)


def positions(tokens, word):  # -> list[int]
    """Where `word` occurs. Example: positions(["the", "bank", "by", "the"], "The") -> [0, 3]."""
    wanted = {word.lower(), word.lower().strip(string.punctuation)}
    found = [i for i, t in enumerate(tokens) if t in wanted]
    if not found:
        raise WorkshopError(f"--word '{printable(word, 40)}' is not in the sentence; choose "
                            f"one of: {', '.join(dict.fromkeys(tokens))}")
    return found


def ingredients(ex, head):  # Exploration, "raw" | "wired" -> [T, d_model], the rows it blends
    """The raw head blends the rows of X; the wired head its values V (X itself by default)."""
    return ex.X if head == "raw" else ex.wired["values"]


def slow_motion(recipe, X):  # [T], [T, d_model] -> ([T, d_model], [d_model])
    """One word's blend, term by term: each ingredient row scaled by its weight, then the sum.

    Example: recipe [0.185, 0.317, 0.498] over the, river, bank: river's row [0.9, 0, 0.3, 0]
    scales to [0.285, 0, 0.095, 0]; the column sums are bank's output [0.435, 0.149, 0.543, 0.185].
    """
    scaled = np.asarray(recipe)[:, None] * X  # [T, d_model]
    return scaled, scaled.sum(axis=0)
