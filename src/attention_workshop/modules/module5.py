"""Module 5: switch a head off and see what it did (ablation and patching).

Writes [S16] onward, after Module 4's last line. The toy first: Module 2's wired head has
two channels, topic and place; switching one off is the toy's ablation. Everything real
runs in float64 with one BLAS thread (as Modules 3 and 4), so every printed digit is the
same on every run and machine.
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED, wired_attention
from attention_workshop.embeddings import AXES, SENT_MONEY, SENT_RIVER, embed
from attention_workshop.modules import module1, module2
from attention_workshop.report import fmt_list, named_vector

TITLE = "Module 5: switch a head off and see what it did"
NEEDS_REAL = True  # loads MiniLM's and SmolLM2's weights: `run --no-real` skips this module
CHANNELS = ("topic", "place")  # the wired head's two query/key channels (attention.py)


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


@dataclass(frozen=True)
class Result:
    toy: Toy  # [S16]


def run(log, earlier):
    """Log Module 5 after Module 4's last line."""
    return Result(toy=log_toy(log, earlier[module1.Result], earlier[module2.Result]))
