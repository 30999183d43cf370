"""Greedy decoding written by the fast float32 model and checked by one float64 pass.

A float64 decoder writing token by token reads its 1 GB of weights once per token (SmolLM2:
~0.1 s a token on one core); float32's accelerator with the file's 4- and 8-bit blocks
writes the same tokens several times faster. So the float32 model drafts the continuation,
and the float64 model runs once on the prompt and the draft (all but the last token,
which no step ran): a causal row p saw exactly what decoding step p saw, so that one pass
gives every step's next-token scores and attention row (speculative decoding's check,
greedy). If the float64 choice (argmax, the lower id on a tie, as decode.generate) is the
draft's token at every step, the generation is float64's own, every number from the float64
pass; at the first step where it is not, float64 decodes on its own from the start
(decode.generate): the result is the same either way, only the time differs.

Example: generate_checked(m64, m32, "The river bank was", 16).new_ids == m64.generate(
"The river bank was", 16).new_ids, its steps' attention rows within 1e-12 of those.
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.real.decode import (
    Generation,
    Step,
    cache_bytes,
    generate,
    looked_at,
    prompt_ids,
)


@dataclass(frozen=True)
class Draft:
    prompt: str
    tokens: int  # asked for
    chat: bool
    ids: list  # the prompt's ids (in the chat template if chat)
    new_ids: list  # what the fast model wrote


def draft(fast, prompt, tokens=32, chat=False):  # float32 Model -> Draft
    ids = prompt_ids(fast, prompt, chat)
    return Draft(prompt, tokens, chat, ids, generate(fast, prompt, tokens, chat, ids=ids).new_ids)


def generate_checked(precise, fast, prompt, tokens=32, chat=False):  # -> decode.Generation
    """`precise` (float64) and `fast` (the same weights in float32) -> precise's greedy
    generation. Example: a draft whose step 3 float64 would write differently -> precise's
    own decode.generate, token by token."""
    return checked(precise, draft(fast, prompt, tokens, chat))


def checked(precise, d):  # float64 Model, Draft -> decode.Generation, float64's own
    checked_run = precise.run(d.ids + d.new_ids[:-1])
    first = len(d.ids) - 1  # the row that wrote the first new token
    scores = checked_run.head(checked_run.hidden[first:])  # [new, n_vocab]
    if np.argmax(scores, axis=-1).tolist() != d.new_ids:  # float64 writes otherwise
        return generate(precise, d.prompt, d.tokens, d.chat, ids=d.ids)
    tokenizer = precise.tokenizer
    steps = [step(precise, checked_run, first + k, new) for k, new in enumerate(d.new_ids)]
    return Generation(prompt_ids=d.ids, prompt_tokens=[tokenizer.id_to_token(i) for i in d.ids],
                      new_ids=d.new_ids, text=tokenizer.decode(d.new_ids, skip_special_tokens=True),
                      steps=steps, stopped="end" if d.new_ids[-1] == precise.eos_id else "length",
                      cache_bytes_per_token=cache_bytes(precise.config))


def step(model, run, p, new_id):  # Model, its RunResult, the row p, the id p wrote -> Step
    rows = run.attentions[:, :, p, :p + 1]  # [L, H, p + 1]: row p, causal: what step p saw
    return Step(id=new_id, token=model.tokenizer.id_to_token(new_id) or "",
                text=model.tokenizer.decode([new_id], skip_special_tokens=False),
                looked_at=looked_at(rows, run.ids[:p + 1], model), attention=rows)
