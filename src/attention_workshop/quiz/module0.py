"""Module 0's quiz: the table, the dot product as a similarity meter, softmax.

Every answer is one Module 0 measured for results.log (modules/module0.py).
"""

import numpy as np

from attention_workshop.embeddings import EMBED, SENT_MONEY, SENT_RIVER
from attention_workshop.modules import module0
from attention_workshop.quiz.question import Question, choice
from attention_workshop.report import fmt_list


def _terms(a, b):
    """Example: _terms([0.3, 0.9], [0.9, 0.3]) -> '0.3 x 0.9 + 0.9 x 0.3'."""
    return " + ".join(f"{x:.1f} x {y:.1f}" for x, y in zip(a, b, strict=True))


def questions(results):  # {Result class: Result} -> [Question]
    m0 = results[module0.Result]
    bank, river = EMBED["bank"], EMBED["river"]
    scores, weights, sharp, shifted = m0.scores, m0.weights, m0.sharp, m0.shifted
    diagonals = m0.diagonals
    others = {w: dot for w, dot in m0.bank_dots.items() if w != "bank"}
    closest = max(others, key=others.get)

    return [
        Question(
            f"The similarity meter: what is the dot product of bank's row {fmt_list(bank, 1)} "
            f"and river's row {fmt_list(river, 1)}?",
            float(m0.bank_dots["river"]),
            f"Multiply slot by slot and add: {_terms(bank, river)} = {m0.bank_dots['river']:.3f}. "
            "The two rows agree on water and on place; nothing else overlaps."),
        Question(
            f'In "{SENT_RIVER}" bank\'s scores against the, river, bank are {fmt_list(scores)}. '
            "After softmax, what share does bank give itself?",
            float(weights[2]),
            f"softmax exponentiates and divides by the total: e^{scores[2]:.2f} / "
            f"(e^{scores[0]:.2f} + e^{scores[1]:.2f} + e^{scores[2]:.2f}) = {weights[2]:.3f}. "
            f"All three shares: {fmt_list(weights)}, which sum to {weights.sum():.3f}."),
        choice(
            "In every row of the raw score table X @ X.T for both lesson sentences, the "
            "largest score is the word's own score with itself (the diagonal). Why?",
            ["softmax always gives the diagonal the largest share",
             "x_i . x_i is a sum of squares: each of the word's own numbers meets itself, so "
             "every term adds; another row only beats it by being longer and pointing the "
             "same way",
             "every row of the table has length exactly 1",
             "dot products are symmetric, so the diagonal must be largest"],
            1 if m0.self_match else 0,
            "bank . bank = " + " + ".join(f"{v:.1f}^2" for v in bank)
            + f" = {m0.bank_dots['bank']:.3f}, "
            f"more than its score with {closest} ({others[closest]:.3f}), its best other "
            f"match. Diagonals: {fmt_list(diagonals[SENT_RIVER])} and "
            f"{fmt_list(diagonals[SENT_MONEY])}. The scores are fixed before softmax runs, the "
            f"rows are not unit length (river's is {np.linalg.norm(river):.3f}), and symmetry says "
            "nothing about which entry is largest."),
        Question(
            f"'the' scores {scores[0]:.3f} against bank (nothing in common). What share of "
            f"bank's attention does softmax still give it, from the scores {fmt_list(scores)}?",
            float(weights[0]),
            f"e^0 = 1, not 0: a zero score still gets 1 / (1 + e^{scores[1]:.2f} + "
            f"e^{scores[2]:.2f}) = {weights[0]:.3f} of the shares. Softmax never hands out an "
            "exact zero."),
        Question(
            f"Multiply bank's scores {fmt_list(scores)} by {module0.SHARPEN:.0f} before softmax. "
            "What becomes its largest share?",
            float(sharp.max()),
            f"softmax({fmt_list(module0.SHARPEN * scores)}) = {fmt_list(sharp)}: the top share "
            f"goes from {weights.max():.3f} to {sharp.max():.3f}. Bigger gaps between scores make "
            "softmax sharper."),
        choice(
            f"Add 10 to each of bank's scores {fmt_list(scores)} before softmax. What happens "
            "to the three shares?",
            ["every share grows", "nothing: the shares stay the same",
             "the top share grows toward 1", "the shares no longer sum to 1"],
            2 if m0.shift_changes else 1,
            f"softmax({fmt_list(scores + 10)}) = {fmt_list(shifted)}, the same as before: "
            "e^(s + 10) = e^10 x e^s, and the common factor e^10 cancels when dividing by the "
            "total. Only differences between scores matter."),
    ]
