"""Module 3's quiz: the same formula inside a real pretrained transformer (MiniLM).

Answers come from Module 3's run of MiniLM (modules/module3.py, by this package's own
NumPy code), one more sentence through the same model, and the core's attention functions.
"""

import numpy as np

from attention_workshop.attention import causal_mask, scaled_dot_product_attention, softmax
from attention_workshop.embeddings import SENT_MONEY, SENT_RIVER
from attention_workshop.modules import module3
from attention_workshop.quiz.question import Question, choice
from attention_workshop.report import fmt_list


def questions(results):  # {Result class: Result} -> [Question]
    m3 = results[module3.Result]
    model, river, i = m3.model, m3.river, m3.bank
    cfg = model.config
    to_river = m3.to_river  # [n_layer, n_head]
    layer, head = m3.strongest
    to_money = m3.to_money[layer, head]
    q, k = river.queries[layer, head], river.keys[layer, head]  # [T, d_head] each
    recomputed = softmax(q @ k.T / np.sqrt(cfg.d_head))  # [T, T]
    same = bool(np.allclose(recomputed, river.attentions[layer, head], atol=1e-5))
    T = len(river.tokens)
    longer = model.run("a bank by the river").attentions[layer, head]  # [T', T']
    previous = float(np.mean([longer[t, t - 1] for t in range(1, len(longer))]))
    own = float(np.mean(np.diag(longer)))
    rng = np.random.default_rng(0)
    qkv = rng.standard_normal((3, T, cfg.d_head))
    _, masked = scaled_dot_product_attention(*qkv, mask=causal_mask(T))

    return [
        Question(
            f"MiniLM has {cfg.n_layer} layers, each with {cfg.n_head} attention heads. How "
            "many attention heads is that in all?",
            float(cfg.n_layer * cfg.n_head),
            f"{cfg.n_layer} x {cfg.n_head} = {cfg.n_layer * cfg.n_head}: each one is a head "
            "like Module 2's, with its own W_Q, W_K and W_V.",
            decimals=0),
        Question(
            f"MiniLM's hidden size is {cfg.d_model}, split evenly over {cfg.n_head} heads. "
            "What is d_k, the length of each head's queries and keys?",
            float(cfg.d_head),
            f"{cfg.d_model} / {cfg.n_head} = {cfg.d_head} (the wired head had d_k = 2; GPT-2 "
            "small has 64).",
            decimals=0),
        Question(
            "So every MiniLM head divides its scores by sqrt(d_k). By how much?",
            float(np.sqrt(cfg.d_head)),
            f"sqrt({cfg.d_head}) = {np.sqrt(cfg.d_head):.3f}: the same [S5] correction, "
            "keeping softmax out of winner-take-all at this width."),
        Question(
            f'Run "{SENT_RIVER}" through MiniLM (tokens: {" ".join(river.tokens)}). Over all '
            f"{cfg.n_layer * cfg.n_head} heads, what is the largest share 'bank' gives "
            "'river'?",
            float(to_river.max()),
            f"Layer {layer}, head {head} (counted from 0, the log's L{layer} H{head}; `real "
            f"\"{SENT_RIVER}\" --layer {layer} --head {head}` shows it) gives river "
            f"{to_river.max():.3f} of bank's attention, and in \"{SENT_MONEY}\" it gives money "
            f"{to_money:.3f}. Next question: is it looking for the topic?"),
        choice(
            f"Run \"a bank by the river\" through the same head (layer {layer}, head {head}), "
            "where river comes after bank. What does the head do?",
            ["each token looks at the token just before it",
             "bank looks for the topic word wherever it is", "each token looks at itself"],
            0 if previous > max(own, 0.5) else (2 if own > 0.5 else 1),
            f"Each token gives the token just before it {previous:.3f} of its attention on "
            f"average (itself: {own:.3f}). It is a previous-token head: it found river only "
            "because river came right before bank. A learned head can track position rather "
            "than meaning; to find one that looks for the topic, move the topic word around "
            "and see which heads follow it: `real \"a bank by the river\" --from bank --to "
            "river` shows bank's share on river in every layer and head."),
        choice(
            f"That head's weights: recompute softmax(Q K^T / sqrt({cfg.d_head})) from its own "
            "queries and keys. What do you get?",
            ["the same weights: it is Module 2's formula, with learned W_Q and W_K",
             "different weights: real heads use another formula",
             "weights whose rows do not sum to 1"],
            0 if same else 1,
            f"Bank's row, recomputed: {fmt_list(recomputed[i])}; the model's: "
            f"{fmt_list(river.attentions[layer, head, i])}. Only the matrices are learned; "
            "the formula is the one built in Modules 1-2."),
        choice(
            "A GPT-style model adds a causal mask. With it, what weight does the first "
            "token give to every later token?",
            ["exactly 0: a token may look only at itself and earlier tokens",
             "1/T each, shared equally", "the same as without the mask"],
            0 if np.all(masked[np.triu_indices(T, 1)] == 0) else 1,
            "Masked scores become -inf before softmax, and e^-inf = 0. First row of a "
            f"{T}-token causal head: {fmt_list(masked[0])}."),
    ]
