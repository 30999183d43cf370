"""Module 2's aside measured: the wiring task trained at d_k = 256, with and without 1/sqrt(d).

Same sentences, same loss, same plain gradient descent (wiring.py); only the width of the
queries and keys changes, and their start: entries N(0, 1), [S5]'s draws, from STARTS
different seeds. Without the division, a score is a sum of 256 products, about 16 times
larger: many softmax rows start pinned at one word (top weight above PINNED), where
softmax passes almost no gradient. Whether the head still learns then depends on where its
rows happen to be pinned: that is the "hard to train".
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.training import wiring

D = 256  # [S5]'s largest width
PINNED = 0.99  # a row whose largest weight is above this is "pinned"
STARTS = 4  # seeds 0 .. STARTS - 1, each a fresh start for both variants
STEPS = 150  # gradient descent steps from each start


@dataclass(frozen=True)
class AsideRun:
    scaled: bool  # scores divided by sqrt(D)?
    pinned: np.ndarray  # [STARTS] share of the training sentences' rows pinned at the start
    grad_start: np.ndarray  # [STARTS] the gradient's size at the start, sqrt(sum dW^2)
    losses: np.ndarray  # [STARTS, STEPS + 1] the training loss at every step
    on_topic: np.ndarray  # [STARTS, 2] bank's mean weight on its topic word, start and end


def topic_positions(labelled):  # [(sentence, kind)] -> [N] each sentence's topic word
    words = {w for ws in (*wiring.TRAIN.values(), *wiring.HELD_OUT.values()) for w in ws}
    return np.array([next(i for i, w in enumerate(wiring.tokenize(s)) if w in words)
                     for s, _ in labelled])


def measure(scaled, d=D, starts=STARTS, steps=STEPS):  # bool -> AsideRun
    """Example: measure(True).pinned -> all 0.0 (no row starts pinned when scaled)."""
    labelled = wiring.sentences(wiring.TRAIN)
    data = wiring.make_batch(labelled)
    n, topic = np.arange(len(labelled)), topic_positions(labelled)
    pinned, grads, losses, on_topic = [], [], [], []
    for seed in range(starts):
        w_q, w_k = wiring.start(d_k=d, seed=seed, size=1.0)
        before = wiring.loss_and_grads(w_q, w_k, data, scaled)[3]  # [N, T, T]
        pinned.append((before.max(axis=-1)[data.mask[:, 0]] > PINNED).mean())
        w_q, w_k, curve, norms = wiring.train(w_q, w_k, data, steps, scaled=scaled)
        after = wiring.loss_and_grads(w_q, w_k, data, scaled)[3]
        grads.append(norms[0])
        losses.append(curve)
        on_topic.append([w[n, data.bank, topic].mean() for w in (before, after)])
    return AsideRun(scaled, np.array(pinned), np.array(grads), np.array(losses),
                    np.array(on_topic))
