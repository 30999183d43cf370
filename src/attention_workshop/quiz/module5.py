"""Module 5's quiz: switch a head off and see what it did.

Answers come from Module 5's result (modules/module5.py): the toy's channels switched off,
MiniLM's river heads switched off and patched, SmolLM2's induction, previous-token and sink
heads, and the sliding KV cache that loses its sink. The questions on a model that did not
run (MiniLM or SmolLM2 not installed) are left out.
"""

import numpy as np

from attention_workshop.modules import module2, module5
from attention_workshop.quiz.question import Question, choice


def questions(results):  # {Result class: Result} -> [Question]
    m5 = results[module5.Result]
    toy = m5.toy
    asked = [
        Question(
            "Module 2's wired head with its topic channel switched off (W_Q's topic column "
            "zeroed): bank's query is (0, 0). What weight does bank then give each of the, "
            "river and bank?",
            float(toy.weights["topic"][2, 1]),
            "Every score is 0 x key = 0, and softmax of three equal scores is 1/3 each: bank's "
            "output is the plain average of the rows, Module 1's ruled-out equal average.",
        ),
        choice(
            "Switch the wired head's place channel off instead. What happens to bank's weights?",
            ["nothing: bank's query has no place part", "they become 1/3 each",
             "bank looks only at itself"],
            0 if np.allclose(toy.weights["place"][2], results[module2.Result].weights[2])
            else 1,
            "Only filler asks on the place channel (W_Q's 1.5), and bank has no filler: bank "
            "keeps its look at river; 'the' loses its look at bank.",
        ),
    ]
    if m5.minilm is not None:
        drift = m5.minilm.drift
        names = list(drift)  # every head on, zero, mean, random
        heads = ", ".join(f"L{lay} H{h}" for lay, h in m5.minilm.heads)
        asked.append(choice(
            f"MiniLM: switching off the heads that send bank to river ({heads}) or as many "
            "random heads. Which leaves bank's vector in the two sentences more alike after "
            "layer 0 (a smaller drift)?",
            ["the river heads off", "the random heads off", "no difference"],
            0 if drift[names[1]][1] > drift[names[3]][1] else 1,
            f"After layer 0 the cosine is {drift[names[0]][1]:.3f} with every head on, "
            f"{drift[names[1]][1]:.3f} with the river heads off and {drift[names[3]][1]:.3f} "
            "with random heads off: the context reached bank through those heads."))
    if m5.smollm2 is not None:
        s = m5.smollm2
        top3 = ", ".join(f"L{lay}H{h}" for lay, h in s.induction[:3])
        mean_random = float(np.mean([loss for _, loss in s.loss_random]))
        (lay, h), (on, off) = next(iter(s.fed.items()))
        sink, (at0, rest) = next(iter(s.sink_norms.items()))
        asked += [
            Question(
                f"SmolLM2 predicts the repeat of a random sequence with a loss of "
                f"{s.loss_plain:.2f} nats. What is the loss with its top 3 induction heads "
                f"({top3}) switched off?",
                s.loss_top[3],
                f"{s.loss_top[3]:.2f} nats; the top 5 off give {s.loss_top[5]:.2f}, while 5 "
                f"random heads give {mean_random:.2f} on average: the copying is theirs.",
                decimals=2),
            Question(
                f"Switch off the previous-token head L{s.previous[0]}H{s.previous[1]}. What "
                f"becomes of the induction score of L{lay}H{h} (it was {on:.3f})?",
                off,
                f"{on:.3f} -> {off:.3f}: an induction head finds the token after the last "
                "occurrence through the previous-token head's mark on it; the loss on the "
                f"repeat rises to {s.loss_previous:.2f}.",
            ),
            choice(
                f"Sink head L{sink[0]}H{sink[1]} puts nearly all its weight on position 0. "
                "Why does that add little to its output?",
                ["the value vector at position 0 is short", "position 0's weight is "
                 "subtracted later", "the first token is always a special token"],
                0 if at0 < rest else 1,
                f"|v| is {at0:.2f} at position 0 against {rest:.2f} on average elsewhere: "
                "weights must sum to 1, so a head with nothing to say parks them where they "
                "change little."),
        ]
        if s.sliding is not None:
            asked.append(sliding_question(s.sliding))
    return asked


def sliding_question(sliding):  # sliding_cache.Sliding ([S19]'s last lines) -> Question
    full, alone, one, four = (sliding.perplexity(name) for name in module5.CACHES)
    return choice(
        f"SmolLM2 reads a text with a sliding KV cache that keeps the newest {sliding.window} "
        f"tokens' keys and values: the perplexity after the window is {module5.digits(full)} "
        f"with the full cache and {module5.digits(alone)} with the window alone. What does "
        "keeping just the first token beside the window do?",
        ["brings it most of the way back", "nothing: one token more hardly counts",
         "makes it worse: the first token is far away"],
        0 if alone - one > (alone - full) / 2 else 1,
        f"{module5.digits(one)} with the first token kept ({module5.digits(four)} with 4): it "
        "is where the heads park their spare weight; evicted, that weight lands on real "
        "tokens' values. The rest of the gap is the older text the window lost.")
