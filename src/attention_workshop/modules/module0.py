"""Module 0: the embedding table, the dot product as a similarity meter, and softmax.

Writes log lines 1-26; its measurements are the ones Modules 1 and 2 lean on.
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.attention import softmax
from attention_workshop.embeddings import AXES, EMBED, LESSON_WORDS, SENT_MONEY, SENT_RIVER, embed
from attention_workshop.report import fmt_list, matrix_lines

TITLE = "Module 0: the embedding table, the dot product, softmax"
SHARPEN = 5.0  # the "x 5" demo: how much sharper softmax gets when scores grow


@dataclass(frozen=True)
class Result:
    """Bank's row against the table, and softmax on bank's scores in "the river bank"."""

    bank_dots: dict  # word -> bank's row . the word's row, for the, river, money, bank
    scores: np.ndarray  # [3] bank's scores against the, river, bank
    weights: np.ndarray  # [3] softmax(scores): [0.185, 0.317, 0.498]
    sharp: np.ndarray  # [3] softmax(SHARPEN * scores), the "x 5" demo
    shifted: np.ndarray  # [3] softmax(scores + 10)
    shift_changes: bool  # does adding 10 change softmax? (False: only differences matter)
    diagonals: dict  # sentence -> [3] the diagonal of its raw score matrix X @ X.T
    self_match: bool  # in both sentences, every raw score row peaks on its diagonal


def run(log, earlier):
    """Log Module 0's facts (it reads no earlier module); return them for the quiz."""
    log.section(1, "Module 0: the embedding table (one fixed row per word)")
    log(f"  axes: {', '.join(AXES)}")
    rows = [EMBED[w] for w in LESSON_WORDS]
    log.extend(matrix_lines(LESSON_WORDS, AXES, rows))
    bank = EMBED["bank"]
    log(f"  lookup asks only 'which word?': bank's row is {fmt_list(bank, 1)} in every sentence")

    log.section(2, "Module 0: the dot product as a similarity meter, then softmax")
    log("  dot products of bank's row with each row (bigger = more alike):")
    bank_dots = {word: bank @ EMBED[word] for word in LESSON_WORDS}
    for word, dot in bank_dots.items():
        log(f"    bank . {word:<5} = {dot:.3f}")
    squares = " + ".join(f"{v:.1f}^2" for v in bank)
    log(f"  self-match is a sum of squares: bank . bank = {squares} = {bank_dots['bank']:.3f}")

    for sentence in (SENT_MONEY, SENT_RIVER):  # the river sentence last: the demo below uses it
        X = embed(sentence)  # [3, 4]
        scores = X[2] @ X.T  # bank's scores against the sentence's three words
        weights = softmax(scores)
        words = ", ".join(sentence.split())
        log(f"  bank's scores in \"{sentence}\" ({words}): {fmt_list(scores)}")
        log(f"    softmax -> {fmt_list(weights)}  (sum = {weights.sum():.3f})")
    sharp = softmax(SHARPEN * scores)
    log(f"  x 5 demo: softmax({fmt_list(SHARPEN * scores)}) -> {fmt_list(sharp)}")
    log(f"    top share {weights.max():.3f} -> {sharp.max():.3f}: bigger scores, sharper softmax")
    shifted = softmax(scores + 10.0)
    same = bool(np.allclose(shifted, weights, rtol=0, atol=1e-15))
    log(f"  adding 10 to every score changes softmax? {not same} (only differences matter)")
    huge = softmax(scores * 1e4)
    log(f"  scores x 10000 stay finite after softmax? {bool(np.isfinite(huge).all())}")

    log("  self-match fact: in each raw score row, is the word's own score the largest?")
    diagonals, own = {}, {}
    for sentence in (SENT_RIVER, SENT_MONEY):
        S = embed(sentence) @ embed(sentence).T  # [T, T]
        own[sentence] = bool((S.argmax(axis=1) == np.arange(len(S))).all())
        diagonals[sentence] = np.diag(S)  # [T]
        log(f"    \"{sentence}\": {own[sentence]} (diagonal {fmt_list(diagonals[sentence])})")
    return Result(bank_dots=bank_dots, scores=scores, weights=weights, sharp=sharp,
                  shifted=shifted, shift_changes=not same, diagonals=diagonals,
                  self_match=all(own.values()))
