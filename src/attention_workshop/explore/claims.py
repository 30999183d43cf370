"""The lessons' claims that a table can break, checked on the sentence (and on your table).

The built-in table keeps them in every sentence (tests/test_embeddings.py). A table of your
own may not, and then `explore` says which claim broke, where, and why:

- self-match (Module 1): in simple attention each word's own score x_i . x_i is the largest
  in its row. A row loses to a longer row pointing nearly its way: x . y = |x| |y| cos.
- positive weights (Module 1's blend): softmax gives every word some share, never exactly 0.
  Scores more than about 745 apart underflow: e^-745 is 0 in floating point. (With --causal
  the words a word may not see get 0 by design; they are not counted.)

Example: with a table holding the = [0, 0, 0, 1] and a = [0, 0, 0, 0.9], check(explore("a
the")) -> [Break(SELF_MATCH, "'a' scores 'the' 0.900 but itself only 0.810: ...")].
"""

from dataclasses import dataclass

import numpy as np

SELF_MATCH = "self-match (Module 1): in simple attention each word's own score is its row's largest"
POSITIVE = "positive weights (Module 1): softmax gives every word a share above 0"
CLAIMS = (SELF_MATCH, POSITIVE)


@dataclass(frozen=True)
class Break:
    claim: str  # one of CLAIMS
    why: str  # the first place it breaks, with the numbers


def check(ex):  # Exploration -> [Break] in this sentence
    found = []
    loser = self_match_loser(ex.tokens, ex.X)
    if loser:
        found.append(Break(SELF_MATCH, why_lost(*loser)))
    for head in ("raw", "wired"):
        weights = getattr(ex, head)["weights"]  # [T, T]
        masked = (head == "wired" and getattr(ex.options, "causal", False)
                  ) and ~np.tri(len(weights), dtype=bool)  # later words: 0 by the mask's design
        zero = (weights == 0) & ~np.asarray(masked, dtype=bool)
        if zero.any():
            i, j = (int(v) for v in np.argwhere(zero)[0])
            scores = getattr(ex, head)["scores"][i]
            found.append(Break(POSITIVE, f"under the {head} head '{ex.tokens[i]}' gives "
                               f"'{ex.tokens[j]}' exactly 0: its scores span "
                               f"{scores.max() - scores.min():.4g}, and e^-745 is 0 in "
                               "floating point"))
            break
    return found


def self_match_loser(words, X):  # -> (word, other, own, cross, |x|, |y|) or None
    """The first word whose score with another word beats its score with itself."""
    for i, word in enumerate(words):
        for j, other in enumerate(words):
            if other != word and X[i] @ X[j] > X[i] @ X[i] + 1e-12:
                return (word, other, float(X[i] @ X[i]), float(X[i] @ X[j]),
                        float(np.linalg.norm(X[i])), float(np.linalg.norm(X[j])))
    return None


def why_lost(word, other, own, cross, size, other_size):
    cos = cross / (size * other_size)
    angle = float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
    return (f"'{word}' scores '{other}' {cross:.3f} but itself only {own:.3f}: {other}'s row is "
            f"longer ({other_size:.3f} vs {size:.3f}) and only {angle:.0f} degrees from "
            f"{word}'s (x . y = |x| |y| cos)")


def table_losers(table, limit=5000):  # tables.Table -> [(word, other)], or None if too big
    """Every ordered pair of the table's words where self-match fails (any sentence holding
    both breaks it); None past `limit` words (the pairs grow as the square). Example:
    [("a", "the")] for a = [0, 0, 0, 0.9] beside the built-in "the"."""
    words = list(table.words)
    if len(words) > limit:
        return None
    X = np.array([table.words[w] for w in words], dtype=float)  # [n, d_model]
    own = np.einsum("ij,ij->i", X, X)  # [n]
    found = []
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, len(words), 512):  # [512, n] scores at a time
            lost = X[start:start + 512] @ X.T > own[start:start + 512, None] + 1e-12
            found += [(words[start + i], words[j]) for i, j in np.argwhere(lost)
                      if start + i != j]
    return found
