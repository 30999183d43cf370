"""What switching heads off does to the next-token loss: the heads themselves, and as many
random heads beside them (the control that says whether these heads matter or any would).

On a part repeated once (head_patterns' test sequence) the loss is measured on each half:
the first half's tokens are new (no head can know them), the repeat's were all seen once,
so a model that copies (induction heads) predicts them well. Any other text: one loss, on
every next token. The layers below the first switched-off head are reused from the plain
run (resume.py), so an ablation in layer 17 of 30 runs 13 layers.

Example: with smollm2 = load_model("smollm2", dtype=np.float64) and ids, lead =
head_patterns.sequence_for(smollm2): effect(smollm2, smollm2.run(ids), [(18, 6), (17, 4),
(17, 3)], lead=lead).after["repeat"] -> 5.87 (.before["repeat"] 1.99; results.log [S18]).
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.real.interventions import ablation, check_heads, random_heads
from attention_workshop.real.resume import continued, first_layer


@dataclass(frozen=True)
class Effect:
    heads: list  # [(layer, head)] switched off
    how: str  # "zero" or "mean"
    before: dict  # {part: mean next-token loss in nats}: {"first", "repeat"} or {"text"}
    after: dict  # the same parts with the heads off
    random: list  # [(heads, {part: nats})]: one per draw of as many random heads


def loss_rows(ids, lead=None):  # [T] ids, lead (None: not a repeated part) -> {part: rows}
    """The positions whose next token each part predicts. Example: 1 lead + 3 tokens twice
    (T 7) -> {"first": [1, 2], "repeat": [4, 5]} (targets r = 1, 2 and r = 4, 5 of the
    repeated part, as head_patterns.copy_loss); lead None, T 4 -> {"text": [0, 1, 2]}."""
    if lead is None:
        return {"text": np.arange(len(ids) - 1)}
    half = (len(ids) - lead) // 2
    return {"first": np.arange(lead, lead + half - 1),
            "repeat": np.arange(lead + half, lead + 2 * half - 1)}


def next_token_loss(result, rows):  # RunResult, positions -> mean -log p(next token), nats
    """With the logits of those rows only (a tied head multiplies by the whole vocabulary).
    Example: logits putting all mass on each next token -> 0.0; all zero -> log n_vocab."""
    from attention_workshop.real.blas_threads import one_blas_thread

    ids = np.asarray(result.ids)
    with one_blas_thread():  # as the forward passes: digits that never depend on the threads
        logits = np.asarray(result.head(result.hidden[rows]), dtype=np.float64)  # [n, V]
    top = logits.max(axis=-1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.exp(logits - top).sum(axis=-1))  # [n]
    return float((log_norm - logits[np.arange(len(rows)), ids[rows + 1]]).mean())


def losses(result, parts):  # RunResult, {part: rows} -> {part: nats}
    return {part: next_token_loss(result, rows) for part, rows in parts.items()}


def switched_off(model, plain, heads, how="zero"):  # -> RunResult with the heads off
    """model.run(plain.ids, ablate=heads, how=how), the layers below the first head reused."""
    hooks = ablation(model.config, heads, how)
    return continued(model, plain, first_layer(hooks) or 0, hooks) if hooks else plain


def effect(model, plain, heads, how="zero", draws=5, seed=0, lead=None, parts=None):
    # Model, its plain RunResult on the ids, heads -> Effect
    """The loss before and after, and after `draws` draws of as many random heads from the
    same layers (interventions.random_heads). `parts`: loss_rows(...) unless given (Module 5
    asks for the repeat only)."""
    if model.config.causal is False or plain.head is None:
        from attention_workshop.errors import WorkshopError

        raise WorkshopError(f"{model.name} is an encoder: its outputs are no next-token "
                            "forecast, so there is no loss to compare; give a decoder, e.g. "
                            "--model smollm2")
    heads = check_heads(model.config, heads)
    parts = loss_rows(plain.ids, lead) if parts is None else parts
    controls = random_heads(model.config, heads, draws, seed) if draws else []
    return Effect(heads=heads, how=how, before=losses(plain, parts),
                  after=losses(switched_off(model, plain, heads, how), parts),
                  random=[(drawn, losses(switched_off(model, plain, drawn, how), parts))
                          for drawn in controls])
