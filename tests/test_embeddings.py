"""The built-in table keeps Module 1's self-match claim in every sentence over its words.

In simple attention, word i's score against word j is x_i . x_j. The claim is that each
word's own score, x_i . x_i, is the largest in its row, whatever the sentence. A sentence
only brings rows together, so the claim holds in every sentence exactly when it holds for
every ordered pair of distinct words: checked below pair by pair with plain loops, then
again sentence by sentence, every sentence of 1 to 4 words (168,420 of them).
"""

import itertools

import numpy as np
import pytest

from attention_workshop.attention import simple_attention
from attention_workshop.embeddings import EMBED, LESSON_WORDS, embed

WORDS = sorted(EMBED)
LESSON_ROWS = {"the": (0.0, 0.0, 0.0, 1.0), "river": (0.9, 0.0, 0.3, 0.0),
               "money": (0.0, 0.9, 0.1, 0.0), "bank": (0.3, 0.3, 0.9, 0.0)}
MARGIN = 0.02  # the lesson rows' own closest pair: lake vs river, shore vs bank (0.89 - 0.87)


def dot(a, b):
    return sum(float(x) * float(y) for x, y in zip(a, b, strict=True))


def test_the_four_lesson_rows_never_change():
    assert LESSON_WORDS == tuple(LESSON_ROWS)
    for word, row in LESSON_ROWS.items():
        assert tuple(EMBED[word]) == row


def test_every_pair_of_words_self_match_wins_by_a_margin():
    """380 ordered pairs: x_i . x_i - x_i . x_j >= 0.02, worked with plain loops."""
    pairs = [(a, b) for a in WORDS for b in WORDS if a != b]
    assert len(pairs) == len(WORDS) * (len(WORDS) - 1) == 380
    losers = [(a, b, dot(EMBED[a], EMBED[a]), dot(EMBED[a], EMBED[b])) for a, b in pairs
              if dot(EMBED[a], EMBED[a]) - dot(EMBED[a], EMBED[b]) < MARGIN - 1e-12]
    assert losers == []


def sentences(length):  # every sentence of `length` words over the table: [n, length] indices
    return np.array(list(itertools.product(range(len(WORDS)), repeat=length)))


@pytest.mark.parametrize("length", [1, 2, 3])
def test_every_short_sentence_through_simple_attention(length):
    """Each of the 20 + 400 + 8,000 sentences through the package's simple_attention: every
    word's largest weight is on its own word, and still so at the three printed decimals."""
    for ids in sentences(length):
        words = [WORDS[i] for i in ids]
        _, weights = simple_attention(embed(words))  # [T, T]
        for i, row in enumerate(weights):
            others = [j for j in range(length) if words[j] != words[i]]
            if others:
                assert row[i] > max(row[j] for j in others), words
                assert round(row[i], 3) > max(round(row[j], 3) for j in others), words


def test_every_four_word_sentence():
    """All 160,000 four-word sentences at once, scores from the rows with numpy alone."""
    table = np.array([EMBED[w] for w in WORDS])  # [20, 4]
    ids = sentences(4)  # [160000, 4]
    X = table[ids]  # [n, 4 words, 4 axes]
    scores = np.einsum("nia,nja->nij", X, X)  # [n, 4, 4]
    weights = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    same_word = ids[:, :, None] == ids[:, None, :]  # [n, 4, 4]: j is the same word as i
    own = np.diagonal(scores, axis1=1, axis2=2)[:, :, None]  # [n, 4, 1]
    assert np.all(same_word | (scores <= own - MARGIN + 1e-12))
    own_w = np.round(np.diagonal(weights, axis1=1, axis2=2), 3)[:, :, None]
    assert np.all(same_word | (np.round(weights, 3) < own_w))
