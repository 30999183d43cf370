"""An induction head forms: the attention-only transformer trained on repeated segments.

Each training sequence: n_ctx + 1 random tokens in which a SEGMENT-token stretch appears
twice, the second copy starting at a random distance after the first (no overlap), so no
fixed offset can be learned from the positions alone. The model reads the first n_ctx
tokens and predicts each next one: the first copy's tokens are random (nothing to learn,
log n_vocab nats), the second copy's follow from the first, for a model that finds them.
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.real.analysis.head_patterns import pattern_scores, repeated_ids
from attention_workshop.real.blas_threads import one_blas_thread
from attention_workshop.training import transformer
from attention_workshop.training.cross_entropy import cross_entropy, token_losses
from attention_workshop.training.optimizers import adam, adam_start

CONFIG = transformer.Config(n_vocab=32, n_ctx=16, d_model=32, n_layer=2, n_head=2)
SEGMENT = 6  # tokens in the repeated stretch
BATCH = 32  # sequences per step, each fresh
LR = 6e-3  # Adam's step
STEPS = 400
EVERY = 25  # steps between snapshots
HELD_OUT = 128  # sequences of the fixed evaluation batch


@dataclass(frozen=True)
class Batch:
    ids: np.ndarray  # [B, n_ctx + 1] token ids
    first: np.ndarray  # [B, n_ctx] bool: target ids[:, 1:] lies in the first copy, after its start
    second: np.ndarray  # [B, n_ctx] bool: ... in the second copy, after its start


def batch(rng, size, cfg, segment=SEGMENT):  # -> Batch, every row a fresh sequence
    """Example: one row with segment 3 might be 7 1 4 | 9 ... 7 1 4 ...: targets 1 4 of the
    second copy are predictable from the first (its first token 7 is not: where a copy
    starts is random)."""
    T = cfg.n_ctx + 1
    ids = rng.integers(0, cfg.n_vocab, (size, T))
    starts = [(a, b) for a in range(T - segment) for b in range(a + segment, T - segment + 1)]
    a, b = np.array(starts)[rng.integers(0, len(starts), size)].T  # [B] each
    rows, offsets = np.arange(size)[:, None], np.arange(segment)
    ids[rows, b[:, None] + offsets] = ids[rows, a[:, None] + offsets]
    target = np.arange(1, T)  # target j of row i is ids[i, j + 1] ... as position
    first = (target > a[:, None]) & (target < a[:, None] + segment)
    second = (target > b[:, None]) & (target < b[:, None] + segment)
    return Batch(ids, first, second)


def loss_and_grads(params, cfg, data):  # -> (mean next-token loss, {name: gradient})
    logits, cache = transformer.forward(params, cfg, data.ids[:, :-1])
    loss, d_logits = cross_entropy(logits, data.ids[:, 1:])
    return loss, transformer.backward(d_logits, params, cfg, cache)


@dataclass(frozen=True)
class Snapshot:
    step: int
    loss: float  # the training batch's loss (all targets), before this step's update
    first_copy: float  # the evaluation batch's loss on the first copy (nats)
    second_copy: float  # ... on the second copy
    induction: np.ndarray  # [L, H] Module 4's induction score on the pattern sequence
    previous: np.ndarray  # [L, H] its previous-token score
    attentions: np.ndarray  # [L, H, T, T] every head's weights on the pattern sequence
    params: dict | None = None  # {name: array}: a copy of the parameters at this step


def held_out(cfg=CONFIG, seed=0, segment=SEGMENT):  # -> the fixed evaluation Batch
    return batch(np.random.default_rng(seed + 1), HELD_OUT, cfg, segment)  # never trained on


def pattern_sequence(cfg=CONFIG):  # -> Module 4's test sequence at this size: half, twice
    """n_ctx / 2 distinct random tokens, then the same again (head_patterns.repeated_ids)."""
    return repeated_ids(cfg.n_vocab, half=cfg.n_ctx // 2)


def copy_losses(params, cfg, data, ablate=()):  # -> (first_copy, second_copy) mean losses
    """The batch's next-token loss on each copy; `ablate`: (layer, head) pairs switched off
    (output set to zero, Module 5's ablation)."""
    logits, _ = transformer.forward(params, cfg, data.ids[:, :-1], ablate)
    losses = token_losses(logits, data.ids[:, 1:])  # [B, n_ctx]
    return float(losses[data.first].mean()), float(losses[data.second].mean())


def snapshot(params, cfg, step, loss, data):  # -> Snapshot on the evaluation batch `data`
    _, cache = transformer.forward(params, cfg, np.asarray(pattern_sequence(cfg))[None])
    att = cache["attentions"][:, 0]  # [L, H, T, T]
    kept = {name: p.copy() for name, p in params.items()}  # a copy: the replay's, never trained
    return Snapshot(step, loss, *copy_losses(params, cfg, data),
                    pattern_scores(att, "induction"), pattern_scores(att, "previous"), att, kept)


def train(cfg=CONFIG, steps=STEPS, seed=0, batch_size=BATCH, lr=LR, every=EVERY, params=None,
          say=None, segment=SEGMENT):  # -> (params, [Snapshot])
    """Adam on fresh batches; a Snapshot every `every` steps (and at the end); say(snapshot)
    as each is taken. `params`: a start of one's own (default: init_params from `seed`)."""
    with one_blas_thread():  # tiny products: a second thread only waits, and rounds otherwise
        return _train(cfg, steps, seed, batch_size, lr, every, params, say, segment)


def _train(cfg, steps, seed, batch_size, lr, every, params, say, segment):
    rng = np.random.default_rng(seed)
    start = transformer.init_params(cfg, rng)  # drawn either way: the batches stay the same
    params = start if params is None else params
    evaluation = held_out(cfg, seed, segment)
    state = adam_start(params)
    snaps = []
    for step in range(steps + 1):
        data = batch(rng, batch_size, cfg, segment)
        loss, grads = loss_and_grads(params, cfg, data)
        if step % every == 0 or step == steps:
            snaps.append(snapshot(params, cfg, step, loss, evaluation))
            if say is not None:
                say(snaps[-1])
        if step < steps:
            params, state = adam(params, grads, state, lr)
    return params, snaps


def phase_change(snaps):  # [Snapshot] -> (step before, step after): the steepest fall
    """The interval between two snapshots in which the second-copy loss fell most.

    Example: second-copy losses 3.4, 3.3, 2.0, 1.5 at steps 0, 50, 100, 150 -> (50, 100).
    """
    falls = [a.second_copy - b.second_copy for a, b in zip(snaps[:-1], snaps[1:], strict=True)]
    i = int(np.argmax(falls))
    return snaps[i].step, snaps[i + 1].step


def first_above(snaps, field, layer, level):  # -> the first step a head of `layer` passes
    """Example: first_above(snaps, "induction", 1, 0.5) -> 400 (or None if none does)."""
    return next((s.step for s in snaps if getattr(s, field)[layer].max() > level), None)
