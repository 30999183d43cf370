"""Plain gradient descent and Adam, written out; parameters are {name: array}.

Adam (Kingma and Ba 2015) in the form torch.optim.Adam computes it, per parameter p with
gradient g at step t = 1, 2, ...:

    m = b1 m + (1 - b1) g              running mean of the gradient
    v = b2 v + (1 - b2) g^2            running mean of its square
    p = p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)

so each entry moves by about lr whatever its gradient's size (m / sqrt(v) is near +-1).
"""

from dataclasses import dataclass

import numpy as np


def gradient_descent(params, grads, lr):  # {name: array} x 2, float -> new {name: array}
    """p - lr * g for every parameter. Example: p = 1.0, g = 0.5, lr = 0.1 -> 0.95."""
    return {name: p - lr * grads[name] for name, p in params.items()}


@dataclass(frozen=True)
class AdamState:
    step: int  # steps taken so far
    m: dict  # {name: array} running mean of the gradient
    v: dict  # {name: array} running mean of its square


def adam_start(params):  # {name: array} -> AdamState at step 0, moments zero
    return AdamState(0, {n: np.zeros_like(p) for n, p in params.items()},
                     {n: np.zeros_like(p) for n, p in params.items()})


def adam(params, grads, state, lr, betas=(0.9, 0.999), eps=1e-8):
    # {name: array}, {name: array}, AdamState -> (new params, new AdamState)
    """One Adam step. Example: the first step moves every entry by lr against its gradient's
    sign (m / sqrt(v) = g / |g| at t = 1): p = 1.0, g = 0.5, lr = 0.1 -> 0.9 (to 1e-7)."""
    b1, b2 = betas
    t = state.step + 1
    m = {n: b1 * state.m[n] + (1 - b1) * g for n, g in grads.items()}
    v = {n: b2 * state.v[n] + (1 - b2) * g * g for n, g in grads.items()}
    step_size = lr / (1 - b1**t)
    root = np.sqrt(1 - b2**t)
    new = {n: p - step_size * m[n] / (np.sqrt(v[n]) / root + eps) for n, p in params.items()}
    return new, AdamState(t, m, v)
