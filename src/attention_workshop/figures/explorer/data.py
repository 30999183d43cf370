"""What the explorer page embeds, as plain JSON-ready values: the table and the lesson's wiring
(the page recomputes Modules 1-2 from them), [S5]'s measurements, and a real model's attention.

Every number comes from the engine: [S5]'s rows are the log's own; the slider's other widths are
the same measurement (modules.module2.scaling_experiment) with seed EXTRA_SEED; the real
model's weights are the run's own, at full precision.
"""

import numpy as np

from attention_workshop.embeddings import SENT_MONEY, SENT_RIVER

TITLE = "attention-workshop explorer"
EXTRA_DIMS = (1, 2, 8, 32, 128)  # the slider's widths beyond the lesson's 4, 16, 64, 256
EXTRA_SEED = 1
EXAMPLE_SEED = 2  # one example row (a query against 8 keys) per width


def toy_data(sentence=SENT_RIVER, word="bank", own=(None, None, None, None)):
    # -> the table, the wiring the page starts with, where to start; own: explore's
    # (Table, W_Q, W_K, W_V) from the learner's files (tables.py), None for the built-in ones
    """Example: toy_data()["table"]["words"][0] -> ["the", [0.0, 0.0, 0.0, 1.0]];
    toy_data()["wiring"]["name"] -> "the lesson's wiring" (with a W_Q of one's own: "your
    wiring", and the page's reset button says so)."""
    from attention_workshop.explore.tables import builtin_table, builtin_wiring

    table, own_q, own_k, w_v = own
    table = table or builtin_table()
    lesson_q, lesson_k = builtin_wiring()
    w_q, w_k = own_q or lesson_q, own_k or lesson_k
    lesson = own_q is None and own_k is None and w_v is None
    return {"table": {"axes": list(table.axes),
                      "words": [[w, np.asarray(row, float).tolist()]
                                for w, row in table.words.items()]},
            "wiring": {"channels": list(w_q.channels), "w_q": w_q.matrix.tolist(),
                       "w_k": w_k.matrix.tolist(),
                       "w_v": None if w_v is None else w_v.matrix.tolist(),
                       "name": "the lesson's wiring" if lesson else "your wiring",
                       "lesson": lesson},
            "lesson": {"sentences": [SENT_RIVER, SENT_MONEY], "word": "bank"},
            "start": {"sentence": sentence, "word": word}}


def scaling_data(lesson):  # module2.Scaling as [S5] measured it -> the page's [S5]
    """The lesson's rows, the curve over more widths, and one example row of scores per width."""
    from attention_workshop.modules.module2 import ROW, TRIALS, scaling_experiment

    rows = lambda s: [[d, *m] for d, *m in zip(s.dims, s.std, s.unscaled, s.scaled, strict=True)]  # noqa: E731
    curve = sorted(rows(scaling_experiment(dims=EXTRA_DIMS, seed=EXTRA_SEED)) + rows(lesson))
    rng = np.random.default_rng(EXAMPLE_SEED)
    examples = []
    for d, *_ in curve:
        draws = rng.standard_normal((1 + ROW, d))  # the query, then its keys
        examples.append([d, (draws[1:] @ draws[0]).tolist()])  # [ROW] scores
    return {"rows": ROW, "trials": TRIALS, "extra_seed": EXTRA_SEED, "lesson": rows(lesson),
            "curve": curve, "examples": examples}


def real_data(model_name, runs, source):  # str, {sentence: RunResult}, str -> dict
    """Each run's tokens and attentions [n_layer][n_head][T][T], exactly as computed.

    A lesson sentence also names its pair: bank and its topic word ([S7]'s bank -> river).
    """
    first = next(iter(runs.values()))
    n_layer, n_head = first.attentions.shape[:2]
    return {"model": model_name, "layers": int(n_layer), "heads": int(n_head),
            "d_head": int(first.queries.shape[-1]), "source": source,
            "runs": [{"sentence": s, "tokens": list(r.tokens), "special": list(r.special),
                      "attentions": np.asarray(r.attentions, dtype=float).tolist(),
                      **_lesson_pair(s, r.tokens)} for s, r in runs.items()]}


def _lesson_pair(sentence, tokens):  # {"pair": [bank, topic]} for a lesson sentence, else {}
    topic = {SENT_RIVER: "river", SENT_MONEY: "money"}.get(sentence)
    if topic is None or "bank" not in tokens or topic not in tokens:
        return {}
    return {"pair": [tokens.index("bank"), tokens.index(topic)]}


def model_runs(model, sentences, done=None):  # Model, [str] -> {sentence: RunResult}
    """`sentences`, then the lesson sentences, each run once; `done` holds runs already made.

    Example: model_runs(m, ["the fish"]) -> runs of "the fish", "the river bank", "the money bank".
    """
    done = done or {}
    order = dict.fromkeys([*sentences, SENT_RIVER, SENT_MONEY])
    return {s: done[s] if s in done else model.run(s) for s in order}


def explorer_data(scaling, real=None, sentence=SENT_RIVER, word="bank", own=(None,) * 4,
                  decoder=None, training=None, switch=None):
    # -> the page's data; own: the learner's (Table, W_Q, W_K, W_V), see toy_data; decoder:
    # decoder_section(Module 4's Result), or None (no Module 4 panel); training:
    # data_module6.training_section(Module 6's Result), or None (no Module 6 panel); switch:
    # data_module5.switch_section(Module 5's Result), or None (no Module 5 panel)
    return {"title": TITLE, **toy_data(sentence, word, own), "s5": scaling_data(scaling),
            "real": real, "decoder": decoder, "training": training, "switch": switch}


def thousandths(x):  # array of weights or scores -> nested lists of whole thousandths
    """What the page prints, rounded as Python's f"{x:.3f}" rounds (each number's exact binary
    value, ties to even), kept as whole numbers: 0.4213 -> 421 (the page prints 421 / 1000 as
    "0.421"); half the bytes of 0.421 written out (SmolLM2's continuation: 145 KB, not 292).
    Example: thousandths([0.0625]) -> [62]."""
    return np.vectorize(lambda v: int(f"{v:.3f}".replace(".", "")), otypes=[int])(
        np.asarray(x, dtype=float)).tolist()


def decoder_section(m4):  # modules.module4.Result -> the page's Module 4 (weights in thousandths)
    """SmolLM2's continuation token by token (each step's row of every head, over the tokens
    before it), the pattern scores of every head, and the sizes the KV-cache sum is made of.
    The chat answer is left out to keep the page small (its prompt is the whole chat template)."""
    from attention_workshop.modules import module4

    cfg, g = m4.model.config, m4.continuation
    per_number = g.cache_bytes_per_token // (2 * cfg.n_layer * cfg.n_kv_head * cfg.d_head)
    layer, head, _ = m4.patterns["induction"].top[0]
    copies = copy_steps(g, layer, head)
    start = max(copies, key=lambda c: c[3])[0] if copies else 0  # where it looks hardest
    return {"model": module4.MODEL_NAME, "layers": cfg.n_layer, "heads": cfg.n_head,
            "start": {"step": start, "layer": int(layer), "head": int(head)}, "copies": copies,
            "kv_heads": cfg.n_kv_head, "d_head": cfg.d_head, "bytes": int(per_number),
            "prompt": module4.PROMPT, "tokens": [*g.prompt_tokens, *(s.token for s in g.steps)],
            "ids": [int(s.id) for s in g.steps],
            "steps": [thousandths(s.attention) for s in g.steps],  # [L][H][S]
            "patterns": {kind: _pattern(p) for kind, p in m4.patterns.items()}}


def _pattern(p):  # real.head_patterns.HeadScores -> its grid (thousandths), top heads, losses
    loss = None if p.loss_first is None else [round(p.loss_first, 2), round(p.loss_second, 2)]
    return {"scores": thousandths(p.scores), "loss": loss,
            "top": [[int(lay), int(h), round(float(s), 3)] for lay, h, s in p.top]}


def copy_steps(generation, layer, head):  # -> [[step, earlier, target, weight]]
    """The steps where an induction head has something to copy: the token that looks (at
    position P + step - 1) came before, last at `earlier`; `target` = earlier + 1 is the
    token that followed it, and `weight` the head's weight there (3 decimals).
    Example: "The river bank was a place ... The river" -> at new token 11 (step 10) "Ġriver"
    (position 13) came before at 1, so the head looks for "Ġbank" (2): [10, 1, 2, 0.823]."""
    tokens = [*generation.prompt_tokens, *(s.token for s in generation.steps)]
    P, found = len(generation.prompt_ids), []
    for k, step in enumerate(generation.steps):
        p = P + k - 1  # the position that looks, and so writes new token k
        earlier = [j for j in range(p) if tokens[j] == tokens[p]]
        if earlier:
            target = earlier[-1] + 1
            found.append([k, earlier[-1], target,
                          round(float(step.attention[layer, head, target]), 3)])
    return found
