"""SmolLM2-135M-Instruct, run by our NumPy Llama from its GGUF file, equals transformers'
LlamaForCausalLM read from the same file (eager attention, float32).

Attentions within 1e-5 and logits within 1e-3 on texts up to 128 tokens; greedy decoding
gives transformers' ids for 32 new tokens on plain and chat prompts (their loop written by
hand, argmax at each step, their KV cache); our KV cache equals a full recompute; the chat
text is what their apply_chat_template writes.
"""

import numpy as np
import pytest
from interventions_reference import greedy
from smollm2_reference import smollm2_path

from attention_workshop.real import load_model
from attention_workshop.real.decode import cache_bytes, chat_text

torch = pytest.importorskip("torch")

TEXTS = ["the river bank", "the money bank",
         "We sat on the bank of the river and watched the water.",
         "def add(a, b):\n    return a + b\n\nprint(add(2, 3))",
         " ".join(["She deposited her savings at the bank on Monday, then walked along the "
                   "river bank to watch the boats."] * 5)]
PROMPTS = [("The capital of France is", False), ("Once upon a time", False),
           ("1, 2, 3, 4,", False), ("What is a river bank?", True),
           ("Write a haiku about money.", True)]


@pytest.fixture(scope="module")
def ours():
    smollm2_path()  # skips (fails under CI) without the wheel
    return load_model("smollm2")


def reference_run(model, ids):  # -> attentions [L, H, T, T], hidden [L + 1, T, D], logits [T, V]
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), output_attentions=True,
                    output_hidden_states=True)
    return (torch.stack(out.attentions)[:, 0].numpy(),
            torch.stack(out.hidden_states)[:, 0].numpy(), out.logits[0].numpy())


def test_the_model_is_the_one_the_lessons_name(ours):
    cfg = ours.config
    assert (cfg.family, cfg.n_layer, cfg.n_head, cfg.n_kv_head, cfg.d_head, cfg.d_model) == (
        "llama", 30, 9, 3, 64, 576)
    assert (cfg.rope_theta, cfg.tied, cfg.d_mlp, cfg.n_vocab) == (100000.0, True, 1536, 49152)
    assert cache_bytes(cfg) == 2 * 30 * 3 * 64 * 4 == 46080
    assert cache_bytes(cfg, kv_heads=9) == 3 * 46080


@pytest.mark.parametrize("text", TEXTS)
def test_attentions_and_logits_equal_transformers(ours, smollm2_model, smollm2_tokenizer, text):
    ids = smollm2_tokenizer(text)["input_ids"]
    assert ours.encode(text) == ids
    result = ours.run(text)
    attentions, hidden, logits = reference_run(smollm2_model, ids)
    T = len(ids)
    assert T <= 128 and result.attentions.shape == attentions.shape == (30, 9, T, T)
    np.testing.assert_allclose(result.attentions, attentions, rtol=0, atol=1e-5)
    np.testing.assert_allclose(result.logits, logits, rtol=0, atol=1e-3)
    scale = np.abs(hidden).max(axis=-1, keepdims=True) + 1.0  # one feature reaches ~2.4e4
    assert (np.abs(result.hidden_states - hidden) / scale).max() < 1e-4


@pytest.mark.parametrize(("prompt", "chat"), PROMPTS)
def test_greedy_decoding_writes_transformers_ids(ours, smollm2_model, smollm2_tokenizer, prompt,
                                                chat):
    generation = ours.generate(prompt, tokens=32, chat=chat)
    if chat:
        text = smollm2_tokenizer.apply_chat_template([{"role": "user", "content": prompt}],
                                                     tokenize=False, add_generation_prompt=True)
        assert chat_text(ours, prompt) == text
    else:
        text = prompt
    ids = smollm2_tokenizer(text)["input_ids"]
    assert generation.prompt_ids == ids
    assert generation.new_ids == greedy(smollm2_model, ids, 32, eos=2)  # 2: <|im_end|>
    assert generation.text == smollm2_tokenizer.decode(generation.new_ids,
                                                       skip_special_tokens=True)


def test_the_kv_cache_equals_a_full_recompute(ours):
    generation = ours.generate("The river bank was", tokens=8)
    ids = generation.prompt_ids + generation.new_ids
    whole = ours.run(ids)
    n = len(generation.prompt_ids)
    for i, step in enumerate(generation.steps):  # step i was written from position n + i - 1
        np.testing.assert_allclose(step.attention, whole.attentions[:, :, n + i - 1, :n + i],
                                   rtol=0, atol=1e-5)
        assert step.id == int(np.argmax(whole.logits[n + i - 1]))


def test_generate_takes_token_ids_as_run_does(ours, smollm2_model):
    ids = [504, 2843, 3224, 436]  # ids chosen by hand, run as given (no text in between)
    generation = ours.generate(ids, tokens=6)
    assert generation.prompt_ids == ids
    assert generation.new_ids == greedy(smollm2_model, ids, 6, eos=2)


@pytest.mark.parametrize(("prompt", "chat", "says"), [
    ([504, 2843], True, "a chat prompt is text"),
    ([], False, "non-empty list of whole numbers"),
    ([504, 49152], False, "token id 49152 is outside the model's vocabulary"),
    ([1.5], False, "non-empty list of whole numbers")])
def test_generate_refuses_ids_it_cannot_run(ours, prompt, chat, says):
    from attention_workshop.errors import WorkshopError

    with pytest.raises(WorkshopError, match=says):
        ours.generate(prompt, tokens=2, chat=chat)


def test_an_encoder_given_ids_writes_nothing():
    from attention_workshop.errors import WorkshopError

    minilm = load_model("minilm")
    with pytest.raises(WorkshopError, match="is an encoder"):
        minilm.generate([101, 1996, 102], tokens=2)
