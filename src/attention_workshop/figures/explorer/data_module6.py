"""What the explorer's Module 6 panel embeds: the training replayed step by step, from the
copies module6.Result keeps (the toy's W_Q and W_K at every step, the induction model's
snapshots). Every number is the engine's; the page only draws and prints them.

Losses and pattern scores are kept to 2 decimals, the digits results.log prints (so [S23]'s
rows read the same on the page), attention weights in whole thousandths (data.thousandths).
"""

import math

import numpy as np

from attention_workshop.embeddings import AXES, SENT_MONEY, SENT_RIVER, embed, tokenize
from attention_workshop.figures.explorer.data import thousandths

MOST_STEPS = 60  # the toy's slider: at most this many steps (and the last) of its training


def hundredths(x):  # array -> nested lists of floats at 2 decimals, as f"{x:.2f}" rounds
    """Example: hundredths([0.125, 3.4999]) -> [0.12, 3.5]."""
    return np.vectorize(lambda v: float(f"{v:.2f}"), otypes=[float])(
        np.asarray(x, dtype=float)).tolist()


def shown_steps(last, most=MOST_STEPS):  # -> steps 0, k, 2k, ... and `last`, at most most + 1
    """Example: shown_steps(300) -> [0, 5, 10, ..., 300]; shown_steps(7, most=3) -> [0, 3, 6, 7]."""
    stride = max(1, math.ceil(last / most))
    return sorted({*range(0, last + 1, stride), last})


def training_section(m6, source):  # module6.Result, str -> the page's Module 6 (None parts out)
    """`source` says where the run comes from (results.log, or the train command and its
    seed). A Result without the toy's path (train induction) or without snapshots (train
    wiring) leaves that part out: {"wiring": None, ...}."""
    return {"source": source, "wiring": wiring_part(m6) if m6.wiring_path else None,
            "induction": induction_part(m6) if m6.snapshots else None}


def wiring_part(m6):  # the toy: W_Q @ W_K.T and bank's weights at each shown step, and wired
    from attention_workshop.attention import W_K_WIRED, W_Q_WIRED
    from attention_workshop.training import wiring

    steps = shown_steps(len(m6.wiring_path) - 1)
    lesson = (SENT_RIVER, SENT_MONEY)
    bank = lambda w_q, w_k: [wiring.bank_weights(w_q, w_k, embed(s)[None])[0][0, 2]  # noqa: E731
                             for s in lesson]  # [2 sentences, 3 words]
    path = [m6.wiring_path[k] for k in steps]
    return {"axes": list(AXES), "steps": steps, "last": len(m6.wiring_path) - 1,
            "loss": thousandths(m6.wiring_losses[steps]),
            "product": [thousandths(w_q @ w_k.T) for w_q, w_k in path],  # [S][4][4]
            "bank": [thousandths(bank(w_q, w_k)) for w_q, w_k in path],  # [S][2][3]
            "wired": {"product": thousandths(W_Q_WIRED @ W_K_WIRED.T),
                      "bank": thousandths(bank(W_Q_WIRED, W_K_WIRED))},
            "sentences": [{"sentence": s, "tokens": tokenize(s)} for s in lesson]}


def induction_part(m6):  # the transformer: each snapshot's losses, scores and patterns
    from attention_workshop.real.analysis.head_patterns import pattern_cells
    from attention_workshop.training import induction

    cfg, snaps = induction.CONFIG, m6.snapshots
    L, H, T, _ = snaps[0].attentions.shape
    lower = lambda att: [[row[:i + 1] for i, row in enumerate(head)]  # noqa: E731
                         for layer in att for head in layer]  # [L H][T][i + 1]: causal rows
    return {"layers": L, "heads": H, "vocab": cfg.n_vocab, "d_model": cfg.d_model,
            "tokens": induction.pattern_sequence(cfg), "phase": list(m6.phase),
            "first_above": [induction.first_above(snaps, "previous", 0, 0.3),
                            induction.first_above(snaps, "induction", L - 1, 0.5)],
            "cells": {kind: [np.asarray(c).tolist() for c in pattern_cells(kind, T)]
                      for kind in ("induction", "previous")},
            "steps": [s.step for s in snaps],
            "first": hundredths([s.first_copy for s in snaps]),
            "second": hundredths([s.second_copy for s in snaps]),
            "induction": [hundredths(s.induction) for s in snaps],  # [S][L][H]
            "previous": [hundredths(s.previous) for s in snaps],
            "patterns": [lower(thousandths(s.attentions)) for s in snaps]}  # [S][L H][T][i+1]
