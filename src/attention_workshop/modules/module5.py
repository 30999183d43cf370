"""Module 5: switch a head off and see what it did (ablation and patching).

Writes [S16] onward, after Module 4's last line. The toy first: Module 2's wired head has
two channels, topic and place; switching one off is the toy's ablation. Everything real
runs in float64 with one BLAS thread (as Modules 3 and 4), so every printed digit is the
same on every run and machine. Two parts run in float32, on Module 4's own float32 model
(module4.Result.fast): [S19]'s sliding KV cache (twice as fast; its perplexities are
float64's to two decimals, and it prints three digits) and the explorer panel's
continuations, which the log does not print.
"""

from dataclasses import dataclass, replace

import numpy as np

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED, wired_attention
from attention_workshop.embeddings import AXES, SENT_MONEY, SENT_RIVER, embed
from attention_workshop.modules import module1, module2
from attention_workshop.report import fmt_list, matrix_lines, named_vector

TITLE = "Module 5: switch a head off and see what it did"
NEEDS_REAL = True  # loads MiniLM's and SmolLM2's weights: `run --no-real` skips this module
CHANNELS = ("topic", "place")  # the wired head's two query/key channels (attention.py)
TOP = 3  # MiniLM: [S7]'s heads that send bank to river
DRAWS = 5  # MiniLM: draws of as many random heads, the control
COUNTS = (1, 3, 5, 10)  # SmolLM2: top induction heads switched off
RANDOM = 5  # SmolLM2: the control: this many random heads ...
SMOL_DRAWS = 3  # ... drawn this many times (each costs a third of a run)
REACH = 19  # the sink's sentences run SmolLM2's layers 0-18 only: the sink heads' layers
# [S19]'s short text for the sink, and the same text with its first word changed
SINK_TEXT = "The river rose all night, and by morning the path along the bank was under water."
SINK_OTHER = "Seven"  # one token, as "The" is
# The explorer's Module 5 panel: a phrase, then its start again, so the plain model copies it
# (" wide"); with the induction heads or the previous-token head off it writes something else
ABLATION_THREADS = 2  # [S18]'s ablated runs, two at once on a 2-core machine
PANEL_PROMPT = "river bank wide. river bank"
PANEL_TOKENS = 3  # each continuation costs a short run and 2 steps: few tokens, few head sets
PANEL_TOP = (3, 5)  # the panel's sets of top induction heads ([S18]'s runs, both halves)


@dataclass(frozen=True)
class Toy:
    """The wired head on "the river bank" with one channel switched off at a time."""

    weights: dict  # {channel: [3, 3]} the weights with that channel's W_Q column zeroed
    outputs: dict  # {channel: [3, 4]} the outputs, rows the, river, bank
    money_topic_off: np.ndarray  # [4] bank's output in "the money bank", topic channel off


def channel_off(w_q, channel):  # [4, 2], "topic" | "place" -> [4, 2], that column zeroed
    """The toy's ablation: a query channel that asks for nothing. Example: channel_off(
    W_Q_WIRED, "topic")[2] -> [0, 0] (place-ness no longer asks for a topic)."""
    w = np.array(w_q, dtype=np.float64)
    w[:, CHANNELS.index(channel)] = 0.0
    return w


def toy(sentence=SENT_RIVER):  # -> Toy
    weights, outputs = {}, {}
    for channel in CHANNELS:
        outputs[channel], weights[channel], _ = wired_attention(
            embed(sentence), channel_off(W_Q_WIRED, channel), W_K_WIRED)
    money, _, _ = wired_attention(embed(SENT_MONEY), channel_off(W_Q_WIRED, "topic"), W_K_WIRED)
    return Toy(weights=weights, outputs=outputs, money_topic_off=money[2])


def log_toy(log, simple, wired):  # Log, module1.Result, module2.Result -> Toy
    log.section(16, "Module 5: switch a head off and see what it did (the toy first)")
    t = toy()
    log("  the wired head asks on two channels: topic (place-ness asks for water or money) and "
        "place (filler asks for places)")
    log("  switch the topic channel off (W_Q's topic column zeroed): bank's query becomes "
        f"{fmt_list(embed(SENT_RIVER)[2] @ channel_off(W_Q_WIRED, 'topic'), 2)}, every score 0")
    log(f"    bank's weights: wired {fmt_list(wired.weights[2])} -> topic off "
        f"{fmt_list(t.weights['topic'][2])}")
    rows = (("wired head", wired.outputs[2]), ("topic channel off", t.outputs["topic"][2]),
            ("Module 1's equal average", simple.average_river),
            ("Module 1's simple attention", simple.outputs_river[2]))
    log(f'  bank\'s output in "{SENT_RIVER}":')
    log.extend(f"    {name:<30}{named_vector(AXES, v)}" for name, v in rows)
    same = bool(np.allclose(t.outputs["topic"][2], simple.average_river, rtol=0, atol=1e-15))
    log(f"  topic off gives back Module 1's equal average (to 15 decimals): {same}; in "
        f'"{SENT_MONEY}": {named_vector(AXES, t.money_topic_off)}')
    log("  switch the place channel off instead: bank's weights stay "
        f"{fmt_list(t.weights['place'][2])} (its query has no place part); 'the' loses its "
        f"look at bank: {fmt_list(wired.weights[0])} -> {fmt_list(t.weights['place'][0])}")
    return t


def log_minilm(log, m3):  # Log, module3.Result -> MiniLM
    """[S7]'s river heads switched off (zero, mean) and patched; bank's drift ([S8]) per layer."""
    from attention_workshop.real.analysis.drift import drift
    from attention_workshop.real.analysis.head_search import heads_toward
    from attention_workshop.real.interventions import ablation, patching, random_heads

    model, river, money, b = m3.model, m3.river, m3.money, m3.bank
    t = river.tokens.index("river")
    found = heads_toward(river.attentions, b, t, TOP)
    heads = [(lay, h) for lay, h, _ in found]
    log.section(17, "MiniLM: switch off the heads that send bank to river ([S7]), and bank's "
                    "drift ([S8]) shrinks")

    def both(hooks):  # -> the cosines of bank's vector, the two sentences run under hooks
        return drift(model.run(SENT_RIVER, hooks=hooks), [b], model.run(SENT_MONEY, hooks=hooks),
                     [b])

    rows = {"every head on": drift(river, [b], money, [b])}
    for how in ("zero", "mean"):
        rows[f"{TOP} heads off ({how})"] = both(ablation(model.config, heads, how))
    draws = random_heads(model.config, heads, DRAWS)
    rows[f"{TOP} random heads"] = np.mean([both(ablation(model.config, d)) for d in draws], axis=0)
    listed = ", ".join(f"L{lay} H{h} ({w:.3f})" for lay, h, w in found)
    log(f"  switched off: {listed}; zero: their outputs are 0; mean: each output is its mean over "
        f"the {len(river.ids)} positions")
    spans = [lay for d in draws for lay, _ in d]
    log(f"  random: {DRAWS} draws of {TOP} other heads of layers {min(spans)}-{max(spans)} "
        "(seed 0), cosines averaged")
    log("  cosine of bank's vector, river sentence vs money sentence (1.000: no drift):")
    layers = ["embed", *(f"L{i}" for i in range(model.config.n_layer))]
    log.extend(matrix_lines(list(rows), layers, np.array(list(rows.values())), label_width=22))
    last = {name: 1 - cos[-1] for name, cos in rows.items()}
    log(f"  after the last layer bank has moved 1 - cosine = {last['every head on']:.3f}; with the "
        f"{TOP} heads off {last[f'{TOP} heads off (zero)']:.3f}, with random heads off "
        f"{last[f'{TOP} random heads']:.3f}")
    patched = model.run(SENT_RIVER, hooks=patching(model.config, dict.fromkeys(heads, money),
                                                   len(river.ids)))
    follow = {"to the money sentence's bank": drift(patched, [b], money, [b]),
              "to the river sentence's bank": drift(patched, [b], river, [b])}
    log(f'  patched: "{SENT_RIVER}" run with the {TOP} heads\' outputs taken from "{SENT_MONEY}"; '
        "the cosine of its bank")
    log.extend(matrix_lines(list(follow), layers, np.array(list(follow.values())), label_width=30))
    return MiniLM(heads=heads, drift=rows, patched=follow)


@dataclass(frozen=True)
class MiniLM:
    """[S17]: MiniLM's bank -> river heads switched off and patched."""

    heads: list  # [(layer, head)] [S7]'s top heads for bank -> river
    drift: dict  # {row name: [n_layer + 1] cosines}: every head on, heads off, random
    patched: dict  # {"to the money sentence's bank" | ...: [n_layer + 1] cosines}


@dataclass(frozen=True)
class SmolLM2:
    """[S18]-[S19]: SmolLM2's induction heads switched off, the head feeding them, the sink."""

    induction: list  # [(layer, head)] the top max(COUNTS) by [S14]'s score, best first
    loss_plain: float  # nats on the repeat, every head on ([S14])
    loss_top: dict  # {k: nats} the top k induction heads off
    loss_random: list  # [(heads, nats)] RANDOM random heads off, SMOL_DRAWS draws
    previous: tuple  # (layer, head) the previous-token head switched off in [S19]
    fed: dict  # {(layer, head): (score with it on, score with it off)} the top induction heads
    loss_previous: float  # nats on the repeat with the previous-token head off
    sink_norms: dict  # {(layer, head): (|v| at position 0, mean |v| elsewhere)}
    sink_moved: dict  # {(layer, head): (score on SINK_TEXT, score with its first word changed)}
    sliding: object = None  # sliding_cache.Sliding: [S19]'s last lines, CACHES' losses
    loss_previous_first: float | None = None  # nats on the first half, that head off (panel)


def log_induction(log, m4):
    # Log, module4.Result -> (the plain run, SmolLM2's numbers, {heads: {part: nats}})
    from concurrent.futures import ThreadPoolExecutor

    from attention_workshop.real.analysis.head_effects import loss_rows, losses, switched_off
    from attention_workshop.real.analysis.head_patterns import ranked, sequence_for
    from attention_workshop.real.blas_threads import one_blas_thread
    from attention_workshop.real.interventions import random_heads

    model = m4.model
    ids, lead = sequence_for(model)
    halves = loss_rows(ids, lead)  # the log prints the repeat; the explorer shows both halves
    repeat = {"repeat": halves["repeat"]}
    induction = [(lay, h) for lay, h, _ in ranked(m4.patterns["induction"].scores, max(COUNTS))]
    plain = m4.repeated  # [S14]'s run: each ablation runs again from its first head's layer
    log.section(18, "SmolLM2: the induction heads proven by switching them off ([S14]'s "
                    "sequence, loss on the repeat)")
    draws = random_heads(model.config, induction[:RANDOM], SMOL_DRAWS)
    shown = [*(induction[:k] for k in PANEL_TOP), draws[0]]  # the explorer's: both halves
    sets = [*(induction[:k] for k in COUNTS), *draws]

    def measure(heads):  # [(layer, head)] -> {part: nats} with them off
        return losses(switched_off(model, plain, heads), halves if heads in shown else repeat)

    # the runs are independent: two at once, each product on one BLAS thread (held around
    # both, as blas_threads says), so every digit is that of a run alone
    pool = ThreadPoolExecutor(ABLATION_THREADS, thread_name_prefix="ablations")
    with one_blas_thread(), pool:
        measured = dict(zip(map(tuple, sets), pool.map(measure, sets), strict=True))
    top = {k: measured[tuple(induction[:k])]["repeat"] for k in COUNTS}
    rand = [(d, measured[tuple(d)]["repeat"]) for d in draws]
    p = m4.patterns["induction"]
    log(f"  every head on: {p.loss_second:.2f} nats on the repeat ({p.loss_first:.2f} on the first "
        "half, whose tokens are new)")
    named = lambda hs: ", ".join(f"L{lay}H{h}" for lay, h in hs)  # noqa: E731
    for k in COUNTS:
        heads = "heads" if k > 1 else "head "
        log(f"  top {k:>2} induction {heads} off: {top[k]:5.2f}  ({named(induction[:k])})")
    values = [loss for _, loss in rand]
    lo, hi = min(h[0] for d in draws for h in d), max(h[0] for d in draws for h in d)
    log(f"  {RANDOM} random heads off ({SMOL_DRAWS} draws from layers {lo}-{hi}, never the top "
        f"{RANDOM}, seed 0): {', '.join(f'{v:.2f}' for v in values)}; mean {np.mean(values):.2f}")
    log(f"  so the copying is theirs: the top {RANDOM} off bring the repeat to "
        f"{top[RANDOM]:.2f} nats, near the new tokens' {p.loss_first:.2f}; {RANDOM} others cost "
        f"{np.mean(values) - p.loss_second:.2f} on average")
    return plain, (induction, p.loss_second, top, rand), measured


def log_previous_and_sink(log, m4, plain, induced):  # -> SmolLM2
    from attention_workshop.real.analysis.head_effects import loss_rows, losses, switched_off
    from attention_workshop.real.analysis.head_patterns import pattern_scores, ranked, sequence_for
    from attention_workshop.real.resume import lower

    model, cfg = m4.model, m4.model.config
    induction, loss_plain, top, rand = induced
    ids, lead = sequence_for(model)
    first = min(lay for lay, _ in induction[:RANDOM])
    previous = next((lay, h) for lay, h, _ in ranked(m4.patterns["previous"].scores, cfg.n_layer
                                                      * cfg.n_head) if lay < first)
    log.section(19, "the previous-token head that feeds them, and the sink (a position, not a "
                    "word)")
    off = switched_off(model, plain, [previous])
    before = m4.patterns["induction"].scores
    after = pattern_scores(off.attentions, "induction", lead)
    fed = {head: (float(before[head]), float(after[head])) for head in induction[:RANDOM]}
    previous_off = losses(off, loss_rows(ids, lead))  # the log prints the repeat; the panel both
    loss_previous = previous_off["repeat"]
    log(f"  previous-token head L{previous[0]}H{previous[1]} ([S14]'s strongest below layer "
        f"{first}, score {m4.patterns['previous'].scores[previous]:.3f}) off; induction scores:")
    log("    " + ", ".join(f"L{lay}H{h} {a:.3f} -> {b:.3f}" for (lay, h), (a, b) in fed.items()))
    log(f"    loss on the repeat {loss_plain:.2f} -> {loss_previous:.2f}: the induction heads "
        "find the token after the last occurrence by the previous-token heads' mark")
    sinks = [(lay, h) for lay, h, _ in ranked(m4.patterns["sink"].scores, TOP) if lay < REACH]
    group = cfg.n_head // cfg.n_kv_head
    norms = {}
    for lay, h in sinks:
        v = np.linalg.norm(plain.values[lay, h // group], axis=-1)  # [T]: each position's |v|
        norms[(lay, h)] = (float(v[0]), float(v[1:].mean()))
    log("  sink heads ([S14]): the value vector at position 0 is short, so the weight parked "
        "there adds little:")
    log.extend(f"    L{lay}H{h} (KV head {h // group}): |v| {a:.2f} at position 0, mean {b:.2f} "
               "at the others" for (lay, h), (a, b) in norms.items())
    text, other = model.encode(SINK_TEXT), model.encode(SINK_OTHER + " " +
                                                        SINK_TEXT.split(" ", 1)[1])
    runs = [lower(model, t, REACH) for t in (text, other)]
    moved = {(lay, h): tuple(float(r.attentions[lay, h, 1:, 0].mean()) for r in runs)
             for lay, h in sinks}  # each row after the first: its weight on position 0
    chance = float(np.mean(1.0 / np.arange(2, len(text) + 1)))  # rows 1..T-1 spread evenly
    log(f"  first word changed ({model.tokenizer.id_to_token(text[0])!r} -> "
        f"{model.tokenizer.id_to_token(other[0])!r}) in the {len(text)}-token sentence; weight on "
        f"position 0 (an even spread would give {chance:.3f}):")
    log("    " + ", ".join(f"L{lay}H{h} {a:.3f} -> {b:.3f}" for (lay, h), (a, b) in moved.items())
        + ": another word, the same place")
    return SmolLM2(induction=induction, loss_plain=loss_plain, loss_top=top, loss_random=rand,
                   previous=previous, fed=fed, loss_previous=loss_previous, sink_norms=norms,
                   sink_moved=moved, loss_previous_first=previous_off["first"])


@dataclass(frozen=True)
class Choice:
    """One set of heads the explorer's Module 5 panel switches off, and what it changes."""

    name: str  # "top 5 induction heads"
    heads: list  # [(layer, head)] switched off (zero); [] for every head on
    loss: dict  # {"first": nats, "repeat": nats} on [S14]'s sequence, each half
    continuation: object  # decode.Generation: PANEL_PROMPT, greedy, the heads off at every step


def choices(m4, s, measured):  # module4.Result, SmolLM2, log_induction's losses -> [Choice]
    """The head sets of [S18]-[S19] a learner may switch off in the explorer, every head on
    first, each with the loss on both halves of [S14]'s sequence (the repeat as [S18]-[S19]
    print it; their runs are not run again) and SmolLM2's greedy continuation of PANEL_PROMPT
    with them off. Example: choices(m4, s, measured)[2].loss["repeat"] -> 11.47... (the top 5,
    [S18]); its continuation starts "," where every head on copies " wide". Each set costs a
    continuation (PANEL_TOKENS passes of the float32 accelerator, under the ablation's hooks),
    so the list is short."""
    model, p = m4.fast or m4.model, m4.patterns["induction"]  # float32 writes (not logged)
    measured = {**measured, (s.previous,): {"first": s.loss_previous_first,
                                            "repeat": s.loss_previous}}
    sets = [("every head on", []),
            *((f"top {k} induction heads", s.induction[:k]) for k in PANEL_TOP),
            ("previous-token head", [s.previous]), (f"{RANDOM} random heads", s.loss_random[0][0])]
    found = []
    for name, heads in sets:
        loss = ({"first": p.loss_first, "repeat": p.loss_second} if not heads else
                measured[tuple(heads)])
        found.append(Choice(name=name, heads=list(heads), loss=loss, continuation=model.generate(
            PANEL_PROMPT, tokens=PANEL_TOKENS, ablate=list(heads) or None)))
    return found


# [S19]'s sliding KV cache (StreamingLLM): the newest WINDOW tokens' keys and values kept, the
# older evicted; the loss on the SCORED tokens after the window (each cache runs them again:
# 4 x 64 tokens, ~1.5 s). The window's start is where the sinks leave, so a short stretch
# shows it; CACHES: {name: first tokens kept beside the window (None: the full cache)}
WINDOW = 32
SCORED = 64
CACHES = {"full cache": None, f"window of {WINDOW} only": 0, "window + the first token": 1,
          "window + the first 4 tokens": 4}


def digits(x):  # a perplexity, three significant digits: 39.1, 439, 1,544
    return f"{x:.3g}" if x < 1000 else f"{x:,.0f}"


def sliding(model):  # SmolLM2 (float32 or float64) -> sliding_cache.Sliding, in float32
    """The caches' losses on the first WINDOW + SCORED + 1 tokens of the workshop's text."""
    from attention_workshop.real.analysis import sliding_cache as sc

    ids = model.tokenizer.encode(sc.long_text()).ids  # the whole text: more than 512 tokens
    return sc.losses(sc.in_float32(model), ids[:WINDOW + SCORED + 1], WINDOW, CACHES)


def log_sliding(log, model, s=None):  # Log, SmolLM2, sliding(model) if made -> Sliding
    """The sink's last proof: evict the first tokens from a sliding cache and the perplexity
    jumps; keep them beside the window and it comes back (sliding_cache.py)."""
    from attention_workshop.real.analysis import sliding_cache as sc

    s = sliding(model) if s is None else s
    ids = model.tokenizer.encode(sc.long_text()).ids
    T, cfg = WINDOW + SCORED + 1, model.config
    log(f"  a sliding KV cache (StreamingLLM, Xiao et al. 2023) on the workshop's own text "
        f"({sc.TEXT_FILE}, {len(ids):,} tokens): its first {T} read keeping the newest {WINDOW}")
    log(f"  tokens' keys and values only (each older one evicted as a token comes), or those and "
        f"the first tokens; perplexity on the {s.scored} tokens after the window (float32):")
    log.extend(f"    {f'{name} ({s.cache_bytes[name] / 1e6:.2f} MB)':<40}"
               f"{digits(s.perplexity(name)):>6}" for name in CACHES)
    full, alone, one, four = (s.perplexity(name) for name in CACHES)
    log(f"  evicted, the first tokens cost {alone / full:.0f}x the full cache's perplexity; with "
        f"the first token kept {one / full:.2f}x, with 4 {four / full:.2f}x (the rest is the "
        "older text the window lost)")
    log("  without its sink a head's spare weight lands on the window's tokens and adds their "
        "values (StreamingLLM's Llama-2-13B: 5158 with the window alone, 5.40 with 4 sinks)")
    log(f"  cost: {s.cache_bytes['full cache'] // T:,} bytes of cache a token (keys and values, "
        f"{cfg.n_layer} layers x {cfg.n_kv_head} KV heads x {cfg.d_head} floats x 2); no "
        f"[{cfg.n_layer}, {cfg.n_head}, T, T] weights kept, one layer's {cfg.n_head} x "
        f"{s.scored} x {T} scores at a time")
    log("  positions: each key keeps the rotary angle it was made with, so a sink is seen at its "
        "true distance (StreamingLLM numbers the positions inside the cache instead)")
    return s


@dataclass(frozen=True)
class Result:
    toy: Toy  # [S16]
    minilm: MiniLM | None  # [S17]; None without Module 3 (MiniLM not installed)
    smollm2: SmolLM2 | None  # [S18]-[S19]; None without Module 4
    choices: list | None = None  # [Choice]: the explorer's Module 5 panel; None without Module 4


def run(log, earlier):
    """Log Module 5 after Module 4's last line: the toy, then each real model that ran."""
    from attention_workshop.modules import module3, module4

    toy = log_toy(log, earlier[module1.Result], earlier[module2.Result])
    minilm = log_minilm(log, earlier[module3.Result]) if module3.Result in earlier else None
    smollm2 = None
    if module4.Result in earlier:
        from concurrent.futures import ThreadPoolExecutor

        from attention_workshop.real.blas_threads import one_blas_thread

        m4 = earlier[module4.Result]
        small = m4.fast or m4.model
        # the sliding cache (float32) on a second thread while the ablations run in float64:
        # each on one BLAS thread (held around both), so each product's digits are a lone run's
        with one_blas_thread(), ThreadPoolExecutor(1, thread_name_prefix="sliding") as pool:
            aside = pool.submit(sliding, small)
            plain, induced, measured = log_induction(log, m4)
            smollm2 = log_previous_and_sink(log, m4, plain, induced)
            smollm2 = replace(smollm2, sliding=log_sliding(log, small, aside.result()))
    panel = None if smollm2 is None else choices(earlier[module4.Result], smollm2, measured)
    return Result(toy=toy, minilm=minilm, smollm2=smollm2, choices=panel)
