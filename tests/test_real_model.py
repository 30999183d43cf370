"""Model.run on a tiny random model (tests/real_folder.py), and the package's public names."""

import warnings
from dataclasses import fields

import numpy as np
import pytest
from real_folder import write_folder

from attention_workshop.errors import WorkshopError
from attention_workshop.real import load_model
from attention_workshop.real.families import family
from attention_workshop.real.model import check_finite

safetensors_numpy = pytest.importorskip("safetensors.numpy")
tokenizers = pytest.importorskip("tokenizers")


def test_sentence_too_long_and_empty(tmp_path):
    model = load_model(write_folder(tmp_path, "gpt2"))  # 6 positions
    assert len(model.run("the river bank by the water").ids) == 6
    with pytest.raises(WorkshopError, match="7 tokens long, but the model has positions for 6"):
        model.run("the river bank by the water bank")
    with pytest.raises(WorkshopError, match="sentence is empty"):
        model.run("  ")


def test_public_api_keeps_its_names_and_fields():
    from attention_workshop.real import DEFAULT, KNOWN, Model, RunResult  # noqa: F401

    assert DEFAULT == "minilm" and DEFAULT in KNOWN
    assert [f.name for f in fields(RunResult)] == [
        "tokens", "ids", "special", "attentions", "hidden", "hidden_states", "queries", "keys",
        "values", "head_outputs", "head"]
    assert [f.name for f in fields(Model)] == ["name", "config", "weights", "tokenizer", "fast",
                                               "eos_id", "chat_template", "blocks"]


def test_a_result_prints_in_one_short_line(tmp_path):
    result = load_model(write_folder(tmp_path, "gpt2")).run("the river bank by the water")
    text = repr(result)
    assert "\n" not in text and len(text) < 400
    assert "attentions=float32[2, 2, 6, 6]" in text and "logits=float32[6, 9]" in text



SCORES = {"bert": ("encoder.layer.{}.attention.self.query.weight",
                   "encoder.layer.{}.attention.self.key.weight"),
          "gpt2": ("h.{}.attn.c_attn.weight",)}


@pytest.mark.parametrize("model_type", ["bert", "gpt2"])
@pytest.mark.parametrize("layer", [0, 1])
def test_attention_that_overflows_is_named_by_its_layer(model_type, layer, tmp_path):
    # check_finite sums only the hidden states: enough only if weights that overflow in a
    # layer always make that layer's output non-finite
    model = load_model(write_folder(tmp_path, model_type))
    for name in SCORES[model_type]:
        w = model.weights[name.format(layer)]
        model.weights[name.format(layer)] = w * np.float32(1e25)  # scores past float32's range
    ids = np.asarray(model.tokenizer.encode("the river bank").ids)
    with np.errstate(all="ignore"):
        out = family(model_type).forward(model.weights, model.config, ids)
    assert not np.isfinite(out["attentions"][layer]).all()
    assert not np.isfinite(out["hidden_states"][layer + 1]).all()
    with pytest.raises(WorkshopError, match=rf"overflow to NaN or infinity in layer {layer} "):
        model.run("the river bank")


@pytest.mark.parametrize(("model_type", "name"), [
    ("bert", "embeddings.word_embeddings.weight"), ("gpt2", "wte.weight"),
    ("llama", "embed_tokens.weight")])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_overflow_a_later_norm_would_hide_is_refused(model_type, name, dtype, tmp_path):
    """Embeddings x 1e200 (float64) or x 1e30 (float32): squared in the first norm they pass
    infinity, and the norm's output would be finite (its bias, or 0): refused, not shown."""
    model = load_model(write_folder(tmp_path, model_type), dtype=dtype)
    by = 1e200 if dtype == "float64" else 1e30
    model.weights[name] = np.asarray(model.weights[name]) * np.dtype(dtype).type(by)
    with pytest.raises(WorkshopError, match="overflow to NaN or infinity in (the embeddings|"
                                            "layer 0 )"):
        model.run("the river bank")


def test_an_overflow_on_a_worker_thread_is_refused_too(tmp_path, monkeypatch):
    """The stages' parts on a second thread run with the caller's error handling."""
    from attention_workshop.real.fast import loop

    monkeypatch.setattr(loop, "SPLIT_FROM", 2)
    monkeypatch.setattr(loop, "threads_allowed", lambda: 2)
    model = load_model(write_folder(tmp_path, "bert"))
    for name in ("query", "key"):  # only head 1's rows: the worker's part of the heads' stage
        w = np.array(model.weights[f"encoder.layer.1.attention.self.{name}.weight"])
        w[4:8] *= np.float32(1e25)  # 2 heads of 4: rows 4-7 are head 1's
        model.weights[f"encoder.layer.1.attention.self.{name}.weight"] = w
    with warnings.catch_warnings(), pytest.raises(
            WorkshopError, match=r"in layer 1 \(overflow encountered in matmul\)"):
        warnings.simplefilter("ignore")  # not as a warning turned error: raised on the worker
        model.run("the river bank")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_one_bad_weight_spoils_its_tokens_blend_even_against_a_zero_value(bad):
    weights = np.full((3, 3), 1 / 3, np.float32)  # [T, T]
    weights[1, 2] = bad
    v = np.ones((3, 4), np.float32)  # [T, d_head]
    v[2] = 0.0  # token 2's value is all zeros: inf * 0 is NaN, not 0
    with np.errstate(invalid="ignore"):
        blend = weights @ v  # the BLAS product, as the forward computes it
    assert np.isfinite(blend[[0, 2]]).all() and not np.isfinite(blend[1]).any()
    out = {"hidden_states": np.zeros((3, 4, 8)), "attentions": np.zeros((2, 2, 4, 4))}
    out["hidden_states"][2, 0, 0] = bad  # the attention finite: the output is named
    with pytest.raises(WorkshopError, match=r"in layer 1 \(its output\)"):
        check_finite("tiny", out)


def test_special_ids_follow_the_tokens_added_to_a_tokenizer():
    from tokenizers import Tokenizer, models

    from attention_workshop.real.model import special_ids

    tokenizer = Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]"))
    assert special_ids(tokenizer) == set()
    tokenizer.add_special_tokens(["[CLS]"])  # id 3
    assert special_ids(tokenizer) == {3}
    tokenizer.add_special_tokens(["[SEP]"])  # id 4: found again, not the first answer kept
    tokenizer.add_tokens(["c"])  # id 5, not special
    assert special_ids(tokenizer) == {3, 4}
