"""interventions.py on its own: which heads it accepts (one clear WorkshopError for each bad
list), and what its hooks do to a head output z worked by hand. The models' runs under these
hooks are checked against transformers in tests/test_interventions_equal.py."""

from types import SimpleNamespace

import numpy as np
import pytest

from attention_workshop.errors import WorkshopError
from attention_workshop.real.interventions import (
    ablation,
    by_layer,
    check_heads,
    interventions,
    patching,
)

CFG = SimpleNamespace(n_layer=2, n_head=3)  # layers 0-1, heads 0-2


@pytest.mark.parametrize(("heads", "message"), [
    ([(2, 0)], "head L2H0 is past the model: it has layers 0-1 and heads 0-2"),
    ([(0, 3)], "head L0H3 is past the model"),
    ([(1, 2), (1, 2)], "head L1H2 is listed twice; list each head once"),
    ([(1, 2), [1, 2]], "head L1H2 is listed twice"),
    ([(-1, 0)], "head L-1H0 has a negative number; layers and heads count from 0"),
    ([(0, -2)], "negative"),
    ([(0,)], "give each head as (layer, head), two whole numbers"),
    ([(0, 1, 2)], "two whole numbers"),
    ([(0.0, 1)], "two whole numbers"),
    ([(True, 1)], "two whole numbers"),
    ([5], "two whole numbers"),
    ("L0H1", "a list of (layer, head) pairs"),
    (3, "a list of (layer, head) pairs"),
])
def test_bad_heads_are_one_clear_error(heads, message):
    with pytest.raises(WorkshopError) as caught:
        check_heads(CFG, heads)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_good_heads_come_back_as_int_pairs():
    assert check_heads(CFG, [(1, 2), [0, np.int64(1)]]) == [(1, 2), (0, 1)]
    assert check_heads(CFG, []) == []
    assert by_layer([(1, 0), (0, 2), (1, 1)]) == {0: [2], 1: [0, 1]}


def test_a_bad_how_is_refused():
    with pytest.raises(WorkshopError, match="unknown ablation how='half'; choose one of zero, "
                                            "mean"):
        ablation(CFG, [(0, 0)], "half")


def test_an_empty_list_is_no_hook_at_all():
    assert not ablation(CFG, [])
    assert not interventions(CFG, 4, ablate=[], patch={})


Z = np.arange(3 * 4 * 2, dtype=np.float64).reshape(3, 4, 2)  # [n_head 3, T 4, d_head 2]


def test_zero_and_mean_ablation_by_hand():
    zero = ablation(CFG, [(1, 0), (1, 2)], "zero")
    assert list(zero.functions) == ["blocks.1.attn.hook_z"]
    out = zero("blocks.1.attn.hook_z", Z)
    assert out[0].tolist() == [[0, 0]] * 4 and out[2].tolist() == [[0, 0]] * 4
    assert out[1].tolist() == Z[1].tolist()
    assert zero("blocks.0.attn.hook_z", Z) is Z  # another layer: untouched
    mean = ablation(CFG, [(0, 1)], "mean")("blocks.0.attn.hook_z", Z)
    # head 1's rows are [8, 9], [10, 11], [12, 13], [14, 15]: mean [11, 12] at every position
    assert mean[1].tolist() == [[11.0, 12.0]] * 4
    assert mean[0].tolist() == Z[0].tolist()
    assert Z[1, 0].tolist() == [8, 9]  # the hook's input is not written over


def test_patching_swaps_one_head_and_refuses_another_length():
    other = SimpleNamespace(head_outputs=np.full((2, 3, 4, 2), 7.0))
    hooks = patching(CFG, {(0, 2): other}, T=4)
    out = hooks("blocks.0.attn.hook_z", Z)
    assert out[2].tolist() == [[7.0, 7.0]] * 4 and out[:2].tolist() == Z[:2].tolist()
    with pytest.raises(WorkshopError, match="source run has 4 tokens, this one 5; .* same length"):
        patching(CFG, {(0, 2): other}, T=5)
    with pytest.raises(WorkshopError, match="is not a run of this model"):
        patching(CFG, {(0, 2): SimpleNamespace(head_outputs=np.zeros((3, 3, 4, 2)))}, T=4)


def test_ablating_and_patching_together():
    other = SimpleNamespace(head_outputs=np.full((2, 3, 4, 2), 7.0))
    hooks = interventions(CFG, 4, ablate=[(0, 0)], patch={(0, 2): other})
    out = hooks("blocks.0.attn.hook_z", Z)
    assert out[0].tolist() == [[0, 0]] * 4 and out[2].tolist() == [[7, 7]] * 4
    with pytest.raises(WorkshopError, match="head L0H2 is both ablated and patched"):
        interventions(CFG, 4, ablate=[(0, 2)], patch={(0, 2): other})


def test_a_kv_cache_takes_zero_ablation_only():
    assert interventions(CFG, 1, ablate=[(0, 1)], cached=True)
    other = SimpleNamespace(head_outputs=np.zeros((2, 3, 1, 2)))
    for kwargs in ({"ablate": [(0, 1)], "how": "mean"}, {"patch": {(0, 1): other}}):
        with pytest.raises(WorkshopError, match="with a KV cache only the new tokens run"):
            interventions(CFG, 1, cached=True, **kwargs)


def test_a_numpy_array_of_pairs_is_a_list_of_heads():
    assert check_heads(CFG, np.array([[1, 2], [0, 1]])) == [(1, 2), (0, 1)]
    assert check_heads(CFG, np.zeros((0, 2), dtype=int)) == []
    hooks = interventions(CFG, 4, ablate=np.array([[1, 0]]))  # was numpy's truthiness error
    out = hooks("blocks.1.attn.hook_z", Z)
    assert out[0].tolist() == [[0, 0]] * 4 and out[1:].tolist() == Z[1:].tolist()
    assert not interventions(CFG, 4, ablate=np.zeros((0, 2), dtype=int))  # empty: a plain run
    for bad in (np.array([1, 2]), np.array([[0.0, 1.0]]), np.array([[True, False]]),
                np.array([[0, 1, 2]])):
        with pytest.raises(WorkshopError, match="give each head as .layer, head., two whole"):
            check_heads(CFG, bad)
    with pytest.raises(WorkshopError, match=r"pairs, e.g. \[\(18, 6\)\]; got array\(5\)"):
        check_heads(CFG, np.array(5))
    with pytest.raises(WorkshopError, match="patch takes a dict"):
        interventions(CFG, 4, patch=np.zeros(3))


@pytest.mark.parametrize(("heads", "shown"), [
    (["x" * 10**6], "got 'xxx"),  # a 1 MB string as a head
    ("y" * 10**6, "got 'yyy"),
    ([(10**5000, 0)], "head L<a number of ~5001 digits>H0 is past the model"),
    ([(0, 10**20)], "head L0H<a number of ~21 digits>"),
    ([[10**5000, 0, 1]], "got a list with a huge number"),
])
def test_an_enormous_value_gives_a_short_message(heads, shown):
    with pytest.raises(WorkshopError) as caught:
        check_heads(CFG, heads)
    message = str(caught.value)
    assert shown in message and len(message) < 200 and "\n" not in message
    with pytest.raises(WorkshopError) as caught:
        ablation(CFG, [(0, 0)], "z" * 10**6)
    assert len(str(caught.value)) < 200


def test_random_heads_refuses_more_than_half_the_heads():
    from attention_workshop.real.interventions import random_heads

    drawn = random_heads(CFG, [(0, 0), (0, 1), (1, 2)], draws=4)  # 3 of 6: the other 3
    assert all(sorted(d) == [(0, 2), (1, 0), (1, 1)] for d in drawn)
    with pytest.raises(WorkshopError, match="4 heads switched off leave 2 others to draw the "
                                            "random control of as many from: the model has 6 "
                                            "heads; give at most 3"):
        random_heads(CFG, [(0, 0), (0, 1), (1, 2), (1, 0)], draws=1)
