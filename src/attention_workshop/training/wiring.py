"""The toy's wiring, learned: W_Q and W_K (4 x 2) found by gradient descent on the table.

The task, in a learner's words: in each sentence, bank's new vector (its attention output,
values = the raw rows as in Module 2) must tell which kind of bank the sentence is about.
Its water and money numbers are read as two scores, and the loss is the cross entropy of
the right kind (water-kind or money-kind). Only bank's row enters the loss; the other
words' queries get no gradient, so their rows of the learned weights are left to chance.

Sentences are built from the table's words with a few templates. The lesson's own
sentences, "the river bank" and "the money bank", are held out: the training never sees
river or money.
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.embeddings import AXES, embed, tokenize
from attention_workshop.training.attention_grad import attention, attention_backward
from attention_workshop.training.cross_entropy import cross_entropy
from attention_workshop.training.optimizers import gradient_descent

KINDS = ("water", "money")  # the two kinds of bank; their names are also the axes read
TRAIN = {"water": ("water", "stream", "lake", "fish"), "money": ("cash", "loan", "deposit",
                                                                  "account")}
HELD_OUT = {"water": ("river", "boat", "shore"), "money": ("money", "office")}
TEMPLATES = ("the {} bank", "a {} bank", "the bank by the {}", "the bank of a {}")
SEED = 0  # the fixed random start
START = 0.1  # its size: entries N(0, START^2), so every weight starts near even
LR = 1.0  # plain gradient descent's step
STEPS = 300


def sentences(topics):  # {kind: words} -> [(sentence, kind index)]
    """Example: sentences({"water": ("lake",)})[2] -> ("the bank by the lake", 0)."""
    return [(t.format(word), KINDS.index(kind)) for kind, words in topics.items()
            for word in words for t in TEMPLATES]


@dataclass(frozen=True)
class Batch:
    X: np.ndarray  # [N, T, 4] each sentence's rows, padded with zero rows to the longest
    mask: np.ndarray  # [N, 1, T] True on real words (a padded word is never looked at)
    bank: np.ndarray  # [N] bank's position in each sentence
    kind: np.ndarray  # [N] 0 water-kind, 1 money-kind


def make_batch(labelled):  # [(sentence, kind)] -> Batch
    T = max(len(tokenize(s)) for s, _ in labelled)
    X = np.zeros((len(labelled), T, len(AXES)))
    mask = np.zeros((len(labelled), 1, T), dtype=bool)
    for n, (s, _) in enumerate(labelled):
        rows = embed(s)
        X[n, :len(rows)], mask[n, 0, :len(rows)] = rows, True
    bank = np.array([tokenize(s).index("bank") for s, _ in labelled])
    return Batch(X, mask, bank, np.array([k for _, k in labelled]))


def bank_weights(w_q, w_k, X, mask=None, scaled=True):  # -> weights [N, T, T], outputs
    """Module 2's head with these matrices, batched: Q = X W_Q, K = X W_K, values X."""
    outputs, weights = attention(X @ w_q, X @ w_k, X, mask, scaled)
    return weights, outputs


def loss_and_grads(w_q, w_k, data, scaled=True):  # -> (loss, dW_Q, dW_K, weights)
    """The forward and its backward, step by step (shapes: N sentences, T words, d_k)."""
    Q, K = data.X @ w_q, data.X @ w_k  # [N, T, d_k]
    out, weights = attention(Q, K, data.X, data.mask, scaled)  # [N, T, 4], [N, T, T]
    n = np.arange(len(data.bank))
    read = [AXES.index(k) for k in KINDS]  # bank's water and money numbers: its two scores
    loss, d_scores = cross_entropy(out[n, data.bank][:, read], data.kind)  # [N, 2]
    d_out = np.zeros_like(out)
    d_out[n[:, None], data.bank[:, None], read] = d_scores  # only bank's row is read
    dQ, dK, _ = attention_backward(d_out, Q, K, data.X, weights, scaled)  # values: fixed
    flat = lambda a: a.reshape(-1, a.shape[-1])  # noqa: E731  [N, T, k] -> [N T, k]
    return loss, flat(data.X).T @ flat(dQ), flat(data.X).T @ flat(dK), weights


def start(d_k=2, seed=SEED, size=START):  # -> (W_Q, W_K) [4, d_k] each, the fixed start
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((len(AXES), d_k)) * size,
            rng.standard_normal((len(AXES), d_k)) * size)


def train(w_q, w_k, data, steps=STEPS, lr=LR, scaled=True, path=None):
    # -> (W_Q, W_K, losses [steps + 1], gradient norms [steps + 1])
    """Plain gradient descent on both matrices; the loss and gradient size at every step.
    `path`: a list that gets a copy of (W_Q, W_K) at every step 0 .. steps (the explorer's
    replay); the training is the same with or without it."""
    losses, norms = [], []
    for step in range(steps + 1):
        if path is not None:
            path.append((w_q.copy(), w_k.copy()))
        loss, d_q, d_k, _ = loss_and_grads(w_q, w_k, data, scaled)
        losses.append(loss)
        norms.append(float(np.sqrt((d_q**2).sum() + (d_k**2).sum())))
        if step < steps:
            new = gradient_descent({"W_Q": w_q, "W_K": w_k}, {"W_Q": d_q, "W_K": d_k}, lr)
            w_q, w_k = new["W_Q"], new["W_K"]
    return w_q, w_k, np.array(losses), np.array(norms)


def kinds_right(w_q, w_k, data):  # -> how many sentences' bank leans toward the right kind
    """Bank's output leans water-kind when its water number beats its money number."""
    weights, outputs = bank_weights(w_q, w_k, data.X, data.mask)
    bank = outputs[np.arange(len(data.bank)), data.bank]  # [N, 4]
    water_kind = bank[:, AXES.index("water")] > bank[:, AXES.index("money")]
    return int((water_kind == (data.kind == KINDS.index("water"))).sum())
