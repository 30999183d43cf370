"""Greedy decoding drafted in float32 and checked by one float64 pass
(real/checked_generation.py) against float64's own token-by-token decoding (decode.generate):
the same tokens, text and stop, each step's attention row and looks within 1e-12; a draft
float64 would not write is replaced by float64's own decoding."""

import dataclasses

import numpy as np
import pytest
from smollm2_reference import smollm2_path

from attention_workshop.modules import module4
from attention_workshop.real import load_model
from attention_workshop.real.checked_generation import (
    checked,
    draft,
    generate_checked,
)


@pytest.fixture(scope="module")
def models():  # (float64, float32) SmolLM2
    smollm2_path()
    fast = load_model("smollm2")
    return load_model("smollm2", dtype=np.float64), fast


def same_generation(a, b):
    assert (a.prompt_ids, a.prompt_tokens, a.new_ids, a.text, a.stopped) == (
        b.prompt_ids, b.prompt_tokens, b.new_ids, b.text, b.stopped)
    assert a.cache_bytes_per_token == b.cache_bytes_per_token
    for x, y in zip(a.steps, b.steps, strict=True):
        assert (x.id, x.token, x.text) == (y.id, y.token, y.text)
        assert x.attention.dtype == y.attention.dtype == np.float64
        np.testing.assert_allclose(x.attention, y.attention, rtol=0, atol=1e-12)
        assert [(p, t) for p, t, _ in x.looked_at] == [(p, t) for p, t, _ in y.looked_at]
        np.testing.assert_allclose([w for _, _, w in x.looked_at],
                                   [w for _, _, w in y.looked_at], rtol=0, atol=1e-12)


@pytest.mark.parametrize(("prompt", "tokens", "chat"), [(module4.PROMPT, 16, False),
                                                        ("What is a river?", 6, True)])
def test_checked_equals_float64_decoding(models, prompt, tokens, chat):
    precise, fast = models
    same_generation(generate_checked(precise, fast, prompt, tokens, chat),
                    precise.generate(prompt, tokens=tokens, chat=chat))


def test_a_draft_float64_would_not_write_is_decoded_again(models):
    precise, fast = models
    d = draft(fast, module4.PROMPT, 5)
    wrong = dataclasses.replace(d, new_ids=[*d.new_ids[:2], d.new_ids[2] + 1, *d.new_ids[3:]])
    same_generation(checked(precise, wrong), precise.generate(module4.PROMPT, tokens=5))
