"""real/head_search.py: the all-heads-at-once searches against the one-head-at-a-time
definitions, written here row by row in plain Python, and a plain masked copy, on random
weights."""

import numpy as np
import pytest

from attention_workshop.real.head_search import (
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
        one_position = one_by_one(w, special, NEIGHBOUR_SHARE) is not None
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
    from attention_workshop.real.head_search import rest_positions

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
