"""The toy's learned wiring (training/wiring.py) and the d = 256 aside (scale_aside.py):
gradients equal torch autograd, the data as the log describes it, numbers worked apart."""

import math

import numpy as np
import pytest

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED, softmax
from attention_workshop.embeddings import EMBED, embed, tokenize
from attention_workshop.training import scale_aside, wiring

torch = pytest.importorskip("torch")


def torch_loss(w_q, w_k, labelled, scaled):  # one sentence at a time, no padding, torch ops
    total = 0
    for sentence, kind in labelled:
        X = torch.tensor(embed(sentence))
        scores = (X @ w_q) @ (X @ w_k).T
        if scaled:
            scores = scores / math.sqrt(w_q.shape[1])
        bank = tokenize(sentence).index("bank")
        out = torch.softmax(scores, dim=-1)[bank] @ X  # [4]
        total = total - torch.log_softmax(out[:2], dim=0)[kind]  # (water, money) as scores
    return total / len(labelled)


@pytest.mark.parametrize(("d_k", "scaled"), [(2, True), (256, True), (256, False)])
def test_gradients_equal_autograd(d_k, scaled):
    labelled = wiring.sentences(wiring.TRAIN)
    w_q, w_k = wiring.start(d_k=d_k, seed=3, size=0.5)
    loss, d_q, d_k_ours, _ = wiring.loss_and_grads(w_q, w_k, wiring.make_batch(labelled), scaled)
    tq, tk = torch.tensor(w_q, requires_grad=True), torch.tensor(w_k, requires_grad=True)
    t_loss = torch_loss(tq, tk, labelled, scaled)
    t_loss.backward()
    assert loss == pytest.approx(t_loss.item(), rel=1e-13)
    for ours, theirs in ((d_q, tq.grad.numpy()), (d_k_ours, tk.grad.numpy())):
        assert np.abs(ours - theirs).max() <= 1e-10 * np.abs(theirs).max()


def test_sentences_keep_the_lesson_sentences_out_of_training():
    train = wiring.sentences(wiring.TRAIN)
    words = {w for s, _ in train for w in tokenize(s)}
    assert not words & {"river", "money"}
    assert ("the river bank", 0) in wiring.sentences(wiring.HELD_OUT)
    assert ("the money bank", 1) in wiring.sentences(wiring.HELD_OUT)
    assert len(train) == 4 * 8 and all(w in EMBED for w in words)


def test_wired_head_gives_module_2s_weights():
    """Module 2's lesson numbers: bank over (the, river, bank) = [0.159, 0.500, 0.341]."""
    weights, _ = wiring.bank_weights(W_Q_WIRED, W_K_WIRED, embed("the river bank")[None])
    np.testing.assert_allclose(weights[0, 2], [0.159, 0.500, 0.341], atol=5e-4)


def test_padding_changes_nothing():
    """A short sentence padded to a long one's length keeps its weights (padding is masked)."""
    data = wiring.make_batch([("the lake bank", 0), ("the bank by the lake", 0)])
    w_q, w_k = wiring.start()
    weights, _ = wiring.bank_weights(w_q, w_k, data.X, data.mask)
    X = embed("the lake bank")
    alone = softmax((X @ w_q) @ (X @ w_k).T / np.sqrt(2))
    np.testing.assert_allclose(weights[0, :3, :3], alone, rtol=1e-14)
    assert not weights[0, :, 3:].any()


def test_kinds_right_counts_like_a_loop():
    labelled = wiring.sentences(wiring.HELD_OUT)
    w_q, w_k = wiring.start(seed=5, size=1.0)
    right = 0
    for sentence, kind in labelled:
        X = embed(sentence)
        bank = tokenize(sentence).index("bank")
        out = softmax((X @ w_q) @ (X @ w_k).T / np.sqrt(2))[bank] @ X
        right += int((out[0] > out[1]) == (kind == 0))
    assert wiring.kinds_right(w_q, w_k, wiring.make_batch(labelled)) == right


def test_training_lowers_the_loss_and_learns_to_look_at_the_topic():
    data = wiring.make_batch(wiring.sentences(wiring.TRAIN))
    w_q, w_k, losses, norms = wiring.train(*wiring.start(), data, steps=wiring.STEPS)
    assert losses[-1] < losses[0] - 0.1 and len(norms) == wiring.STEPS + 1
    weights, _ = wiring.bank_weights(w_q, w_k, embed("the river bank")[None])
    assert weights[0, 2, 1] > 0.9  # river: never seen in training


def test_aside_pinned_share_by_a_loop():
    """Rows pinned at the start, counted sentence by sentence with the core's softmax."""
    labelled = wiring.sentences(wiring.TRAIN)
    w_q, w_k = wiring.start(d_k=8, seed=0, size=1.0)
    rows = [softmax((embed(s) @ w_q) @ (embed(s) @ w_k).T).max(axis=-1) for s, _ in labelled]
    expected = np.mean(np.concatenate(rows) > scale_aside.PINNED)
    run = scale_aside.measure(False, d=8, starts=1, steps=2)
    assert run.pinned[0] == pytest.approx(expected, abs=1e-15)
    assert run.losses.shape == (1, 3) and run.on_topic.shape == (1, 2)
    bank_on_topic = [softmax((embed(s) @ w_q) @ (embed(s) @ w_k).T)[
        tokenize(s).index("bank"), scale_aside.topic_positions([(s, k)])[0]] for s, k in labelled]
    assert run.on_topic[0, 0] == pytest.approx(np.mean(bank_on_topic), rel=1e-12)
