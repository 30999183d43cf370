"""Module 3: the real thing. MiniLM's own weights, run by our NumPy code, on the lesson sentences.

Writes sections [S6]-[S9] (log lines 81-125 today; docs and notebooks cite them by section,
"results.log [S7] lines 2-5", so a module inserted before this one moves none of them). The
forward pass runs in float64 here, so every printed digit is the same on every machine and
with any number of BLAS threads.
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.attention import softmax
from attention_workshop.embeddings import SENT_MONEY, SENT_RIVER
from attention_workshop.real import Model, RunResult
from attention_workshop.real.analysis.drift import cosine
from attention_workshop.real.analysis.head_search import heads_toward, neighbour_head
from attention_workshop.report import matrix_lines

TITLE = "Module 3: the real thing (MiniLM)"
NEEDS_REAL = True  # loads MiniLM's weights: `run --no-real` skips this module
MODEL = "minilm"
MODEL_NAME = "all-MiniLM-L6-v2"
TOP = 3  # heads listed per topic word


@dataclass(frozen=True)
class Result:
    """MiniLM on the lesson sentences, run in float64 by attention_workshop.real."""

    model: Model  # MiniLM as loaded: .config (n_layer, n_head, d_model, d_head), .run(text)
    river: RunResult  # "the river bank": .tokens [T], .attentions [L, H, T, T], .queries and
    #                   .keys [L, H, T, d_head]
    money: RunResult  # "the money bank", the same fields (the explorer page shows both)
    bank: int  # bank's token position, the same in both sentences
    to_river: np.ndarray  # [L, H] bank's weight on river in "the river bank", every layer and head
    to_money: np.ndarray  # [L, H] bank's weight on money in "the money bank"
    strongest: tuple  # (layer, head) where bank looks hardest at river


def top_weight(scores):  # [..., T] -> mean of each row's largest softmax share
    return float(softmax(scores).max(axis=-1).mean())


def log_model(log, model, runs):
    cfg = model.config
    log.section(6, f"Module 3: the real thing ({MODEL_NAME}, run by our own NumPy code)")
    log(f"  model: BERT encoder, {cfg.n_layer} layers x {cfg.n_head} heads, d_model = "
        f"{cfg.d_model}, MLP {cfg.d_mlp}, {cfg.n_ctx} positions, {cfg.n_vocab}-token vocabulary")
    log(f"  d_k = d_head = {cfg.d_model} / {cfg.n_head} = {cfg.d_head}: every score is divided "
        f"by sqrt({cfg.d_head}) = {np.sqrt(cfg.d_head):.3f}")
    log(f"  learned in each layer: W_Q, W_K, W_V, W_O ({cfg.d_model} x {cfg.d_model}, with "
        f"biases), 2 layer norms, MLP {cfg.d_model} -> {cfg.d_mlp} -> {cfg.d_model} (gelu)")
    for sentence, r in runs.items():
        ids = " ".join(str(i) for i in r.ids)
        log(f'  real tokens, "{sentence}": {" ".join(r.tokens)}  (ids {ids})')
    log("  the tokenizer adds [CLS] and [SEP]; each lesson word is one token; bank is token "
        f"{runs[SENT_RIVER].tokens.index('bank')} in both")


def log_heads(log, runs):  # -> {topic: [L, H] bank's weight on it}, the top river heads
    log.section(7, 'which heads send "bank" to its topic word (layers and heads count from 0)')
    to_topic, strongest = {}, {}
    for sentence, topic in ((SENT_RIVER, "river"), (SENT_MONEY, "money")):
        r = runs[sentence]
        b, t = r.tokens.index("bank"), r.tokens.index(topic)
        strongest[topic] = heads_toward(r.attentions, b, t, TOP)
        listed = ", ".join(f"L{lay} H{h} = {w:.3f}" for lay, h, w in strongest[topic])
        log(f'  bank -> {topic} in "{sentence}": {listed}')
        to_topic[topic] = r.attentions[:, :, b, t]  # [L, H]
        log(f"    mean over all {to_topic[topic].size} heads: {to_topic[topic].mean():.3f} "
            f"(even spread over {len(r.tokens)} tokens: {1 / len(r.tokens):.3f})")
    for lay, h, _ in strongest["river"][:2]:
        r = runs[SENT_RIVER]
        kind = ("previous-token head: every word looks at the word before it"
                if neighbour_head(r.attentions[lay, h], r.special) == "previous"
                else "looks by content, not by position")
        log(f'  L{lay} H{h} on "{SENT_RIVER}" ({kind}):')
        log.extend(matrix_lines(r.tokens, r.tokens, r.attentions[lay, h]))
    return to_topic, strongest["river"]


def log_drift(log, model, runs):
    log.section(8, "bank's vector, river sentence vs money sentence: cosine similarity")
    river, money = runs[SENT_RIVER], runs[SENT_MONEY]
    b = river.tokens.index("bank")
    table = model.weights["embeddings.word_embeddings.weight"]  # [n_vocab, d_model]
    log(f"  lookup row (word embedding {river.ids[b]}): the same row in both -> cosine "
        f"{cosine(table[river.ids[b]], table[money.ids[b]]):.3f}")
    log(f"  embeddings (+ position {b}, type 0, layer norm): cosine "
        f"{cosine(river.hidden_states[0, b], money.hidden_states[0, b]):.3f}")
    for i in range(1, len(river.hidden_states)):
        similarity = cosine(river.hidden_states[i, b], money.hidden_states[i, b])
        log(f"  after layer {i - 1}: cosine {similarity:.3f}")


def log_scaling(log, model, runs):
    d = model.config.d_head
    log.section(9, f"[S5] again, on the model's real queries and keys (d_k = {d})")
    q = np.stack([r.queries for r in runs.values()], axis=1)  # [L, 2, H, T, d_head]
    k = np.stack([r.keys for r in runs.values()], axis=1)
    scores = q @ np.swapaxes(k, -1, -2)  # [L, 2, H, T, T], unscaled
    model_weights = np.stack([r.attentions for r in runs.values()], axis=1)
    same = bool(np.allclose(softmax(scores / np.sqrt(d)), model_weights, rtol=0, atol=1e-12))
    L, n, H, T, _ = scores.shape
    log(f"  per layer: {n} sentences x {H} heads x {T} query tokens = {n * H * T} rows of "
        f"{T} keys (random [S5]: 2000 rows of 8)")
    log(f"  softmax(q.k / sqrt({d})) is the model's own attention weights: {same}")
    for layer in range(len(scores)):
        s = scores[layer]
        log(f"  layer {layer}: dot-product std = {s.std():6.2f}  (sqrt(d) = {np.sqrt(d):5.2f}) | "
            f"avg top weight: unscaled = {top_weight(s):.3f}, scaled = "
            f"{top_weight(s / np.sqrt(d)):.3f}")
    log(f"  all layers: avg top weight: unscaled = {top_weight(scores):.3f}, scaled = "
        f"{top_weight(scores / np.sqrt(d)):.3f}")


def run(log, earlier):
    """Log Module 3 (it reads no earlier module, but follows their log lines)."""
    from attention_workshop.real import load_model  # safetensors, tokenizers: only here

    log.expect_section(6)  # its first line heads [S6], wherever the modules before it end
    model = load_model(MODEL, dtype=np.float64)  # float64: identical digits everywhere
    runs = {sentence: model.run(sentence) for sentence in (SENT_RIVER, SENT_MONEY)}
    log_model(log, model, runs)
    to_topic, top_river = log_heads(log, runs)
    log_drift(log, model, runs)
    log_scaling(log, model, runs)
    river = runs[SENT_RIVER]
    return Result(model=model, river=river, money=runs[SENT_MONEY],
                  bank=river.tokens.index("bank"),
                  to_river=to_topic["river"], to_money=to_topic["money"],
                  strongest=top_river[0][:2])
