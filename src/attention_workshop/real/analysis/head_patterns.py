"""Heads found by pattern: every head of a model scored on one test sequence, then ranked.

The sequence: HALF = 50 random token ids (np.random.default_rng(SEED), no special token,
no id twice), then the same 50 again. A model whose tokenizer puts a special token first
in every text (BERT's [CLS]) gets that token in front, as it always sees; GPT-2 and Llama
tokenizers add none, so nothing leads. Positions r count on the repeated part only:
r = 0 .. 2 HALF - 1 sits at sequence position i = lead + r (lead = 1 or 0).

With A = a head's attention weights [T, T] (row i: where token i looks):

    induction  mean over r = HALF .. 2 HALF - 1 of A[i, i - HALF + 1]: the token r looks at
               the token that came after its previous occurrence (r - HALF + 1), the one
               it would copy next
    previous   mean over r = 1 .. 2 HALF - 1 of A[i, i - 1]: the token just before
    sink       mean over i = 1 .. T - 1 of A[i, 0]: the sequence's first position (the lead
               when there is one, else the first random token)

Each is a mean of weights, so 0 <= score <= 1. Example: an induction head that puts all
of every second-half row on the right token scores 1.0; a head spreading attention evenly
over a causal row of i + 1 tokens scores the mean of 1 / (i + 1) there (about 0.014:
chance() gives it for any kind and sequence).

Copying shows in the loss: the mean next-token cross entropy (nats) on the targets r =
1 .. HALF - 1 (first half: tokens never seen) against r = HALF + 1 .. 2 HALF - 1 (second
half: each predicted from a token seen before, whose successor is known). A model with
induction heads predicts the second half far better. Only a causal model's logits say
this; an encoder (MiniLM) sees the whole sequence, so its "next token" is not a forecast.
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.errors import WorkshopError

KINDS = {  # kind -> what its cells are, in one line (commands/heads.py prints it)
    "induction": "each token of the repeat -> the token after its previous occurrence",
    "previous": "each token -> the token just before it",
    "sink": "each token after the first -> the first position",
}
HALF = 50  # random tokens before the repeat (the issue asks for 50 or more)
SEED = 0
SEEDS = 5  # sequences `heads` averages over by default, seeds 0-4: five 100-token SmolLM2
#           passes, about 1.5 s by docs/benchmarks.md (512 tokens in 1.4 s on one thread)
MAX_SEEDS = 100
PREVIOUS_HEAD = 0.5  # a head is a previous-token head if its previous score is above this:
#                      its look at the word just before is position, whatever the words


@dataclass(frozen=True)
class HeadScores:
    kind: str  # a key of KINDS
    ids: list  # the exact ids the scores were computed on, lead included
    scores: np.ndarray  # [n_layer, n_head]
    top: list  # [(layer, head, score)], best first
    loss_first: float | None = None  # mean next-token loss (nats) on the first half, if causal
    loss_second: float | None = None  # ... and on the repeat

    def __repr__(self):
        """Example: HeadScores(induction, 12 layers x 12 heads on 100 ids, top L5 H1 0.912,
        loss 10.83 -> 1.21 nats)."""
        L, H = self.scores.shape
        best = f", top L{self.top[0][0]} H{self.top[0][1]} {self.top[0][2]:.3f}" if self.top else ""
        loss = ("" if self.loss_first is None else
                f", loss {self.loss_first:.2f} -> {self.loss_second:.2f} nats")
        return (f"HeadScores({self.kind}, {L} layers x {H} heads on {len(self.ids)} ids"
                f"{best}{loss})")


def check_kind(kind):  # str -> None, or WorkshopError
    if kind not in KINDS:
        raise WorkshopError(f"unknown head pattern '{kind}'; choose one of {', '.join(KINDS)}")


def repeated_ids(n_vocab, special=(), lead=None, half=HALF, seed=SEED):  # -> list of 2 half (+1)
    """`half` distinct ids drawn from 0 .. n_vocab - 1 minus `special`, twice; `lead` first.

    Example: repeated_ids(10, special={0}, half=3) -> [8, 5, 6, 8, 5, 6] (the same on every
    call: the seed is fixed); with lead=0 -> [0, 8, 5, 6, 8, 5, 6]."""
    pool = np.setdiff1d(np.arange(n_vocab), np.fromiter(special, dtype=np.int64))
    if len(pool) < half:
        raise WorkshopError(f"the model has {len(pool)} ordinary tokens, but the head patterns "
                            f"need {half} different ones; give a model with a larger vocabulary")
    first = np.random.default_rng(seed).choice(pool, size=half, replace=False)
    return ([] if lead is None else [int(lead)]) + [int(i) for i in first] * 2


def pattern_cells(kind, T, lead=0):  # -> (rows [n], cols [n]): the weights a score averages
    """Example: pattern_cells("induction", 7, lead=1) (half 3) -> rows [4, 5, 6], cols
    [2, 3, 4]; pattern_cells("sink", 4) -> rows [1, 2, 3], cols [0, 0, 0]."""
    half, odd = divmod(T - lead, 2)
    check_kind(kind)
    if odd or half < 2:
        raise WorkshopError(f"a sequence of {T} tokens after {lead} leading is not a part "
                            "repeated once; give 2 x half tokens, half at least 2")
    if kind == "induction":
        r = np.arange(half, 2 * half)
        return lead + r, lead + r - half + 1
    if kind == "previous":
        r = np.arange(1, 2 * half)
        return lead + r, lead + r - 1
    rows = np.arange(1, T)
    return rows, np.zeros_like(rows)


def pattern_scores(attentions, kind, lead=0):  # [L, H, T, T] -> [L, H]
    """The mean weight on the kind's cells, per head (float64).

    Example: every row of every head putting 1.0 on its previous token -> previous 1.0
    everywhere, induction 0.0 (the cells lie elsewhere)."""
    rows, cols = pattern_cells(kind, attentions.shape[-1], lead)
    return attentions[..., rows, cols].astype(np.float64).mean(axis=-1)


def chance(kind, T, lead=0, causal=True):  # -> the score of a head that spreads evenly
    """Each row's weight spread evenly over what it may see (i + 1 tokens if causal, else T):
    the score no pattern at all gets. Example: chance("sink", 4, causal=False) -> 0.25;
    chance("sink", 4) -> (1/2 + 1/3 + 1/4) / 3 = 0.3611."""
    seen = np.tril(np.ones((T, T))) if causal else np.ones((T, T))
    return float(pattern_scores((seen / seen.sum(axis=-1, keepdims=True))[None, None], kind,
                                lead)[0, 0])


def ranked(scores, top):  # [L, H], int -> [(layer, head, score)], highest first
    """Ties keep layer-then-head order. Example: [[0.1, 0.9], [0.9, 0.2]], top 2 ->
    [(0, 1, 0.9), (1, 0, 0.9)]."""
    order = np.argsort(-scores, axis=None, kind="stable")[:top]
    return [(int(i) // scores.shape[1], int(i) % scores.shape[1], float(scores.flat[i]))
            for i in order]


def copy_loss(logits, ids, lead=0):  # [T, n_vocab], [T] -> (loss_first, loss_second) in nats
    """Mean cross entropy of the next token, -log softmax(logits[i])[ids[i + 1]], on the
    targets r = 1 .. half - 1 against r = half + 1 .. 2 half - 1 (the module docstring).

    Example: logits that put all mass on the right token -> (0.0, 0.0); all-zero logits ->
    (log n_vocab, log n_vocab)."""
    logits = np.asarray(logits, dtype=np.float64)
    ids = np.asarray(ids)
    half = (len(ids) - lead) // 2
    top = logits.max(axis=-1)  # [T]
    total = np.log(np.exp(logits - top[:, None]).sum(axis=-1))  # [T]: log sum exp - top

    def mean_loss(targets):  # positions r of the predicted tokens
        i = lead + targets  # log softmax picked where it is read, not built [T, n_vocab]
        return float(-(logits[i - 1, ids[i]] - top[i - 1] - total[i - 1]).mean())

    return mean_loss(np.arange(1, half)), mean_loss(np.arange(half + 1, 2 * half))


def sequence_for(model, half=HALF, seed=SEED):  # Model -> ids, lead (0 or 1)
    """The test sequence for this model, checked against its positions before any run."""
    from attention_workshop.real.model import MAX_TOKENS, special_ids

    first = model.tokenizer.encode("the")
    lead = first.ids[0] if first.special_tokens_mask and first.special_tokens_mask[0] else None
    ids = repeated_ids(model.config.n_vocab, special_ids(model.tokenizer), lead, half, seed)
    room = min(model.config.n_ctx, MAX_TOKENS)
    if len(ids) > room:
        raise WorkshopError(f"the head patterns need {len(ids)} positions ({half} random tokens "
                            f"repeated once{', after a leading token' * (lead is not None)}), "
                            f"but {model.name} has {room}; give a model with a longer context")
    return ids, int(lead is not None)


def heads(model, kind, top=10, result=None, seed=SEED):  # Model, str, int -> HeadScores
    """Every head of `model` scored by the pattern `kind`, the best `top` ranked, on the
    sequence of random tokens drawn with `seed`. `result`: the model's run on
    sequence_for(model)'s ids, if already made (one run serves all kinds: patterns()).

    Example: heads(load_model("smollm2"), "induction", top=3).top -> [(18, 6, 0.935),
    (17, 4, 0.802), (17, 3, 0.794)] (to 3 decimals), .loss_first 14.13 -> .loss_second 1.99;
    with MiniLM .loss_first is None (an encoder has no forecast)."""
    return patterns(model, (kind,), top, result, seed)[kind]


def patterns(model, kinds=tuple(KINDS), top=10, result=None, seed=SEED):
    # Model, [str], int -> {kind: HeadScores}
    """heads() for each of `kinds`, on one run of the sequence, its copy loss computed once
    (the loss over SmolLM2's 49,152 next-token scores is a kind's whole scoring otherwise).
    Example: patterns(m, ("induction", "sink"), 3)["sink"] == heads(m, "sink", 3)."""
    for kind in kinds:
        check_kind(kind)
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise WorkshopError(f"top must be a whole number, at least 1 (got {top!r})")
    ids, lead = sequence_for(model, seed=seed)
    if result is None:
        result = model.run(ids)
    elif result.ids != list(ids):
        raise ValueError("result is not the run of this model's pattern sequence")
    loss = (None, None)
    if model.config.causal and result.logits is not None:  # an encoder's are no forecast
        loss = copy_loss(result.logits, ids, lead)
    found = {}
    for kind in kinds:
        scores = pattern_scores(result.attentions, kind, lead)
        found[kind] = HeadScores(kind, ids, scores, ranked(scores, top), *loss)
    return found



@dataclass(frozen=True)
class HeadSpread:
    """A pattern's scores over several random sequences: their mean, their spread, and how
    steady the ranking is."""

    kind: str
    seeds: list  # the seeds of the sequences, e.g. [0, 1, 2, 3, 4]
    runs: list  # [HeadScores], one per seed: .ids, .scores [L, H], .top
    scores: np.ndarray  # [L, H] the mean over the runs
    spread: np.ndarray  # [L, H] their standard deviation (ddof 1; 0 for one run)
    top: list  # [(layer, head, mean score)], best first, ranked by the mean
    loss_first: float | None = None  # the copy loss's mean over the runs, if causal
    loss_second: float | None = None

    def top_counts(self, rank=0):  # -> [((layer, head), runs where it stood at `rank`)]
        """Example: an induction head first on every sequence -> [((18, 6), 5)]; a second
        place shared -> [((17, 4), 3), ((17, 3), 2)], most often first."""
        counts = {}
        for run in self.runs:
            if rank < len(run.top):
                key = run.top[rank][:2]
                counts[key] = counts.get(key, 0) + 1
        return sorted(counts.items(), key=lambda kv: -kv[1])


def heads_over_seeds(model, kind, top=10, seeds=SEEDS):  # Model, str, int, int -> HeadSpread
    """`heads` on `seeds` sequences (seeds 0 .. seeds - 1: seed 0 is Module 4's), averaged.
    One sequence's score is one sample: SmolLM2's best induction head, L18 H6, scores 0.935
    on seed 0 and about 0.88-0.92 on others, and the second place changes hands.

    Example: heads_over_seeds(m, "induction", 3, seeds=2).scores == the mean of
    heads(m, "induction", seed=0).scores and heads(m, "induction", seed=1).scores."""
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= MAX_SEEDS:
        raise WorkshopError(f"seeds must be a whole number from 1 to {MAX_SEEDS} (got "
                            f"{seeds!r})")
    runs = [heads(model, kind, top, seed=s) for s in range(seeds)]
    stack = np.stack([r.scores for r in runs])  # [seeds, L, H]
    spread = stack.std(axis=0, ddof=1) if seeds > 1 else np.zeros_like(stack[0])
    mean = stack.mean(axis=0)
    loss = (None, None) if runs[0].loss_first is None else (
        float(np.mean([r.loss_first for r in runs])), float(np.mean([r.loss_second for r in runs])))
    return HeadSpread(kind, list(range(seeds)), runs, mean, spread, ranked(mean, top), *loss)
