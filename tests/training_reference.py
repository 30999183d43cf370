"""The torch side of the training tests: the same formulas written with torch's own ops,
differentiated by autograd (an independent second implementation)."""

import numpy as np

from attention_workshop.attention import causal_mask


def torch_attention(q, k, v, mask, scaled):  # torch's own ops, written from the formula
    import torch

    scores = q @ k.transpose(-1, -2)
    if scaled:
        scores = scores / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~torch.from_numpy(mask), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def torch_forward(tp, cfg, ids, ablate=()):  # an independent torch forward of the same model
    import torch

    T = ids.shape[1]
    x = tp["W_E"][ids] + tp["W_pos"][:T]
    mask = causal_mask(T)
    for layer in range(cfg.n_layer):
        heads = []
        for h in range(cfg.n_head):
            cols = slice(h * cfg.d_head, (h + 1) * cfg.d_head)
            q, k, v = (x @ tp[f"{layer}.W_{n}"][:, cols] for n in "QKV")
            z = torch_attention(q, k, v, mask, scaled=True)
            heads.append(z * 0 if (layer, h) in ablate else z)
        x = x + torch.cat(heads, dim=-1) @ tp[f"{layer}.W_O"]
    return x @ tp["W_U"]
