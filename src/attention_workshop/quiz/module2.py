"""Module 2's quiz: queries and keys wired by hand, and why scores are divided by sqrt(d_k).

Every answer is computed here with the functions the log uses (wired_attention,
scaling_experiment).
"""

import numpy as np

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED, simple_attention, wired_attention
from attention_workshop.embeddings import AXES, SENT_RIVER, embed, tokenize
from attention_workshop.explore import slow_motion
from attention_workshop.modules.module2 import scaling_experiment
from attention_workshop.quiz.engine import Question, choice
from attention_workshop.report import fmt_list

TITLE = "Module 2: queries, keys, and one carefully chosen constant"


def questions():
    X = embed(SENT_RIVER)  # [3, 4]
    words = tokenize(SENT_RIVER)
    Q, K = X @ W_Q_WIRED, X @ W_K_WIRED  # [3, 2] each
    out, weights, scores = wired_attention(X)
    raw_out, _ = simple_attention(X)
    scaled, _ = slow_motion(weights[2], X)  # [3, 4]
    d_k = W_K_WIRED.shape[1]
    place, water = AXES.index("place"), AXES.index("water")
    scaling = scaling_experiment()
    dims = sorted(scaling)
    unscaled = [scaling[d][1] for d in dims]
    flat = [scaling[d][2] for d in dims]

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
            f"Slow motion, water column: {weights[2, 1]:.3f} x {X[1, water]:.1f} = "
            f"{scaled[1, water]:.3f} from river, {weights[2, 2]:.3f} x {X[2, water]:.1f} = "
            f"{scaled[2, water]:.3f} from bank: {out[2, water]:.3f}, up from "
            f"{raw_out[2, water]:.3f} under the raw head. Water to money is now "
            f"{out[2, 0] / out[2, 1]:.1f} to 1."),
        choice(
            "Random queries and keys, 8 keys per row. Without dividing by sqrt(d), what does "
            f"the average top softmax weight do as d grows from {dims[0]} to {dims[-1]}?",
            ["climbs toward 1: one key takes almost everything", "stays about the same",
             "falls toward 1/8"],
            0 if unscaled[-1] > unscaled[0] + 0.1 else 1,
            f"Unscaled: {fmt_list(unscaled)} for d = {', '.join(map(str, dims))}. Scores "
            f"spread like sqrt(d) (std {scaling[dims[-1]][0]:.2f} at d = {dims[-1]}), so "
            "softmax turns winner-take-all. Divided by sqrt(d) the top weight stays flat: "
            f"{fmt_list(flat)}."),
    ]
