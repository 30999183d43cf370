"""The loader: a model folder -> config, weights, tokenizer, and every way a folder can be wrong.

These tests need no torch: the folders are tiny random models (tests/real_folder.py).
"""

import hashlib
import json
import shutil

import numpy as np
import pytest
from real_folder import WORDS, write_folder

from attention_workshop.errors import WorkshopError
from attention_workshop.real import load_model
from attention_workshop.real.catalog import MINILM_INSTALL
from attention_workshop.real.formats.checkpoint import all_finite

safetensors_numpy = pytest.importorskip("safetensors.numpy")
tokenizers = pytest.importorskip("tokenizers")


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
    with pytest.raises(WorkshopError, match='model_type "t5" is not supported'):
        load_model(tmp_path)


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


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float64"])
def test_half_and_double_precision_weights_are_read(tmp_path, dtype):
    """numpy has no bfloat16: its bits are read by hand; torch says what they hold."""
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    folder = write_folder(tmp_path / "m", "gpt2")
    tensors = safetensors_numpy.load_file(str(folder / "model.safetensors"))
    stored = {name: torch.from_numpy(t).to(getattr(torch, dtype)) for name, t in tensors.items()}
    save_file(stored, str(folder / "model.safetensors"))
    model = load_model(folder)
    for name, t in stored.items():
        np.testing.assert_array_equal(model.weights[name], t.float().numpy())  # exactly
    assert np.isfinite(model.run("the river bank").attentions).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5)])
def test_all_finite_is_numpys_isfinite_all(dtype, shape):
    rng = np.random.default_rng(len(shape))
    big = np.finfo(dtype).max / 2  # two of them overflow a row's sum: still finite numbers
    for spoil in (None, np.nan, np.inf, -np.inf, "inf and -inf", "huge"):
        x = rng.normal(size=shape).astype(dtype)
        flat = x.reshape(-1)
        if spoil == "inf and -inf":  # the row's sum is NaN
            flat[[0, 1]] = np.inf, -np.inf
        elif spoil == "huge":
            flat[[0, 1]] = big
        elif spoil is not None:
            flat[rng.integers(flat.size)] = spoil
        for view in (x, x.T):  # contiguous, and not
            assert all_finite(view) == bool(np.isfinite(view).all()), (spoil, view.flags)


@pytest.mark.parametrize("family", ["gpt2", "bert"])
def test_a_float64_load_converts_only_the_rows_a_sentence_reads(tmp_path, family):
    """The word embedding table stays the file's float32 and gives float64 rows (an exact
    widening): a run equals, bit for bit, one with the whole table converted first."""
    from attention_workshop.real.formats.checkpoint import LookupTable
    from attention_workshop.real.formats.safetensors_file import tensors
    from attention_workshop.real.model import Model

    folder = write_folder(tmp_path, family)
    model = load_model(folder, dtype=np.float64)
    name = {"gpt2": "wte.weight", "bert": "embeddings.word_embeddings.weight"}[family]
    table = model.weights[name]
    assert isinstance(table, LookupTable) and table.shape == (model.config.n_vocab,
                                                             model.config.d_model)
    stored = tensors(folder / "model.safetensors")[name].array  # float32, from the file
    ids = [3, 0, 3, len(stored) - 1]
    rows = table[ids]
    assert rows.dtype == np.float64
    np.testing.assert_array_equal(rows, stored[ids].astype(np.float64))
    np.testing.assert_array_equal(np.asarray(table), stored.astype(np.float64))
    assert all(w.dtype == np.float64 for n, w in model.weights.items() if n != name)
    whole = Model(model.name, model.config, {**model.weights, name: np.asarray(table)},
                  model.tokenizer)
    ours, reference = model.run("the river bank"), whole.run("the river bank")
    for field in ("attentions", "hidden_states", "queries", "keys", "values"):
        assert np.array_equal(getattr(ours, field), getattr(reference, field)), field


def test_each_known_tokenizers_highest_id_is_its_own():
    from attention_workshop.real.catalog import minilm_folder
    from attention_workshop.real.formats.checkpoint import load_tokenizer
    from attention_workshop.real.formats.folder_checks import HIGHEST_ID

    try:
        path = minilm_folder() / "tokenizer.json"
    except WorkshopError:
        pytest.skip(f"MiniLM's weights are not installed ({MINILM_INSTALL})")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    tokenizer = load_tokenizer(path)
    vocab = tokenizer.get_vocab(with_added_tokens=True)  # every token, from the file
    added = tokenizer.encode("").ids  # what its post-processor puts around a sentence
    assert digest in HIGHEST_ID, "MiniLM's tokenizer.json is not the pinned one: list its digest"
    assert HIGHEST_ID[digest] == max(vocab.values()) == len(vocab) - 1 == 30521
    assert added == [vocab["[CLS]"], vocab["[SEP]"]] == [101, 102]  # inside the table
    assert vocab[tokenizer.model.unk_token] == 100  # the unknown-word token exists


@pytest.mark.parametrize("edit", ["none", "a space added"])  # listed digest, or not: get_vocab
def test_minilms_tokenizer_past_a_smaller_table_is_refused(edit, tmp_path):
    from attention_workshop.real.catalog import minilm_folder

    try:
        source = minilm_folder()
    except WorkshopError:
        pytest.skip(f"MiniLM's weights are not installed ({MINILM_INSTALL})")
    folder = tmp_path / "m"
    folder.mkdir()
    for name in ("model.safetensors", "tokenizer.json"):
        (folder / name).symlink_to(source / name)
    raw = json.loads((source / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**raw, "vocab_size": 30000}))
    if edit != "none":
        (folder / "tokenizer.json").unlink()
        (folder / "tokenizer.json").write_bytes((source / "tokenizer.json").read_bytes() + b" ")
    with pytest.raises(WorkshopError, match="ids up to 30521 \\('##～'\\), but the embedding table "
                       "has 30000 rows"):
        load_model(folder)


def test_a_nan_in_a_tensor_the_model_does_not_read_is_no_damage(tmp_path):
    # the one-sum check sees it; the tensor-by-tensor check after it finds every weight read
    folder = write_folder(tmp_path / "m", "gpt2")
    tensors = safetensors_numpy.load_file(str(folder / "model.safetensors"))
    tensors["lm_head.unused"] = np.array([1.0, np.nan], np.float32)
    safetensors_numpy.save_file(tensors, str(folder / "model.safetensors"))
    assert np.isfinite(load_model(folder).run("the river bank").attentions).all()


@pytest.mark.parametrize("family", ["gpt2", "bert"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_damaged_table_row_is_refused_when_a_sentence_reads_it(tmp_path, family, dtype):
    # the table is not summed at load: its rows are checked as a forward reads them
    folder = write_folder(tmp_path / "m", family)
    name = {"gpt2": "wte.weight", "bert": "embeddings.word_embeddings.weight"}[family]
    tensors = safetensors_numpy.load_file(str(folder / "model.safetensors"))
    tensors[name][WORDS.index("money"), 5] = np.nan
    safetensors_numpy.save_file(tensors, str(folder / "model.safetensors"))
    model = load_model(folder, dtype=dtype)
    assert np.isfinite(model.run("the river bank").attentions).all()  # no "money" in it
    with pytest.raises(WorkshopError, match=rf"tensor '{name}' in .* holds NaN or infinity"):
        model.run("the money bank")
