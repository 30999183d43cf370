"""A decoder writes: greedy decoding with a KV cache, and where each new token looked.

Each step runs only the newest token: its query attends to the keys and values of every
token before it, kept from the earlier steps (the KV cache, RunResult.keys / .values: the
model's own n_kv_head heads, not copies for every query head). The next token is the one
with the highest score (greedy: the same text on every run; a tie goes to the lower id).

Example: generate(load_model("smollm2"), "The capital of France is", tokens=3).text
-> " Paris. The" (the continuation, as the tokenizer decodes it).
"""

import inspect
import re
from dataclasses import dataclass

import numpy as np

from attention_workshop.errors import WorkshopError
from attention_workshop.real.config import MAX_TOKENS
from attention_workshop.real.families import family

LOOKS = 3  # earlier tokens listed per step: where the content heads looked hardest
HEAD_SHARE = 0.5  # a head is positional at a step if this share of its row is on the first
#                   token (the sink), the token itself or the one before it


@dataclass(frozen=True)
class Step:
    id: int  # the token written
    token: str  # as the tokenizer spells it ('Ġbank')
    text: str  # as it reads ("  bank")
    looked_at: list  # [(position, token, weight)]: where the content heads looked hardest
    attention: np.ndarray  # [n_layer, n_head, S]: the row of the position that wrote it


@dataclass(frozen=True, repr=False)
class Generation:
    prompt_ids: list
    prompt_tokens: list
    new_ids: list
    text: str  # the continuation, decoded
    steps: list  # [Step], one per new token
    stopped: str  # "end" (the end-of-sequence token) or "length" (the tokens asked for)
    cache_bytes_per_token: int  # what the KV cache holds per token (keys and values)

    def __repr__(self):
        return (f"Generation(prompt_ids=[{len(self.prompt_ids)} ids], new_ids={self.new_ids!r}, "
                f"text={self.text!r}, stopped={self.stopped!r})")


def cache_bytes(cfg, kv_heads=None, itemsize=4):  # ModelConfig -> bytes the cache keeps a token
    """keys and values, every layer, each KV head's d_head numbers. Example: SmolLM2 (30
    layers, 3 KV heads of 64, float32) -> 46,080; with a KV head per query head -> 138,240."""
    return 2 * cfg.n_layer * (kv_heads or cfg.n_kv_head) * cfg.d_head * itemsize


def chat_text(model, prompt):  # -> the prompt inside the model's chat template (ChatML)
    """The user's message as ChatML, with the template's own default system message, and
    the assistant's turn opened. Example: "hi" -> "<|im_start|>system\\nYou are ...<|im_end|>
    \\n<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n"."""
    template = model.chat_template or ""
    if "<|im_start|>" not in template:
        raise WorkshopError(f"{model.name} has no chat template; run it without --chat")
    system = re.search(r"<\|im_start\|>system\n(.*?)<\|im_end\|>", template, re.S)
    head = f"<|im_start|>system\n{system.group(1)}<|im_end|>\n" if system else ""
    return f"{head}<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"


def writes(model):  # -> None, or WorkshopError: an encoder writes nothing
    if not model.config.causal:
        raise WorkshopError(f"{model.name} is an encoder ({model.config.family}): it reads a "
                            "sentence but writes nothing; generate with a decoder, e.g. "
                            "--model smollm2")


def prompt_ids(model, prompt, chat=False):  # -> [ids] the generation starts from
    writes(model)
    return model.encode(chat_text(model, prompt) if chat else prompt)


def generate(model, prompt, tokens=32, chat=False, say=None, ablate=None, ids=None):
    # -> Generation
    """Greedy decoding of up to `tokens` new tokens after `prompt` (or its chat form).
    `say(step)` is called as each token comes (a terminal prints it at once). `ablate`
    [(layer, head)]: those heads switched off (zero) in every step, so the KV cache holds
    the keys and values of the run without them (interventions.py). `ids`: the prompt's
    ids as prompt_ids gave them already (a command that checked them first), so the
    prompt is encoded once."""
    if ids is None:
        ids = prompt_ids(model, prompt, chat)  # an encoder refused there
    else:
        writes(model)
        ids = list(ids)
    room = min(model.config.n_ctx, MAX_TOKENS) - len(ids)
    whole = isinstance(tokens, int | np.integer) and not isinstance(tokens, bool | np.bool_)
    tokens = int(tokens) if whole else tokens  # numpy's whole numbers too, as run takes ids
    if not whole or not 1 <= tokens <= room:
        raise WorkshopError(f"--tokens must be a whole number from 1 to {room} (the prompt is "
                            f"{len(ids)} tokens; {model.name} runs at most "
                            f"{min(model.config.n_ctx, MAX_TOKENS)} here)" if room > 0 else
                            f"the prompt is {len(ids)} tokens: no room is left to write in; "
                            "shorten it")
    result = model.run(ids, ablate=ablate)
    eos = model.eos_id
    cached = "past" in inspect.signature(family(model.config.family).forward).parameters
    new, steps = [], []
    for _ in range(tokens):
        next_id = int(np.argmax(result.logits[-1]))  # the first of equal maxima: the lower id
        step = Step(id=next_id, token=model.tokenizer.id_to_token(next_id) or "",
                    text=model.tokenizer.decode([next_id], skip_special_tokens=False),
                    looked_at=looked_at(result.attentions[:, :, -1], ids + new, model),
                    attention=result.attentions[:, :, -1])
        steps.append(step)
        new.append(next_id)
        if say:
            say(step)
        if next_id == eos or len(new) == tokens:
            break
        if cached:  # only the new token runs; the rest is in the KV cache
            result = model.run([next_id], past=result, ablate=ablate)
        else:  # a family with no cache (GPT-2 here): the whole sequence again, same numbers
            result = model.run(ids + new, ablate=ablate)
    return Generation(prompt_ids=ids, prompt_tokens=[model.tokenizer.id_to_token(i) for i in ids],
                      new_ids=new, text=model.tokenizer.decode(new, skip_special_tokens=True),
                      steps=steps, stopped="end" if new[-1] == eos else "length",
                      cache_bytes_per_token=cache_bytes(model.config))


def by_content(rows):  # [L, H, S] one position's attention -> [L, H] bool
    """The heads that looked by content at this step: less than HEAD_SHARE of the row on the
    first token (the sink), the token itself or the one before it. (head_search.content_heads
    ranks the heads over a whole sentence; this marks one generated token's.)"""
    S = rows.shape[-1]
    positional = rows[..., 0] + rows[..., -1] + (rows[..., -2] if S > 1 else 0)
    return positional < HEAD_SHARE


def looked_at(rows, ids, model, count=LOOKS):  # [L, H, S], [S] ids -> [(pos, token, weight)]
    """Where the content heads looked hardest: their rows averaged, the sink and the token
    itself left out. Example: a step after "the river bank" may give [(2, 'Ġriver', 0.31)]."""
    if rows.shape[-1] < 3:  # nothing between the sink and the token itself
        return []
    picked = rows[by_content(rows)]  # [content heads, S]
    if not len(picked):
        return []
    mean = np.add.reduce(picked, axis=0)  # [S]: np.mean's sum and division, without its
    np.true_divide(mean, np.intp(len(picked)), out=mean, casting="unsafe")  # wrapper (~20 us
    # of a generated token's step with its caches cold: 116-126 -> 95-104 us a call)
    order = [int(p) for p in np.argsort(-mean[1:-1], kind="stable")[:count] + 1]
    return [(p, model.tokenizer.id_to_token(ids[p]), float(mean[p])) for p in order]
