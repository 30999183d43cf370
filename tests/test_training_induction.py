"""The induction run (training/induction.py): its data as described, its training equal to
torch's on the same batches, and the helpers the log reads, on worked examples."""

import numpy as np
import pytest
from training_reference import torch_forward

from attention_workshop.real.analysis.head_patterns import pattern_scores, repeated_ids
from attention_workshop.training import induction, transformer
from attention_workshop.training.induction import Snapshot

torch = pytest.importorskip("torch")


def test_batch_repeats_a_segment_at_varied_distances():
    cfg = induction.CONFIG
    data = induction.batch(np.random.default_rng(0), 200, cfg)
    T, S = cfg.n_ctx + 1, induction.SEGMENT
    distances = set()
    for row, first, second in zip(data.ids, data.first, data.second, strict=True):
        a = int(np.argmax(first))  # target j is token j + 1, and the first copy counts from
        #                            its second token: the first True is at a
        b = int(np.argmax(second))
        assert first.sum() == second.sum() == S - 1
        np.testing.assert_array_equal(row[a:a + S], row[b:b + S])  # the two copies
        assert b >= a + S and b + S <= T  # no overlap, inside the sequence
        distances.add(b - a)
    assert len(distances) >= 4  # no single offset to learn from the positions


def test_adam_training_equals_torch_on_the_same_batches():
    """Five steps of our loop against torch autograd + torch.optim.Adam, float64."""
    cfg = transformer.Config(n_vocab=11, n_ctx=8, d_model=8, n_layer=2, n_head=2)
    rng = np.random.default_rng(4)
    start = transformer.init_params(cfg, rng)
    batches = [induction.batch(rng, 6, cfg, segment=3) for _ in range(5)]
    params, state = dict(start), induction.adam_start(start)
    tp = {n: torch.tensor(a, requires_grad=True) for n, a in start.items()}
    opt = torch.optim.Adam(tp.values(), lr=1e-2)
    for data in batches:
        _, grads = induction.loss_and_grads(params, cfg, data)
        params, state = induction.adam(params, grads, state, 1e-2)
        opt.zero_grad()
        logits = torch_forward(tp, cfg, torch.tensor(data.ids[:, :-1]))
        torch.nn.functional.cross_entropy(logits.reshape(-1, cfg.n_vocab),
                                          torch.tensor(data.ids[:, 1:]).ravel()).backward()
        opt.step()
    for name in start:
        theirs = tp[name].detach().numpy()
        assert np.abs(params[name] - theirs).max() <= 1e-10 * np.abs(theirs).max()
        assert np.abs(params[name] - start[name]).max() > 1e-3  # it did move


def test_snapshot_scores_are_module_4s_on_the_pattern_sequence():
    cfg = transformer.Config(n_vocab=16, n_ctx=8, d_model=8)
    params = transformer.init_params(cfg, np.random.default_rng(2))
    data = induction.batch(np.random.default_rng(3), 4, cfg, segment=3)
    snap = induction.snapshot(params, cfg, 7, 1.5, data)
    ids = repeated_ids(16, half=4)
    _, cache = transformer.forward(params, cfg, np.array([ids]))
    np.testing.assert_array_equal(snap.induction, pattern_scores(cache["attentions"][:, 0],
                                                                 "induction"))
    # by hand: induction cell of row r = 4 + j is column j + 1 (the token after its first copy)
    att = cache["attentions"][:, 0]
    by_hand = np.mean([att[..., 4 + j, j + 1] for j in range(4)], axis=0)
    np.testing.assert_allclose(snap.induction, by_hand, rtol=1e-15)
    assert snap.step == 7 and snap.loss == 1.5


def snaps(seconds, induction_l1):
    return [Snapshot(step, 0.0, 3.5, s, np.array([[0.0, 0.0], [i, 0.1]]), np.zeros((2, 2)),
                     None) for step, s, i in zip((0, 50, 100, 150), seconds, induction_l1,
                                                 strict=True)]


def test_phase_change_and_first_above_worked_examples():
    s = snaps([3.4, 3.3, 2.0, 1.5], [0.1, 0.2, 0.6, 0.8])
    assert induction.phase_change(s) == (50, 100)  # falls 0.1, 1.3, 0.5
    assert induction.first_above(s, "induction", 1, 0.5) == 100
    assert induction.first_above(s, "induction", 1, 0.9) is None


def test_ablating_every_head_leaves_only_the_direct_path():
    """With all heads off, the logits are (W_E[ids] + W_pos) @ W_U, worked apart."""
    cfg = transformer.Config(n_vocab=10, n_ctx=6, d_model=4)
    params = transformer.init_params(cfg, np.random.default_rng(0))
    ids = np.random.default_rng(1).integers(0, 10, (3, 6))
    every = [(lay, h) for lay in range(2) for h in range(2)]
    logits, _ = transformer.forward(params, cfg, ids, ablate=every)
    direct = (params["W_E"][ids] + params["W_pos"][:6]) @ params["W_U"]
    np.testing.assert_allclose(logits, direct, rtol=1e-13)
