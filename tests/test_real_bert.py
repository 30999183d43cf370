"""real/families/bert.py on MiniLM's real weights equals transformers' BertModel: every layer's
attentions and hidden states.

The reference is transformers' own eager attention on torch CPU, fed the same token ids.
"""

import numpy as np
import pytest
from torch_reference import run_reference

from attention_workshop.errors import WorkshopError
from attention_workshop.real import load_model
from attention_workshop.real.catalog import MINILM_INSTALL, minilm_folder
from attention_workshop.real.fast import kernels

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

SENTENCES = [
    "the river bank",
    "the money bank",
    "After the long winter, the fishermen pulled their boats up onto the muddy river bank "
    "and then walked into town to deposit their money at the bank.",
    "Bank, bank, BANK! (Unbelievable.)",
]


@pytest.fixture(scope="module")
def ours():
    try:
        return load_model("minilm")
    except WorkshopError:
        pytest.skip(f"MiniLM's weights are not installed ({MINILM_INSTALL})")


@pytest.fixture(scope="module")
def reference(ours):
    model = transformers.BertModel.from_pretrained(str(minilm_folder()),
                                                   attn_implementation="eager")
    return model.eval()


@pytest.mark.parametrize("sentence", SENTENCES)
def test_attentions_and_hidden_equal_transformers(ours, reference, sentence):
    result = ours.run(sentence)
    attentions, hidden = run_reference(reference, result.ids)
    assert result.attentions.shape == attentions.shape == (6, 12, len(result.ids), len(result.ids))
    np.testing.assert_allclose(result.attentions, attentions, rtol=0, atol=1e-5)
    np.testing.assert_allclose(result.hidden, hidden[-1], rtol=0, atol=1e-4)
    np.testing.assert_allclose(result.hidden_states, hidden, rtol=0, atol=1e-4)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("repeats", [20, 72])  # 142 and 506 tokens: rows split over threads
def test_long_inputs_equal_transformers(ours, reference, threads, repeats):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with threadpoolctl.threadpool_limits(limits=threads, user_api="blas"):
        result = ours.run(" ".join(["the river bank by the money bank"] * repeats))
    assert len(result.ids) == 7 * repeats + 2
    attentions, hidden = run_reference(reference, result.ids)
    np.testing.assert_allclose(result.attentions, attentions, rtol=0, atol=1e-5)
    np.testing.assert_allclose(result.hidden_states, hidden, rtol=0, atol=1e-4)


@pytest.mark.parametrize("text", [SENTENCES[2], " ".join(["the river bank by the money"] * 24)])
def test_numpy_passes_equal_transformers_too(ours, reference, text, monkeypatch):
    monkeypatch.setattr(kernels, "compiled", None)  # as where no C compiler built _kernels.c
    result = ours.run(text)
    attentions, hidden = run_reference(reference, result.ids)
    np.testing.assert_allclose(result.attentions, attentions, rtol=0, atol=1e-5)
    np.testing.assert_allclose(result.hidden_states, hidden, rtol=0, atol=1e-4)


def test_tokens_in_same_tokens_out(ours):
    result = ours.run("the river bank")
    assert result.tokens == ["[CLS]", "the", "river", "bank", "[SEP]"]
    assert result.ids == [101, 1996, 2314, 2924, 102]
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(minilm_folder() / "tokenizer.json"))
    sentence = SENTENCES[2]
    # the shipped tokenizer.json pads to 128: ours must not, and must not truncate either
    assert ours.run(sentence).ids == tokenizer(sentence, padding=False)["input_ids"]


def test_config_sizes(ours):
    cfg = ours.config
    assert (cfg.family, cfg.n_layer, cfg.n_head) == ("bert", 6, 12)
    assert (cfg.d_model, cfg.d_head) == (384, 32)
    assert (cfg.d_mlp, cfg.n_ctx, cfg.n_vocab) == (1536, 512, 30522)


def test_sentence_longer_than_positions(ours):
    ours.run(" ".join(["bank"] * 510))  # 510 words + [CLS] + [SEP] = 512 positions: fits
    with pytest.raises(WorkshopError, match="513 tokens long.*positions for 512"):
        ours.run(" ".join(["bank"] * 511))


@pytest.mark.parametrize("sentence", ["", "   ", "\n\t"])
def test_empty_sentence(ours, sentence):
    with pytest.raises(WorkshopError, match="sentence is empty"):
        ours.run(sentence)


def projections(reference, ids, name):  # -> [n_layer, n_head, T, d_head] of one projection
    """What transformers' own `query`, `key` or `value` Linear of every layer puts out,
    caught by forward hooks, split into heads."""
    caught = []
    hooks = [getattr(layer.attention.self, name).register_forward_hook(
        lambda _m, _i, out: caught.append(out[0].detach().numpy()))
        for layer in reference.encoder.layer]
    run_reference(reference, ids)
    for hook in hooks:
        hook.remove()
    heads = reference.config.num_attention_heads
    return np.stack([c.reshape(len(ids), heads, -1).transpose(1, 0, 2) for c in caught])


@pytest.mark.parametrize("sentence", SENTENCES[:3])
def test_queries_keys_values_equal_transformers(ours, reference, sentence):
    """RunResult's queries, keys and values are transformers' W_Q, W_K, W_V outputs, and each
    head's output (before W_O) is attentions @ values, which transformers' attention returns."""
    result = ours.run(sentence)
    for name, ours_array in (("query", result.queries), ("key", result.keys),
                             ("value", result.values)):
        np.testing.assert_allclose(ours_array, projections(reference, result.ids, name),
                                   rtol=0, atol=1e-4, err_msg=name)
    caught = []
    hooks = [layer.attention.self.register_forward_hook(
        lambda _m, _i, out: caught.append(out[0][0].detach().numpy()))
        for layer in reference.encoder.layer]
    run_reference(reference, result.ids)
    for hook in hooks:
        hook.remove()
    heads_out = np.einsum("lhij,lhjd->lihd", result.attentions, result.values)  # [L, T, H, dh]
    np.testing.assert_allclose(heads_out.reshape(len(caught), len(result.ids), -1),
                               np.stack(caught), rtol=0, atol=1e-4)
