"""The torch side of the training tests: the same formulas written with torch's own ops,
differentiated by autograd (an independent second implementation)."""

import numpy as np

from attention_workshop.attention import causal_mask


def torch_attention(q, k, v, mask, scaled, keep=None):  # torch's own ops, from the formula
    """`keep`: a list that gets the softmax weights (a test reading a head's pattern)."""
    import torch

    scores = q @ k.transpose(-1, -2)
    if scaled:
        scores = scores / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~torch.from_numpy(mask), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if keep is not None:
        keep.append(weights)
    return weights @ v


def torch_forward(tp, cfg, ids, ablate=(), keep=None):  # an independent torch forward
    """The same model in torch; `keep`: a list that gets every head's weights [B, T, T], layer
    by layer, head by head."""
    import torch

    T = ids.shape[1]
    x = tp["W_E"][ids] + tp["W_pos"][:T]
    mask = causal_mask(T)
    for layer in range(cfg.n_layer):
        heads = []
        for h in range(cfg.n_head):
            cols = slice(h * cfg.d_head, (h + 1) * cfg.d_head)
            q, k, v = (x @ tp[f"{layer}.W_{n}"][:, cols] for n in "QKV")
            z = torch_attention(q, k, v, mask, scaled=True, keep=keep)
            heads.append(z * 0 if (layer, h) in ablate else z)
        x = x + torch.cat(heads, dim=-1) @ tp[f"{layer}.W_O"]
    return x @ tp["W_U"]
