"""Which heads matter: where one word puts most of its attention on another word, by content.

Many heads do something else. Some track position: every word looks at the word just
before it (a previous-token head) or just after it. Some rest: most words park their
attention on [CLS], [SEP] or themselves. content_heads leaves both kinds out, and says how
many it left out, so that what remains answers "which word looks at which".
"""

import numpy as np

NEIGHBOUR_SHARE = 0.75  # a head is positional if this share of its words look at a neighbour
RESTING_SHARE = 0.75  # a head rests if this share of its words look most at rest positions


def rest_positions(special, causal):  # [T] bool, bool -> [T] bool
    """Where heads park attention that looks for nothing: the special tokens ([CLS], [SEP])
    and, in a decoder, the first token (the "sink": every token can see it). Looks at these
    are rest, not looks at a word. Example: a decoder's "the river bank" -> [True, False,
    False]."""
    rest = np.array(special, dtype=bool)
    if causal and len(rest):
        rest[0] = True
    return rest


def off_self_weights(attentions, special):  # [L, H, T, T], [T] bool -> [L, H, T, T]
    """The weights with the diagonal and every special token's row and column set to 0.

    Example: for "[CLS] the river bank [SEP]", only the 3 x 3 word-to-other-word cells remain.
    """
    keep = ~np.asarray(special, dtype=bool)
    cells = np.outer(keep, keep) & ~np.eye(len(keep), dtype=bool)  # [T, T]
    return np.where(cells, attentions, 0.0)


def word_looks(attentions, special):
    # [..., T, T], [T] bool -> (top [..., W]: where each word looks most, words [W]: their
    # token positions, special [T] bool)
    special = np.asarray(special, dtype=bool)
    words = np.flatnonzero(~special)
    return attentions.argmax(axis=-1)[..., words], words, special


def neighbour_shares(top, words):  # word_looks' top [..., W] and words -> [(kind, share [...])]
    """For 'previous' (the words after the first) and 'next' (the words before the last), the
    share of them whose largest weight is on the token just before / after them; a kind with
    no such words (one word) is left out. Example: top [0, 1] for words [1, 2] (river -> the,
    bank -> river) -> [('previous', 1.0), ('next', 0.0)]."""
    shares = []
    for kind, step, askers in (("previous", -1, slice(1, None)), ("next", 1, slice(None, -1))):
        if len(words[askers]):
            shares.append((kind, (top[..., askers] == words[askers] + step).mean(axis=-1)))
    return shares


def neighbour_head(weights, special, share=1.0):  # [T, T], [T] bool -> "previous"|"next"|None
    """'previous' if at least `share` of the words after the first put their largest weight on
    the word just before them; 'next' likewise for the word just after. Example: MiniLM's
    L0 H2 on "the river bank" -> 'previous' (river -> the, bank -> river)."""
    top, words, _ = word_looks(weights, special)
    for kind, hits in neighbour_shares(top, words):
        if hits >= share:
            return kind
    return None


def top_heads(attentions, special, count=3, layer=None, head=None, among=None):
    # [L, H, T, T], [T] bool -> list of (layer, head, query, key, weight)
    """The `count` heads (optionally within one layer and/or one head index, or among a set
    of (layer, head) pairs) whose largest word-to-other-word weight is biggest, with that
    weight and where it points.

    Example: top_heads(A, special, 1) -> [(2, 5, 3, 2, 0.41)]: in layer 2, head 5, token 3
    gives 0.41 of its attention to token 2. Ties go to the lower layer, then head.
    """
    L, H, T, _ = attentions.shape
    cells = off_self_weights(np.ones((T, T), attentions.dtype), special)  # [T, T]: 1 or 0
    off = np.empty((T, T), attentions.dtype)  # one head's word-to-other-word weights, reused:
    layers = range(L) if layer is None else [layer]  # a copy of all [L, H, T, T] took
    head_ids = range(H) if head is None else [head]  # slow at 510 tokens
    found = []
    for lay in layers:
        for h in head_ids:
            if among is not None and (lay, h) not in among:
                continue
            np.multiply(attentions[lay, h], cells, out=off)
            q, k = np.unravel_index(int(np.argmax(off)), (T, T))
            found.append((lay, h, int(q), int(k), float(off[q, k])))
    found.sort(key=lambda item: -item[4])  # stable: ties keep layer, head order
    return found[:count]


def head_kinds(attentions, special):  # [L, H, T, T], [T] bool -> (position, resting) [L, H]
    """For every head at once: position heads (at least NEIGHBOUR_SHARE of the words that look
    at another word look at a neighbour, two such words at least) and, of the others, resting
    heads (at least RESTING_SHARE of the words look most at [CLS], [SEP] or
    themselves). One argmax over all heads' rows, not one a row (a 510-token sentence:
    72 heads x 510 rows of Python calls took 0.3 s).

    Example: MiniLM on "the river bank": position[0, 2] -> True (L0 H2, previous-token).
    """
    top, words, special = word_looks(attentions, special)  # top [L, H, W]
    rest = special[top] | (top == words)  # [L, H, W]: on [CLS], [SEP] or itself
    position = np.zeros(attentions.shape[:2], dtype=bool)
    for step, askers in ((-1, slice(1, None)), (1, slice(None, -1))):  # previous, next
        # counted over the words that look at another word: words resting on [CLS] do not
        # hide a head whose every look is at a neighbour (L2 H11, "we sat on the bank of
        # the river": 5 of 7 words on the word before, the other 2 on [CLS])
        looking = ~rest[..., askers]  # [L, H, W']
        hits = (top[..., askers] == words[askers] + step) & looking
        n = looking.sum(axis=-1)
        position |= (n >= 2) & (hits.sum(axis=-1) >= NEIGHBOUR_SHARE * n)
    resting = (rest.mean(axis=-1) >= RESTING_SHARE) if len(words) else np.zeros_like(position)
    return position, resting & ~position


def content_heads(attentions, special, count=3, layer=None, head=None, previous=None):
    # -> (top_heads(...) among the content heads, {"position": [(l, h)], "resting": [(l, h)]})
    """The `count` heads with the strongest word-to-other-word look, leaving out position
    heads and resting heads (head_kinds finds both; `previous` [L, H] bool, if given, marks
    more position heads: a decoder's previous-token heads, found on random tokens);
    also what was left out. Example: for "the river bank" MiniLM's L0 H2 (previous-token)
    is left out, L0 H4 (bank -> river 0.788) stays."""
    L, H = attentions.shape[:2]
    position, resting = head_kinds(attentions, special)
    if previous is not None:
        position = position | previous
        resting = resting & ~position
    left_out = {"position": [], "resting": []}
    kept = set()
    for lay in range(L) if layer is None else [layer]:
        for h in range(H) if head is None else [head]:
            if position[lay, h]:
                left_out["position"].append((lay, h))
            elif resting[lay, h]:
                left_out["resting"].append((lay, h))
            else:
                kept.add((lay, h))
    return top_heads(attentions, special, count, layer, head, among=kept), left_out


def heads_toward(attentions, query, key, count=3):  # [L, H, T, T], int, int -> list
    """The `count` heads where token `query` puts most weight on token `key`.

    Example: heads_toward(A, 3, 2) for "[CLS] the river bank [SEP]" -> [(layer, head, weight)]
    of the heads in which "bank" looks hardest at "river". Ties go to the lower layer, then head.
    """
    w = attentions[:, :, query, key]  # [L, H]
    order = np.argsort(-w, axis=None, kind="stable")[:count]
    return [(int(lay), int(h), float(w[lay, h]))
            for lay, h in zip(*np.unravel_index(order, w.shape), strict=True)]

