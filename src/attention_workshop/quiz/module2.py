"""Module 2's quiz: queries and keys wired by hand, and why scores are divided by sqrt(d_k).

Every answer is one Module 2 measured for results.log (modules/module2.py), beside
Module 1's raw numbers.
"""

import numpy as np

from attention_workshop.attention import W_Q_WIRED
from attention_workshop.embeddings import AXES, SENT_RIVER, tokenize
from attention_workshop.modules import module1, module2
from attention_workshop.quiz.by_hand import added_up, products_text, terms
from attention_workshop.quiz.question import Question, choice
from attention_workshop.report import fmt_list


def questions(results):  # {Result class: Result} -> [Question]
    m1, m2 = results[module1.Result], results[module2.Result]
    X = m1.X_river  # [3, 4]
    words = tokenize(SENT_RIVER)
    Q, K, out, weights, scores = m2.Q, m2.K, m2.outputs, m2.weights, m2.scores
    raw_out = m1.outputs_river  # [3, 4]
    water_terms = terms(weights[2], X[:, 0])  # by hand: printed shares x printed rows
    d_k = K.shape[1]
    place, water = AXES.index("place"), AXES.index("water")
    dims, unscaled, flat = m2.scaling.dims, m2.scaling.unscaled, m2.scaling.scaled

    return [
        Question(
            f"Bank's row is {fmt_list(X[2], 1)}. Through W_Q_WIRED, what is its query on the "
            "topic channel (the first of its two numbers)?",
            float(Q[2, 0]),
            f"Only place-ness asks for topic, with gain {W_Q_WIRED[place, 0]:.1f}: "
            f"{X[2, place]:.1f} x {W_Q_WIRED[place, 0]:.1f} = {Q[2, 0]:.2f}. Bank's query is "
            f"{fmt_list(Q[2], 2)}: it asks loudly for topic words.",
            decimals=2),
        Question(
            f"River's row is {fmt_list(X[1], 1)}. Through W_K_WIRED, what is its key on the "
            "topic channel?",
            float(K[1, 0]),
            f"Water-ness and money-ness both advertise topic with weight 1: "
            f"{X[1, 0]:.1f} + {X[1, 1]:.1f} = {K[1, 0]:.2f}. River's whole key is "
            f"{fmt_list(K[1], 2)} (its place-ness advertises on the place channel).",
            decimals=2),
        Question(
            f"Bank's query is {fmt_list(Q[2], 2)} and river's key is {fmt_list(K[1], 2)}. "
            "What is the score bank -> river in Q @ K.T (before dividing by anything)?",
            float(scores[2, 1]),
            f"{Q[2, 0]:.2f} x {K[1, 0]:.2f} + {Q[2, 1]:.2f} x {K[1, 1]:.2f} = "
            f"{scores[2, 1]:.3f}, bank's largest score; its score with itself is only "
            f"{scores[2, 2]:.3f}."),
        choice(
            f'Under the wired head, is the score table for "{SENT_RIVER}" symmetric '
            "(river -> bank equal to bank -> river)?",
            ["yes, as in Module 1", "no: asking and advertising now differ"],
            0 if np.array_equal(scores, scores.T) else 1,
            f"No: bank -> river = {scores[2, 1]:.3f} but river -> bank = {scores[1, 2]:.3f}. "
            "The query comes from W_Q and the key from W_K, so q_i . k_j need not equal "
            "q_j . k_i."),
        Question(
            f"Bank's wired scores are {fmt_list(scores[2])}. Divide by sqrt({d_k}) and "
            "softmax: what share does bank now take from river?",
            float(weights[2, 1]),
            f"softmax({fmt_list(scores[2] / np.sqrt(d_k))}) = {fmt_list(weights[2])}: "
            f"{words[int(weights[2].argmax())]} now gets bank's largest share, "
            f"{weights[2].max():.3f}."),
        Question(
            f"With the wired recipe {fmt_list(weights[2])} over {', '.join(words)}, what is "
            "the water value of bank's output?",
            float(out[2, water]),
            f"Slow motion, water column: {products_text(water_terms[1:], ['river', 'bank'])}; "
            f"{added_up(water_terms, out[2, water])}, up from "
            f"{raw_out[2, water]:.3f} under the raw head. Water to money is now "
            f"{out[2, 0] / out[2, 1]:.1f} to 1."),
        choice(
            "Random queries and keys, 8 keys per row. Without dividing by sqrt(d), what does "
            f"the average top softmax weight do as d grows from {dims[0]} to {dims[-1]}?",
            ["climbs toward 1: one key takes almost everything", "stays about the same",
             "falls toward 1/8"],
            0 if unscaled[-1] > unscaled[0] + 0.1 else 1,
            f"Unscaled: {fmt_list(unscaled)} for d = {', '.join(map(str, dims))}. Scores "
            f"spread like sqrt(d) (std {m2.scaling.std[-1]:.2f} at d = {dims[-1]}), so "
            "softmax turns winner-take-all. Divided by sqrt(d) the top weight stays flat: "
            f"{fmt_list(flat)}."),
    ]
