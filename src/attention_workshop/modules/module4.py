"""Module 4: a language model that writes. SmolLM2-135M-Instruct, a Llama, run by our NumPy code.

Writes sections [S10]-[S15] (log lines 126-167 today; docs and notebooks cite them by section,
"results.log [S13] lines 2-4", so a module inserted before this one moves none of them).
Every number it keeps is computed in float64 with one BLAS thread, so every printed digit,
and every greedy token, is the same on every run and machine. Only the writing is drafted
in float32 (the accelerator, several times faster a token), beside the float64 passes on
two threads, and then checked by one float64 pass, which gives the numbers
(real/checked_generation.py). The float64 weights are mapped from the cache that holds the
GGUF's numbers (real/formats/gguf_cache.py), not widened again in memory at every run. Float32
alone would not do for the rest: its weights differ from float64's by up to 2e-6, and
[S12]'s 0.894 (L1 H2) is 0.8935046 in float64, 5e-6 from rounding to 0.893.
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from attention_workshop.attention import softmax
from attention_workshop.embeddings import SENT_MONEY, SENT_RIVER
from attention_workshop.real import Model, RunResult
from attention_workshop.real.analysis.head_patterns import PREVIOUS_HEAD
from attention_workshop.real.analysis.head_search import heads_toward
from attention_workshop.real.decode import Generation, cache_bytes

TITLE = "Module 4: a language model that writes (SmolLM2)"
NEEDS_REAL = True  # loads SmolLM2's weights: `run --no-real` skips this module
MODEL = "smollm2"
MODEL_NAME = "SmolLM2-135M-Instruct"
PROMPT = "The river bank was"  # the plain continuation
QUESTION = "What is a bank?"  # the chat question
NEW_TOKENS = (16, 24)  # tokens written for each
TOP = 3  # heads listed per pattern and per topic word
PREVIOUS = PREVIOUS_HEAD  # a head is a previous-token head if its previous score (on random
#                           tokens) is above this: then bank -> river is position, not content
DISTANCE = 3  # [S11]'s pairs of positions are this far apart
# [S15]'s text: ordinary sentences, long enough for rows of many keys (written for this module)
TEXT = ("We walked down to the river bank after lunch. The water was high and brown, and a "
        "heron stood still in the reeds. Later we went to the bank in town to open an account, "
        "and the clerk asked how much money we wanted to save each month.")


@dataclass(frozen=True)
class Result:
    """SmolLM2 on the lesson sentences, a prompt, a question and a repeated sequence, float64."""

    model: Model  # SmolLM2 as loaded: .config (n_layer, n_head, n_kv_head, d_head), .run
    river: RunResult  # "the river bank": .attentions [L, H, T, T], .keys [L, n_kv_head, T, d]
    money: RunResult  # "the money bank"
    to_river: np.ndarray  # [L, H] bank's weight on river (it can only look back)
    to_money: np.ndarray  # [L, H] bank's weight on money
    continuation: Generation  # PROMPT, greedy
    answer: Generation  # QUESTION in the chat template, greedy
    patterns: dict  # {"induction" | "previous" | "sink": HeadScores}: [L, H] scores, top heads
    rotary: tuple  # (same-distance scores [3], other-distance score): [S11]'s numbers
    repeated: RunResult | None = None  # [S14]'s run of the repeated sequence (Module 5
    #                                    switches its heads off from it)
    fast: Model | None = None  # the same SmolLM2 in float32 (the accelerator): drafts the
    #                            writing; Module 5's sliding cache and explorer panel use it


def log_model(log, model, runs):
    cfg = model.config
    log.section(10, f"Module 4: a language model that writes ({MODEL_NAME}, run by our own "
                    "NumPy code)")
    log(f"  model: Llama decoder, {cfg.n_layer} layers x {cfg.n_head} query heads over "
        f"{cfg.n_kv_head} key/value heads, d_model = {cfg.d_model}, MLP {cfg.d_mlp} (gated "
        f"SiLU), {cfg.n_vocab}-token vocabulary")
    log(f"  d_k = head_dim = {cfg.d_head} (GPT-2's d_k): every score is divided by "
        f"sqrt({cfg.d_head}) = {np.sqrt(cfg.d_head):.3f}")
    log(f"  positions: rotary (theta {cfg.rope_theta:.0f}), no position rows; norms: RMSNorm; "
        f"output head: the token embedding ({'tied' if cfg.tied else 'untied'})")
    group = cfg.n_head // cfg.n_kv_head
    shares = ", ".join(f"{k * group}-{k * group + group - 1} read KV head {k}"
                       for k in range(cfg.n_kv_head))
    log(f"  grouped-query attention: query heads {shares}")
    per, full = cache_bytes(cfg), cache_bytes(cfg, kv_heads=cfg.n_head)
    log(f"  KV cache per token: 2 x {cfg.n_layer} layers x {cfg.n_kv_head} KV heads x "
        f"{cfg.d_head} x 4 bytes = {per:,} bytes (a KV head per query head: {full:,}, "
        f"{full // per}x)")
    for sentence, r in runs.items():
        log(f'  real tokens, "{sentence}": {" ".join(r.tokens)}  (ids '
            f'{" ".join(map(str, r.ids))})')
    log("  no token is added at the start; Ġ marks a space; bank is token "
        f"{bank_at(runs[SENT_RIVER])} in both")


def bank_at(result):  # -> bank's token position
    return next(i for i, t in enumerate(result.tokens) if t.lstrip("\u0120") == "bank")


def log_rotary(log, model, river):  # -> (same-distance scores, other-distance score)
    """One query and one key (layer 0, head 0: bank's q and river's k before any turn)
    placed at pairs of positions DISTANCE apart: the score is the same wherever they are."""
    from attention_workshop.real.families import layer_weights
    from attention_workshop.real.layers import rms_norm, rotary_angles, rotate

    cfg = model.config
    log.section(11, "rotary positions: a score depends on the distance between two tokens, "
                    "not on where they are")
    layer0 = layer_weights(model.weights, "layers.0.")
    x = rms_norm(river.hidden_states[0], layer0["input_layernorm.weight"], cfg.eps)  # [T, D]
    q = (x @ layer0["self_attn.q_proj.weight"].T)[bank_at(river), :cfg.d_head]  # head 0's q
    k = (x @ layer0["self_attn.k_proj.weight"].T)[1, :cfg.d_head]  # KV head 0's k, river

    def score(m, n):  # q turned to position m, k to position n -> q . k / sqrt(d_head)
        cos, sin = rotary_angles([m, n], cfg.d_head, cfg.rope_theta)
        qm = rotate(q[None, None], cos[:1], sin[:1])[0, 0]
        kn = rotate(k[None, None], cos[1:], sin[1:])[0, 0]
        return float(qm @ kn / np.sqrt(cfg.d_head))

    pairs = [(DISTANCE, 0), (50 + DISTANCE, 50), (500 + DISTANCE, 500)]
    same = [score(m, n) for m, n in pairs]
    log("  layer 0, head 0: bank's query and river's key, turned as if at positions m and n:")
    log("    " + ", ".join(f"(m, n) = ({m}, {n}): {s:.3f}" for (m, n), s in zip(pairs, same,
                                                                          strict=True)))
    equal = max(same) - min(same) < 1e-12
    other = score(DISTANCE + 5, 0)
    log(f"    equal to 12 decimals: {equal}; only m - n = {DISTANCE} counts; at distance "
        f"{DISTANCE + 5}: {other:.3f}")
    return same, other


def log_bank(log, runs, patterns):  # -> {topic: [L, H] bank's weight on it}
    log.section(12, 'bank in a decoder: it can only look back, at "the" and its topic word')
    previous = patterns["previous"].scores  # [L, H], on random tokens ([S14])
    to_topic = {}
    for sentence, topic in ((SENT_RIVER, "river"), (SENT_MONEY, "money")):
        r = runs[sentence]
        b = bank_at(r)
        t = next(i for i, tok in enumerate(r.tokens) if tok.lstrip("\u0120") == topic)
        to_topic[topic] = r.attentions[:, :, b, t]  # [L, H]
        found = heads_toward(r.attentions, b, t, TOP)
        listed = ", ".join(f"L{lay} H{h} = {w:.3f} ({kind_of(previous[lay, h])})"
                           for lay, h, w in found)
        log(f'  bank -> {topic} in "{sentence}": {listed}')
        sink = r.attentions[:, :, b, 0].mean()
        log(f"    mean over all {to_topic[topic].size} heads: {to_topic[topic].mean():.3f}; on "
            f'"the" (the first token): {sink:.3f}')
    content = previous <= PREVIOUS
    log(f"  previous-token heads ({int((~content).sum())}, by [S14]'s score above {PREVIOUS}) "
        "send bank to river and money alike: the word before it")
    for topic in ("river", "money"):
        grid = to_topic[topic]
        lay, h = np.unravel_index(int(np.argmax(np.where(content, grid, -1))), grid.shape)
        log(f"  strongest content head for bank -> {topic}: L{lay} H{h} = {grid[lay, h]:.3f}")
    return to_topic


def kind_of(previous_score):  # a head's [S14] previous-token score -> what its look is
    return "previous-token" if previous_score > PREVIOUS else "content"


def log_generation(log, model, prompt, answer):
    log.section(13, "it writes: greedy decoding with the KV cache, one token at a time")
    for label, g in (("prompt", prompt), ("chat question", answer)):
        shown = PROMPT if label == "prompt" else QUESTION
        log(f'  {label} "{shown}" ({len(g.prompt_ids)} tokens'
            f'{", in the chat template" if label != "prompt" else ""}) -> '
            f"{len(g.new_ids)} new tokens:")
        log(f"    {g.text.strip()!r}")
        log(f"    ids {' '.join(map(str, g.new_ids))}")
    cfg, total = model.config, cached_tokens(answer)
    log(f"  the chat's KV cache at the end: {total} tokens ({len(answer.prompt_ids)} + "
        f"{len(answer.new_ids)} - 1: the last token written is never run) x "
        f"{cache_bytes(cfg):,} bytes = {total * cache_bytes(cfg):,} bytes ({cfg.n_kv_head} KV "
        f"heads; with {cfg.n_head}: {total * cache_bytes(cfg, kv_heads=cfg.n_head):,})")
    i, step = max(enumerate(answer.steps), key=lambda s: s[1].looked_at[0][2]
                  if s[1].looked_at else 0.0)  # the step whose content heads looked hardest
    looks = ", ".join(f"{t.lstrip(chr(0x120))!r} {w:.3f}" for _, t, w in step.looked_at)
    log(f"  answer token {i}, {step.token.lstrip(chr(0x120))!r}: its content heads looked "
        f"hardest at {looks}")


def cached_tokens(generation):  # -> tokens in the KV cache after the last step
    """The cache's own length: the keys the last step's query read. The last token written
    is never run, so it holds prompt + new - 1. Example: 35 + 24 -> 58."""
    return int(generation.steps[-1].attention.shape[-1])


def log_patterns(log, patterns):
    log.section(14, "heads found by pattern, on 50 random tokens repeated once (heads count "
                    "from 0)")
    what = {"induction": "looks at the token after the last time its own token came",
            "previous": "looks at the token just before", "sink": "looks at the first token"}
    for kind, found in patterns.items():
        listed = ", ".join(f"L{lay} H{h} = {s:.3f}" for lay, h, s in found.top[:TOP])
        log(f"  {kind} ({what[kind]}): {listed}")
    p = patterns["induction"]
    log(f"  the repeat is predicted: next-token loss {p.loss_first:.2f} nats on the first "
        f"half, {p.loss_second:.2f} on the repeat (the induction heads copy)")


def log_scaling(log, model, text_run):
    d = model.config.d_head
    log.section(15, f"[S5] again, on SmolLM2's real queries and keys (d_k = {d})")
    group = model.config.n_head // model.config.n_kv_head
    q = text_run.queries  # [L, H, T, d]
    k = np.repeat(text_run.keys, group, axis=1)  # [L, H, T, d]: each query head's keys
    scores = q @ np.swapaxes(k, -1, -2)  # [L, H, T, T], unscaled, after the rotary turn
    T = scores.shape[-1]
    causal = np.tri(T, dtype=bool)
    masked = np.where(causal, scores, -np.inf)
    unscaled, scaled = softmax(masked), softmax(masked / np.sqrt(d))  # each row on its own
    same = bool(np.allclose(scaled, text_run.attentions, rtol=0, atol=1e-12))
    log(f"  {len(text_run.ids)} tokens of ordinary text; row i has i + 1 keys (causal); "
        f"{scores.shape[0]} layers x {scores.shape[1]} heads")
    log(f"  softmax(q.k / sqrt({d})) is the model's own attention weights: {same}")
    for name, layers in (("layer 0", slice(0, 1)), ("layer 15", slice(15, 16)),
                         ("layer 29", slice(-1, None)), ("all layers", slice(None))):
        s = masked[layers]
        dots = s[np.broadcast_to(causal, s.shape)]
        log(f"  {name}: dot-product std = {dots.std():6.2f}  (sqrt(d) = {np.sqrt(d):5.2f}) | "
            f"avg top weight: unscaled = {unscaled[layers].max(axis=-1).mean():.3f}, scaled = "
            f"{scaled[layers].max(axis=-1).mean():.3f}")


def repeated_patterns(model):  # float64 Model -> (its run on [S14]'s sequence, {kind: HeadScores})
    from attention_workshop.real.analysis.head_patterns import patterns, sequence_for

    repeated = model.run(sequence_for(model)[0])  # one run of the repeated sequence serves
    return repeated, patterns(model, ("induction", "previous", "sink"), TOP, repeated)  # each kind


def run(log, earlier):
    """Log Module 4 (it reads no earlier module, but follows their log lines)."""
    from attention_workshop.real import load_model
    from attention_workshop.real.blas_threads import one_blas_thread
    from attention_workshop.real.checked_generation import checked, draft

    log.expect_section(10)  # its first line heads [S10], wherever the modules before it end
    fast = load_model(MODEL)  # float32 with the file's 4- and 8-bit blocks: it drafts the writing
    # Two workers take the tasks in the order submitted, each the next one as it comes free:
    # the drafts of the writing (float32) and the float64 model's load (mapped from the
    # cache: Python's work mostly, so not beside another load), then the float64 passes,
    # longest first. A task waits only for tasks submitted before it (started already), so
    # the two never wait for each other in a circle, and whichever is first free takes the
    # next pass, however long each takes on this machine. Each product on one BLAS thread
    # (held around both), so every digit is that of a run alone, whichever worker ran it.
    pool = ThreadPoolExecutor(2, thread_name_prefix="module4")
    try:
        with one_blas_thread():
            plain_draft = pool.submit(draft, fast, PROMPT, NEW_TOKENS[0])
            wide = pool.submit(load_model, MODEL, dtype=np.float64)  # identical digits anywhere
            drafts = [plain_draft, pool.submit(draft, fast, QUESTION, NEW_TOKENS[1], chat=True)]
            scored = pool.submit(lambda: repeated_patterns(wide.result()))
            chat = pool.submit(lambda: checked(wide.result(), drafts[1].result()))
            text = pool.submit(lambda: wide.result().run(TEXT))
            plain = pool.submit(lambda: checked(wide.result(), drafts[0].result()))
            runs = {s: pool.submit(lambda s=s: wide.result().run(s)) for s in (SENT_RIVER,
                                                                               SENT_MONEY)}
            model, (repeated, patterns) = wide.result(), scored.result()
            prompt, answer, text_run = plain.result(), chat.result(), text.result()
            runs = {s: r.result() for s, r in runs.items()}
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # an error: the tasks not begun dropped
    log_model(log, model, runs)
    rotary = log_rotary(log, model, runs[SENT_RIVER])
    to_topic = log_bank(log, runs, patterns)
    log_generation(log, model, prompt, answer)
    log_patterns(log, patterns)
    log_scaling(log, model, text_run)
    return Result(model=model, river=runs[SENT_RIVER], money=runs[SENT_MONEY],
                  to_river=to_topic["river"], to_money=to_topic["money"], continuation=prompt,
                  answer=answer, patterns=patterns, rotary=rotary, repeated=repeated,
                  fast=fast)
