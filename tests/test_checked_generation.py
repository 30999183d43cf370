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
from attention_workshop.real.blas_threads import one_blas_thread
from attention_workshop.real.checked_generation import (
    checked,
    draft,
    generate_checked,
    generated_aside,
)


@pytest.fixture(scope="module")
def models():  # (float64, float32) SmolLM2
    smollm2_path()
    fast = load_model("smollm2")
    return module4.widened(fast), fast


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


def test_widened_is_the_float64_load(models):
    precise, fast = models
    loaded = load_model("smollm2", dtype=np.float64)
    assert precise.dtype == "float64" and precise.blocks == {} and fast.blocks
    assert precise.weights.keys() == loaded.weights.keys()
    for name, w in loaded.weights.items():
        assert np.array_equal(precise.weights[name], w)


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


def test_aside_on_a_second_thread_gives_the_same(models):
    precise, fast = models
    with one_blas_thread():
        aside = generated_aside(precise, fast, [(module4.PROMPT, 4, False)])
        here = precise.run(module4.TEXT)  # float64 work of this thread meanwhile
        (made,) = aside.result()
    same_generation(made, generate_checked(precise, fast, module4.PROMPT, 4))
    alone = precise.run(module4.TEXT)
    assert np.array_equal(here.attentions, alone.attentions)  # bit for bit: one BLAS thread


def test_aside_drafts_before_the_float64_model_is_made_then_runs_then(models):
    """precise may come later (a Future's result): the drafts are written meanwhile, the
    checks wait for it, and `then`'s passes follow; a failure to make it ends the aside."""
    from concurrent.futures import Future

    precise, fast = models
    later = Future()
    with one_blas_thread():
        aside = generated_aside(later.result, fast, [(module4.PROMPT, 3, False)],
                                then=[lambda: later.result().run("the river bank")])
        assert not aside.done()  # the drafts are written, then it waits for the model
        later.set_result(precise)
        made, river = aside.result()
    same_generation(made, generate_checked(precise, fast, module4.PROMPT, 3))
    assert np.array_equal(river.attentions, precise.run("the river bank").attentions)
    failed = Future()
    aside = generated_aside(failed.result, fast, [(module4.PROMPT, 2, False)])
    failed.set_exception(MemoryError("no room for float64"))
    with pytest.raises(MemoryError, match="no room"):
        aside.result()
