"""read_gguf's config and weights against independent readers of the same file: transformers'
GGUF loader for SmolLM2 (every tensor of its state_dict) and for tiny files this test writes
with gguf.GGUFWriter, whose weights are known before they are written."""

import numpy as np
import pytest
from smollm2_reference import reference_model, reference_tokenizer, smollm2_path
from tiny_gguf import SIZES, TEMPLATE, TOKENS, llama_cpp_permute, weights_of, write_llama

from attention_workshop.real.formats.gguf_checkpoint import read_gguf, unpermuted


@pytest.fixture(scope="module")
def smollm2():  # -> GGUFModel of the real file, read once for this module
    return read_gguf(smollm2_path())


def test_every_weight_equals_transformers_state_dict(smollm2):
    _, weights, _, _ = smollm2
    state = reference_model().state_dict()
    # the head is tied: transformers' lm_head.weight is the embedding itself
    assert set(weights) == set(state) - {"lm_head.weight"}
    assert np.array_equal(state["lm_head.weight"].numpy(), weights["model.embed_tokens.weight"])
    worst = max(float(np.abs(state[name].numpy() - w).max()) for name, w in weights.items())
    assert worst == 0.0  # measured: exactly equal, all 272 tensors (134.5 M numbers)
    for name, w in weights.items():
        assert w.dtype == np.float32 and w.shape == tuple(state[name].shape), name


def test_q_and_k_rows_are_put_back_in_transformers_order(smollm2):
    """Read raw (no un-permuting), layer 0's W_Q is far from transformers': the rows matter."""
    from gguf.quants import dequantize

    from attention_workshop.real.formats.gguf_file import open_gguf

    _, weights, _, _ = smollm2
    gguf = open_gguf(smollm2_path())
    raw = dequantize(gguf.raw("blk.0.attn_q.weight"), gguf.tensors["blk.0.attn_q.weight"].qtype)
    ours = weights["model.layers.0.self_attn.q_proj.weight"]
    assert np.abs(raw - ours).max() > 1.0  # measured 5.2 (the figure)
    assert np.array_equal(np.sort(raw, axis=0), np.sort(ours, axis=0))  # the same rows, moved


def test_config_equals_transformers_config(smollm2):
    config, _, _, _ = smollm2
    theirs = reference_model().config
    for key in ("num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                "hidden_size", "intermediate_size", "max_position_embeddings", "vocab_size",
                "rms_norm_eps", "hidden_act", "head_dim", "tie_word_embeddings",
                "attention_bias", "bos_token_id", "eos_token_id", "model_type"):
        assert config[key] == getattr(theirs, key), key
    assert config["rope_theta"] == theirs.rope_parameters["rope_theta"] == 100000.0
    assert (config["num_hidden_layers"], config["num_attention_heads"],
            config["num_key_value_heads"], config["head_dim"]) == (30, 9, 3, 64)  # the issue's
    assert (config["bos_token_id"], config["eos_token_id"]) == (1, 2)
    assert isinstance(config["rms_norm_eps"], float) and isinstance(config["rope_theta"], float)


def test_chat_template_is_the_files_own(smollm2):
    config, _, _, _ = smollm2
    assert config["chat_template"] == reference_tokenizer().chat_template
    assert config["chat_template"].startswith("{% for message in messages %}")
    assert "<|im_start|>" in config["chat_template"]


def test_float64_is_the_same_numbers_widened(tmp_path):
    expected = write_llama(tmp_path / "t.gguf")
    _, weights, _, _ = read_gguf(tmp_path / "t.gguf", dtype="float64")
    for name, w in weights.items():
        assert w.dtype == np.float64 and np.array_equal(w, expected[name].astype(np.float64))


@pytest.mark.parametrize("qtype", [None, "Q8_0", "Q4_1", "F16"])
def test_tiny_gguf_weights_come_back(tmp_path, qtype):
    """Weights drawn here, written (Q and K permuted as llama.cpp's converter does, 2-D
    weights quantized when asked), read back: the numbers drawn (or their quantized values,
    dequantized by gguf.quants: the file holds nothing closer)."""
    import gguf

    q = None if qtype is None else gguf.GGMLQuantizationType[qtype]
    expected = write_llama(tmp_path / "t.gguf", qtype=q)
    config, weights, _, _ = read_gguf(tmp_path / "t.gguf")
    assert set(weights) == set(expected)
    for name, w in weights.items():
        assert np.array_equal(w, expected[name]), name
    assert config["num_key_value_heads"] == SIZES["kv"] and config["head_dim"] == 8
    assert config["vocab_size"] == len(TOKENS) and config["chat_template"] == TEMPLATE
    assert config["tie_word_embeddings"] is True and "lm_head.weight" not in weights


def test_untied_head_is_read_as_lm_head(tmp_path):
    drawn = weights_of(seed=1, tied=False)
    write_llama(tmp_path / "t.gguf", weights=drawn)
    config, weights, _, _ = read_gguf(tmp_path / "t.gguf")
    assert config["tie_word_embeddings"] is False
    assert np.array_equal(weights["lm_head.weight"], drawn["lm_head.weight"])


def test_tiny_gguf_weights_equal_transformers(tmp_path):
    """transformers reads the tiny file too: its state_dict is ours, tensor for tensor."""
    transformers = pytest.importorskip("transformers")
    transformers.utils.logging.disable_progress_bar()
    write_llama(tmp_path / "t.gguf")
    _, weights, _, _ = read_gguf(tmp_path / "t.gguf")
    model = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path), gguf_file="t.gguf")
    state = model.state_dict()
    assert set(weights) == set(state) - {"lm_head.weight"}
    for name, w in weights.items():
        assert np.array_equal(state[name].numpy(), w), name


def test_unpermuted_inverts_the_converters_permute():
    """One head of 4 rows by hand: llama.cpp stores rows [r0, r2, r1, r3] (each first-half
    row beside its rotary partner); unpermuted gives back [r0, r1, r2, r3]."""
    rows = np.arange(4.0).reshape(4, 1) * np.ones((1, 3))
    stored = llama_cpp_permute(rows, 1)
    assert stored[:, 0].tolist() == [0.0, 2.0, 1.0, 3.0]
    assert np.array_equal(unpermuted(stored, 1), rows)
    many = np.random.default_rng(0).normal(size=(3 * 64, 5))
    assert np.array_equal(unpermuted(llama_cpp_permute(many, 3), 3), many)
