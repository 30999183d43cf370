"""Module 6's quiz: attention learns. Every answer is one Module 6 measured for results.log
(modules/module6.py): the learned wiring, the aside at d = 256, the induction run."""

import numpy as np

from attention_workshop.embeddings import AXES, SENT_RIVER
from attention_workshop.modules import module6
from attention_workshop.quiz.question import Question, choice
from attention_workshop.report import fmt_list


def questions(results):  # {Result class: Result} -> [Question]
    m6 = results[module6.Result]
    learned, wired = m6.bank_learned[SENT_RIVER], m6.bank_wired[SENT_RIVER]
    asks = int(np.argmax(np.abs(m6.W_Q @ m6.W_K.T).sum(axis=1)))  # the query axis that counts
    stuck = m6.aside[False]
    seed = int(np.argmin(stuck.grad_start))
    last = m6.snapshots[-1]
    before, after = m6.phase
    at = {s.step: s for s in m6.snapshots}
    prev_head = int(np.argmax(last.previous[0]))
    none, off = m6.ablation["none"][1], m6.ablation[f"L0 H{prev_head}"][1]
    return [
        Question(
            f'After training, what weight does bank give river in "{SENT_RIVER}" under the '
            "learned wiring (the sentence was never trained on)?",
            float(learned[1]),
            f"Learned {fmt_list(learned)} against the hand wiring's {fmt_list(wired)}: the task "
            "rewards a bank whose output leans to its topic, so gradient descent sends nearly all "
            "of its weight to the topic word, a word it never saw in training."),
        choice(
            "Which of bank's axes does the learned W_Q read most (the row of W_Q @ W_K.T with "
            "the largest entries)?",
            list(AXES), asks,
            f"{AXES[asks]}: the row of the axis the query asks with. Module 2 wired bank's "
            "question to its place-ness too (W_Q_WIRED's place row asks for topic)."),
        Question(
            f"At d_k = 256 without the division by sqrt(256), seed {seed}'s start passed the "
            "smallest gradient. What was its loss after training (the log prints 3 decimals)?",
            float(stuck.losses[seed, -1]),
            f"{stuck.losses[seed, 0]:.3f} -> {stuck.losses[seed, -1]:.3f}: its rows were pinned "
            f"({stuck.pinned[seed]:.1%}) off the topic word, and a pinned softmax row passes a "
            f"gradient of only {stuck.grad_start[seed]:.1e}: log 2 = 0.693 is not knowing the "
            "kind at all."),
        Question(
            "Between which logged steps did the second-copy loss fall most? Give the later one.",
            float(after),
            f"From step {before} ({at[before].second_copy:.2f} nats) to {after} "
            f"({at[after].second_copy:.2f}): the phase change, where layer 1's induction scores "
            f"rise from {at[before].induction[1].max():.2f} to {at[after].induction[1].max():.2f}.",
            decimals=0),
        Question(
            f"With L0 H{prev_head}, the previous-token head, switched off, what is the held-out "
            f"second-copy loss (it is {none:.2f} nats with every head on)?",
            float(off),
            f"{none:.2f} -> {off:.2f} nats: the induction heads in layer 1 find 'the token after "
            "my earlier copy' through keys that layer 0's previous-token head wrote: without it "
            "they cannot find it (K-composition).",
            decimals=2),
        choice(
            f"The first copy's loss stays near log 32 = {np.log(32):.2f} nats all through "
            "training. Why?",
            ["the model is too small", "its tokens are random: nothing before them predicts them",
             "the learning rate is too low"], 1,
            f"Only the second copy can be predicted, from the first; the first copy ends at "
            f"{last.first_copy:.2f} nats while the second falls to {last.second_copy:.2f}."),
    ]
