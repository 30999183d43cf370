"""real/analysis/head_search.py: the all-heads-at-once searches against the one-head-at-a-time
definitions, written here row by row in plain Python, and a plain masked copy, on random
weights."""

import numpy as np
import pytest

from attention_workshop.real.analysis.head_search import (
    NEIGHBOUR_SHARE,
    RESTING_SHARE,
    content_heads,
    head_kinds,
    neighbour_head,
    off_self_weights,
    top_heads,
)


def one_by_one(weights, special, share):  # [T, T] -> "previous" | "next" | None, row by row
    words = [i for i, s in enumerate(special) if not s]
    for kind, step, askers in (("previous", -1, words[1:]), ("next", 1, words[:-1])):
        if askers and np.mean([int(np.argmax(weights[i])) == i + step for i in askers]) >= share:
            return kind
    return None


def position_one_by_one(weights, special, share=NEIGHBOUR_SHARE):  # -> True if positional
    """head_kinds' rule, row by row: of the words that look at another word (not at a
    special token, not at themselves), at least `share` look at a neighbour; two at least."""
    words = [i for i, s in enumerate(special) if not s]
    for step, askers in ((-1, words[1:]), (1, words[:-1])):
        tops = [int(np.argmax(weights[i])) for i in askers]
        looking = [(i, t) for i, t in zip(askers, tops, strict=True)
                   if not special[t] and t != i]
        if len(looking) >= 2 and np.mean([t == i + step for i, t in looking]) >= share:
            return True
    return False


def resting_one_by_one(weights, special):  # [T, T] -> True if 75% of the words rest
    words = [i for i, s in enumerate(special) if not s]
    rest = [special[int(np.argmax(weights[i]))] or int(np.argmax(weights[i])) == i
            for i in words]
    return bool(words) and float(np.mean(rest)) >= RESTING_SHARE


def random_case(seed):  # -> [L, H, T, T] rows summing to 1, [T] bool
    rng = np.random.default_rng(seed)
    L, H, T = int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 9))
    logits = rng.normal(size=(L, H, T, T)) * rng.choice([0.5, 4.0])  # soft and peaked heads
    peaks = rng.integers(0, T, size=(L, H, T))  # some heads made to look at one place
    logits[np.arange(L)[:, None, None], np.arange(H)[None, :, None], np.arange(T), peaks] += 6
    weights = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    special = rng.random(T) < 0.3  # 0, 1 or several special tokens, anywhere
    return weights.astype(np.float32), special.tolist()


@pytest.mark.parametrize("seed", range(300))
def test_head_kinds_is_each_heads_own_answer(seed):
    weights, special = random_case(seed)
    position, resting = head_kinds(weights, special)
    for lay, h in np.ndindex(weights.shape[:2]):
        w = weights[lay, h]
        for share in (NEIGHBOUR_SHARE, 1.0, 0.5):
            assert neighbour_head(w, special, share) == one_by_one(w, special, share)
        one_position = position_one_by_one(w, special)
        assert position[lay, h] == one_position
        assert resting[lay, h] == (not one_position and resting_one_by_one(w, special))


@pytest.mark.parametrize("seed", range(300))
def test_top_heads_is_the_largest_masked_weight(seed):
    weights, special = random_case(seed)
    off = off_self_weights(weights, special)  # the whole masked copy
    L, H, T, _ = weights.shape
    expected = []
    for lay, h in np.ndindex(L, H):
        q, k = np.unravel_index(int(np.argmax(off[lay, h])), (T, T))
        expected.append((lay, h, int(q), int(k), float(off[lay, h, q, k])))
    expected.sort(key=lambda item: -item[4])
    assert top_heads(weights, special, count=L * H) == expected
    kept, left_out = content_heads(weights, special, count=L * H)
    position, resting = head_kinds(weights, special)
    assert sorted(left_out["position"]) == sorted(zip(*np.nonzero(position), strict=True))
    assert sorted(left_out["resting"]) == sorted(zip(*np.nonzero(resting), strict=True))
    assert [item for item in expected if not (position | resting)[item[:2]]] == kept


def test_a_decoders_first_token_is_rest_not_a_look():
    from attention_workshop.real.analysis.head_search import rest_positions

    assert rest_positions([False, False, False], causal=True).tolist() == [True, False, False]
    assert rest_positions([True, False, True], causal=False).tolist() == [True, False, True]
    # a sink head: every token parks on token 0; one word looks at another by content
    A = np.zeros((1, 2, 4, 4))
    A[0, 0, :, 0] = 1.0
    A[0, 1] = np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None]
    A[0, 1, 3] = [0.1, 0.8, 0.05, 0.05]  # the last word looks at word 1, two back
    rest = rest_positions([False] * 4, causal=True)
    ((layer, head, q, k, w),) = top_heads(A, rest, 1)
    assert (layer, head, q, k, w) == (0, 1, 3, 1, 0.8)  # not the sink head's 1.0 on token 0


def test_words_resting_on_cls_do_not_hide_a_previous_token_head():
    """Five words look at the word before them, two rest on [CLS]: a position head (counted
    over the words that look at another word), not a content head."""
    from attention_workshop.real.analysis.head_search import head_kinds

    T = 9  # [CLS] w1 .. w7 [SEP]
    special = [True] + [False] * 7 + [True]
    A = np.zeros((1, 1, T, T))
    for i in range(T):
        A[0, 0, i, 0] = 1.0  # resting on [CLS] ...
    for i in (2, 3, 4, 5, 7):  # ... but for five words, which take the word before
        A[0, 0, i] = 0.0
        A[0, 0, i, i - 1] = 1.0
    position, resting = head_kinds(A, special)
    assert position[0, 0] and not resting[0, 0]
    A[0, 0, 7] = 0.0
    A[0, 0, 7, 2] = 1.0  # one of the five now looks by content: 4 of 5, under 0.75? no: 0.8
    assert head_kinds(A, special)[0][0, 0]
    A[0, 0, 5] = 0.0
    A[0, 0, 5, 1] = 1.0  # 3 of 5 look at a neighbour: by content
    assert not head_kinds(A, special)[0][0, 0]
