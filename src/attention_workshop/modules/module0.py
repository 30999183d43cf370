"""Module 0: the embedding table, the dot product as a similarity meter, and softmax.

Writes log lines 1-26; its measurements are the ones Modules 1 and 2 lean on.
"""

import numpy as np

from attention_workshop.attention import softmax
from attention_workshop.embeddings import AXES, EMBED, LESSON_WORDS, SENT_MONEY, SENT_RIVER, embed
from attention_workshop.report import fmt_list, matrix_lines

SHARPEN = 5.0  # the "x 5" demo: how much sharper softmax gets when scores grow


def run(log):
    """Log Module 0's facts; return bank's scores and weights for the figures."""
    log.section(1, "Module 0: the embedding table (one fixed row per word)")
    log(f"  axes: {', '.join(AXES)}")
    rows = [EMBED[w] for w in LESSON_WORDS]
    log.extend(matrix_lines(LESSON_WORDS, AXES, rows))
    bank = EMBED["bank"]
    log(f"  lookup asks only 'which word?': bank's row is {fmt_list(bank, 1)} in every sentence")

    log.section(2, "Module 0: the dot product as a similarity meter, then softmax")
    log("  dot products of bank's row with each row (bigger = more alike):")
    for word in LESSON_WORDS:
        log(f"    bank . {word:<5} = {bank @ EMBED[word]:.3f}")
    squares = " + ".join(f"{v:.1f}^2" for v in bank)
    log(f"  self-match is a sum of squares: bank . bank = {squares} = {bank @ bank:.3f}")

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
    for sentence in (SENT_RIVER, SENT_MONEY):
        S = embed(sentence) @ embed(sentence).T  # [T, T]
        own = bool((S.argmax(axis=1) == np.arange(len(S))).all())
        log(f"    \"{sentence}\": {own} (diagonal {fmt_list(np.diag(S))})")
    return {"bank_scores": scores, "bank_weights": weights, "bank_sharp": sharp}
