"""Cross entropy of the right token under softmax(logits), and its gradient.

    loss = mean over rows of -log softmax(logits)[target]
    dloss/dlogits = (softmax(logits) - onehot(target)) / rows
"""

import numpy as np

from attention_workshop.attention import softmax


def token_losses(logits, targets):  # [..., V], [...] ints -> [...] -log p(target), per row
    """Example: logits [[0, 0], [0, 0]], targets [0, 1] -> [0.693, 0.693] (log 2 each)."""
    logits = np.asarray(logits, dtype=np.float64)
    top = logits.max(axis=-1, keepdims=True)  # log-softmax, shifted like softmax
    log_probs = logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))
    return -np.take_along_axis(log_probs, np.asarray(targets)[..., None], axis=-1)[..., 0]


def cross_entropy(logits, targets):  # [..., V], [...] ints -> (loss, [..., V] dloss/dlogits)
    """Mean loss over every row, and its gradient with respect to the logits.

    Example: logits [[0, 0]] and target [0] -> loss log 2 = 0.693, gradient [[-0.5, 0.5]].
    """
    targets = np.asarray(targets)
    d_logits = softmax(np.asarray(logits, dtype=np.float64))  # [..., V]
    right = targets[..., None]
    np.put_along_axis(d_logits, right, np.take_along_axis(d_logits, right, axis=-1) - 1,
                      axis=-1)
    return float(token_losses(logits, targets).mean()), d_logits / targets.size
