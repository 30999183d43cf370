"""How far one word's vector moves between two sentences, layer by layer ([S8] for any pair).

The same word starts from the same lookup row in both sentences; each layer mixes in the
words around it. The cosine similarity of its two vectors after each layer says how far
the contexts have pulled them apart (1.000: the same direction).
"""

import numpy as np


def cosine(a, b):  # [d], [d] -> float
    """Example: cosine([1, 0], [1, 1]) -> 0.707 (45 degrees apart)."""
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def word_vectors(result, positions):  # RunResult, [token positions] -> [n_layer + 1, d_model]
    """The word's vector at every depth: its token's hidden state, or the mean of its tokens'
    when the tokenizer split it. Example: word_vectors(r, [3])[0] is r.hidden_states[0, 3]."""
    return result.hidden_states[:, positions].mean(axis=1)


def drift(result_a, positions_a, result_b, positions_b):  # -> [n_layer + 1] cosines
    """Cosine of the word's vector in sentence a and in sentence b: the embeddings (before
    layer 0), then after each layer. Example: for bank in the two lesson sentences, MiniLM
    gives 1.000 at the embeddings and 0.912 after layer 0 (results.log [S8])."""
    a, b = word_vectors(result_a, positions_a), word_vectors(result_b, positions_b)
    return [cosine(x, y) for x, y in zip(a, b, strict=True)]
