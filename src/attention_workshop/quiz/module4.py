"""Module 4's quiz: a language model that writes (SmolLM2), its KV cache, its heads.

Answers come from Module 4's float64 run of SmolLM2 (modules/module4.py, by this package's
own NumPy code) and the core's attention functions.
"""

import numpy as np

from attention_workshop.modules import module4
from attention_workshop.quiz.question import Question, choice
from attention_workshop.real.analysis.head_patterns import chance
from attention_workshop.real.decode import cache_bytes


def questions(results):  # {Result class: Result} -> [Question]
    m4 = results[module4.Result]
    cfg = m4.model.config
    per, full = cache_bytes(cfg), cache_bytes(cfg, kv_heads=cfg.n_head)
    group = cfg.n_head // cfg.n_kv_head
    same, other = m4.rotary
    induction, previous, sink = (m4.patterns[k] for k in ("induction", "previous", "sink"))
    top_lay, top_head, top_score = induction.top[0]
    T = len(m4.river.tokens)
    first_row = m4.river.attentions[0, 0, 0].round(3).tolist()  # [T]; the choice below checks
    #           that every head's first row is this one (nothing after the first token)
    bank = T - 1  # "the river bank": bank is the last token
    return [
        Question(
            f"SmolLM2 has {cfg.n_head} query heads per layer but only {cfg.n_kv_head} key/value "
            "heads. How many query heads share each key/value head?",
            float(group),
            f"{cfg.n_head} / {cfg.n_kv_head} = {group}: grouped-query attention. Query heads "
            f"0-{group - 1} read KV head 0, and so on.",
            decimals=0),
        Question(
            f"The KV cache keeps, for every token, a key and a value of {cfg.d_head} float32 "
            f"numbers (4 bytes each) per KV head, in each of {cfg.n_layer} layers. How many "
            f"bytes is that per token, with {cfg.n_kv_head} KV heads?",
            float(per),
            f"2 x {cfg.n_layer} x {cfg.n_kv_head} x {cfg.d_head} x 4 = {per:,} bytes; with a KV "
            f"head per query head it would be {full:,} ({full // per} times as much).",
            decimals=0),
        choice(
            "In a decoder, which tokens can 'bank' attend to in \"the river bank\"?",
            ["'the', 'river' and itself: only tokens at or before it",
             "every token of the sentence, before and after it", "only itself"],
            0 if np.all(m4.river.attentions[:, :, 0, 1:] == 0)
            and np.all(m4.river.attentions[:, :, bank, :] > 0) else 1,
            "The causal mask sets every later token's score to -inf, so its weight is exactly "
            f"0; bank is the last token, so it sees all {T}. The first token can only look at "
            f"itself: its row is {first_row} in every causal head, here in all "
            f"{m4.river.attentions.shape[0] * m4.river.attentions.shape[1]} of SmolLM2's."),
        choice(
            f"Rotary positions: the same query and key, turned as if at positions (3, 0), "
            f"(53, 50) and (503, 500), score {same[0]:.3f} each. What decides a score?",
            ["the distance between the two positions", "the query's own position",
             "nothing: rotary positions change no score"],
            0 if max(same) - min(same) < 1e-9 and abs(other - same[0]) > 1e-6 else 1,
            f"Only m - n counts: at distance 3 every pair scores {same[0]:.3f}, at distance 8 "
            f"{other:.3f}. Each pair of features is turned by an angle proportional to the "
            "position, and q R(m) . k R(n) depends on m - n alone."),
        Question(
            "On 50 random tokens repeated once, an induction head looks from each token of "
            "the repeat at the token that followed its first occurrence. What is the best "
            "induction head's average weight there?",
            float(top_score),
            f"L{top_lay} H{top_head} = {top_score:.3f} (a head that spread every row evenly "
            f"would score {chance('induction', len(induction.ids)):.3f}). It lets the model "
            "copy: its next-token loss falls from "
            f"{induction.loss_first:.2f} nats on the first half to {induction.loss_second:.2f} "
            "on the repeat. `attention-workshop heads --model smollm2 --kind induction` "
            "ranks them all."),
        Question(
            "A sink head parks its attention on the very first token. What is the strongest "
            "sink head's average weight on it?",
            float(sink.top[0][2]),
            f"L{sink.top[0][0]} H{sink.top[0][1]} = {sink.top[0][2]:.3f}: the first token is "
            "a resting place for heads with nothing to look for (softmax must put its share "
            f"somewhere). The best previous-token head, L{previous.top[0][0]} "
            f"H{previous.top[0][1]}, gives {previous.top[0][2]:.3f} to the token just before."),
    ]
