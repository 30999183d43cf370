"""Which heads matter: where one word puts most of its attention on another word.

Many heads park their attention on [CLS], [SEP] or the token itself, a resting
position; the heads worth reading are those where a word looks at a different word.
"""

import numpy as np


def off_self_weights(attentions, special):  # [L, H, T, T], [T] bool -> [L, H, T, T]
    """The weights with the diagonal and every special token's row and column set to 0.

    Example: for "[CLS] the river bank [SEP]", only the 3 x 3 word-to-other-word cells remain.
    """
    keep = ~np.asarray(special, dtype=bool)
    cells = np.outer(keep, keep) & ~np.eye(len(keep), dtype=bool)  # [T, T]
    return np.where(cells, attentions, 0.0)


def top_heads(attentions, special, count=3, layer=None, head=None):
    # [L, H, T, T], [T] bool -> list of (layer, head, query, key, weight)
    """The `count` heads (optionally within one layer and/or one head index) whose largest
    word-to-other-word weight is biggest, with that weight and where it points.

    Example: top_heads(A, special, 1) -> [(2, 5, 3, 2, 0.41)]: in layer 2, head 5, token 3
    gives 0.41 of its attention to token 2. Ties go to the lower layer, then head.
    """
    off = off_self_weights(attentions, special)
    L, H, T, _ = off.shape
    layers = range(L) if layer is None else [layer]
    head_ids = range(H) if head is None else [head]
    found = []
    for lay in layers:
        for h in head_ids:
            q, k = np.unravel_index(int(np.argmax(off[lay, h])), (T, T))
            found.append((lay, h, int(q), int(k), float(off[lay, h, q, k])))
    found.sort(key=lambda item: -item[4])  # stable: ties keep layer, head order
    return found[:count]


def heads_toward(attentions, query, key, count=3):  # [L, H, T, T], int, int -> list
    """The `count` heads where token `query` puts most weight on token `key`.

    Example: heads_toward(A, 3, 2) for "[CLS] the river bank [SEP]" -> [(layer, head, weight)]
    of the heads in which "bank" looks hardest at "river". Ties go to the lower layer, then head.
    """
    w = attentions[:, :, query, key]  # [L, H]
    order = np.argsort(-w, axis=None, kind="stable")[:count]
    return [(int(lay), int(h), float(w[lay, h]))
            for lay, h in zip(*np.unravel_index(order, w.shape), strict=True)]
