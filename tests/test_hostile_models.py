"""Hostile model folders handed to `real`: config values, tensors, dtypes, tokenizers.

Each case takes a tiny random model (tests/real_folder.py), damages one thing, and runs
`real "the river bank" --model FOLDER --out out`, where out/ already holds a previous set:
exit 2, exactly one stderr line naming the problem, no traceback, nothing on stdout (no
table of NaN under "rows sum to 1"), the folder and out/ byte for byte as they were. Cases
that could allocate gigabytes or hang run in a subprocess with a timeout and a memory cap.
"""

import json
import pickle
import struct

import numpy as np
import pytest
from hostile import assert_one_line_refusal
from real_folder import WORDS, write_folder

pytest.importorskip("tokenizers")
safetensors_numpy = pytest.importorskip("safetensors.numpy")

BIG = 1_000_000_000
# (family, config key, value as JSON text, words the message must hold)
CONFIG = {
    "heads 0": ("bert", "num_attention_heads", "0", "num_attention_heads is 0; it must be a "
                "whole number, at least 1"),
    "heads -2": ("bert", "num_attention_heads", "-2", "num_attention_heads is -2"),
    "hidden size as text": ("bert", "hidden_size", '"384"', 'hidden_size is "384" (text); it '
                            "must be a whole number"),
    "hidden size 8.0": ("bert", "hidden_size", "8.0", "hidden_size is 8.0; it must be a whole"),
    "layers 2.5": ("bert", "num_hidden_layers", "2.5", "num_hidden_layers is 2.5"),
    "layers true": ("bert", "num_hidden_layers", "true", "num_hidden_layers is true"),
    "layers null": ("bert", "num_hidden_layers", "null", "num_hidden_layers is null"),
    "layers 1e9 as a float": ("gpt2", "n_layer", "1e9", "n_layer is 1000000000.0; it must be"),
    "layers 10**30": ("gpt2", "n_layer", "1" + "0" * 30, "it must be at most 2147483647"),
    "eps as text": ("bert", "layer_norm_eps", '"x"', 'layer_norm_eps is "x" (text); it must be '
                    "a positive number"),
    "eps NaN": ("bert", "layer_norm_eps", "NaN", "layer_norm_eps is nan; every number must be "
                "finite"),
    "eps Infinity": ("gpt2", "layer_norm_epsilon", "Infinity", "layer_norm_epsilon is inf"),
    "eps 0": ("bert", "layer_norm_eps", "0", "layer_norm_eps is 0; it must be a positive"),
    "eps negative": ("gpt2", "layer_norm_epsilon", "-1e-05", "layer_norm_epsilon is -1e-05"),
    "MLP width 0": ("bert", "intermediate_size", "0", "intermediate_size is 0"),
    "MLP width as text": ("gpt2", "n_inner", '"big"', 'n_inner is "big" (text)'),
    "positions -1": ("bert", "max_position_embeddings", "-1", "max_position_embeddings is -1"),
    "token types 0": ("bert", "type_vocab_size", "0", "type_vocab_size is 0"),
    "activation unknown": ("bert", "hidden_act", '"relu6"', 'hidden_act is "relu6"; it must be '
                           "one of: gelu"),
    "activation a list": ("gpt2", "activation_function", '["gelu"]', "activation_function is "
                          '["gelu"]'),
    "model type a list": ("bert", "model_type", '["bert"]', 'model_type ["bert"] is not '
                          "supported"),
    "model type t5": ("bert", "model_type", '"t5"', 'model_type "t5" is not supported'),
    "heads do not divide": ("bert", "num_attention_heads", "3", "d_model 8 is not a multiple of "
                            "3 heads"),
    "position type relative": ("bert", "position_embedding_type", '"relative_key"',
                               'position_embedding_type is "relative_key", which is not '
                               "supported"),
    "GPT-2 layer-scaled attention": ("gpt2", "scale_attn_by_inverse_layer_idx", "true",
                                     "scale_attn_by_inverse_layer_idx is true"),
    "vocabulary larger than the table": ("bert", "vocab_size", "40", "has shape [9, 8], but "
                                         "config.json implies [40, 8]"),
    "3 layers, 2 in the file": ("gpt2", "n_layer", "3", "tensor 'h.2.ln_1.weight' is missing"),
}
# the same, each in a subprocess with a memory cap: before these checks they took gigabytes
HUGE = {
    "layers 1e9": ("bert", "num_hidden_layers", str(BIG), f"(config.json asks for {BIG} "
                   "layers)"),
    "GPT-2 layers 1e9": ("gpt2", "n_layer", str(BIG), "tensor 'h.2.ln_1.weight' is missing"),
    "heads 1e9": ("bert", "num_attention_heads", str(BIG), f"not a multiple of {BIG} heads"),
    "vocabulary 2e9": ("gpt2", "vocab_size", str(2 * BIG), "config.json implies [2000000000, 8]"),
    "hidden size 1e6": ("gpt2", "n_embd", "1000000", "config.json implies [9, 1000000]"),
}
# config.json as a whole: (family, text, words the message must hold)
CONFIG_FILES = {
    "a list": ("bert", "[1, 2]", "expected a table of keys at the top"),
    "no model type": ("gpt2", '{"n_layer": 2}', "model_type null is not supported"),
    "a repeated key": ("bert", None, 'key "num_hidden_layers" appears twice'),
    "nested 3,000 deep": ("gpt2", '{"x": ' + "[" * 3000 + "]" * 3000 + "}", "nests more than"),
    "binary": ("bert", b"\x89PNG\r\n\x1a\n\0\0", "not a UTF-8 text file"),
    "a required key missing": ("bert", None, "the key 'hidden_size' is missing"),
}


@pytest.fixture
def workspace(tmp_path):  # tmp_path/out holds a previous set of `real`'s files
    out = tmp_path / "out"
    out.mkdir()
    for name in ("head_view.html", "real_layer0.png"):
        (out / name).write_bytes(f"the previous {name}".encode())
    (out / ".attention-workshop.json").write_text('{"real": ["head_view.html", '
                                                  '"real_layer0.png"]}')
    return tmp_path


def refused(workspace, capsys, folder, needle, subprocess_run=False, options=()):
    argv = ["real", "the river bank", "--model", folder, "--out", workspace / "out", *options]
    return assert_one_line_refusal(argv, workspace, capsys, needle, subprocess_run)


def with_config(folder, key, value):  # config.json with `key` set to the JSON text `value`
    raw = json.loads((folder / "config.json").read_text())
    text = json.dumps({k: v for k, v in raw.items() if k != key})
    (folder / "config.json").write_text(text[:-1] + f', "{key}": {value}}}')


@pytest.mark.parametrize("case", CONFIG)
def test_config_value(case, workspace, capsys):
    family, key, value, needle = CONFIG[case]
    folder = write_folder(workspace / "model", family)
    with_config(folder, key, value)
    refused(workspace, capsys, folder, needle)


@pytest.mark.parametrize("case", HUGE)
def test_absurd_size_allocates_nothing(case, workspace, capsys):
    family, key, value, needle = HUGE[case]
    folder = write_folder(workspace / "model", family)
    with_config(folder, key, value)
    refused(workspace, capsys, folder, needle, subprocess_run=True)


@pytest.mark.parametrize("case", CONFIG_FILES)
def test_config_file(case, workspace, capsys):
    family, content, needle = CONFIG_FILES[case]
    folder = write_folder(workspace / "model", family)
    path = folder / "config.json"
    if case == "a repeated key":
        content = path.read_text()[:-1] + ', "num_hidden_layers": 3}'
    elif case == "a required key missing":
        content = json.dumps({k: v for k, v in json.loads(path.read_text()).items()
                              if k != "hidden_size"})
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    err = refused(workspace, capsys, folder, needle)
    assert "model config" in err or "model_type" in err


def save_raw(path, tensors):  # {name: (safetensors dtype code, shape, bytes)} -> a .safetensors
    """Written by hand: numpy has no float8, and safetensors.numpy writes only numpy dtypes."""
    header, offset = {}, 0
    for name, (code, shape, data) in tensors.items():
        header[name] = {"dtype": code, "shape": list(shape), "data_offsets": [offset,
                                                                              offset + len(data)]}
        offset += len(data)
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text +
                     b"".join(data for _, _, data in tensors.values()))


@pytest.mark.parametrize(("code", "size"), [("F8_E4M3", 1), ("F8_E5M2", 1), ("I8", 1),
                                            ("U8", 1), ("BOOL", 1), ("I32", 4), ("I64", 8)])
def test_weights_of_a_type_that_is_not_float_are_refused(code, size, workspace, capsys):
    folder = write_folder(workspace / "model", "gpt2")
    tensors = {name: ("F32", t.shape, t.tobytes()) for name, t in
               safetensors_numpy.load_file(str(folder / "model.safetensors")).items()}
    shape = tensors["h.0.attn.c_attn.weight"][1]
    tensors["h.0.attn.c_attn.weight"] = (code, shape, bytes(size * int(np.prod(shape))))
    save_raw(folder / "model.safetensors", tensors)
    refused(workspace, capsys, folder, f"tensor 'h.0.attn.c_attn.weight' is {code}; only "
            "float16, bfloat16, float32, float64 weights are read")


def _scaled(*names, by):  # -> damage: those tensors (random) times `by`
    def damage(tensors):
        for name in names:
            tensors[name] = tensors[name] * np.float32(by)  # random: a constant would cancel
    return damage


def _sum_overflows(tensors):  # word row + position row: 3e38 + 3e38 is past float32's 3.4e38
    for name in ("embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight"):
        tensors[name][:, 0] = 3e38


# name -> (family, damage, where the message says it happened, options); an overflow stops
# the pass where it happens (model.Model.forward), named by its layer
OVERFLOWS = {
    "embeddings": ("bert", _sum_overflows, "in the embeddings", ()),
    "BERT attention": ("bert", _scaled("encoder.layer.0.attention.self.query.weight",
                                       "encoder.layer.0.attention.self.key.weight", by=1e20),
                       "in layer 0 ", ()),
    "GPT-2 MLP, JSON": ("gpt2", _scaled("h.1.mlp.c_fc.weight", by=1e38),
                        "in layer 1 ", ("--format", "json")),
    "GPT-2 attention, JSON": ("gpt2", _scaled("h.1.attn.c_attn.weight", by=1e25),
                              "in layer 1 ", ("--format", "json")),
}


@pytest.mark.parametrize("case", OVERFLOWS)
def test_numbers_that_overflow_are_refused_naming_the_layer(case, workspace, capsys):
    family, damage, where, options = OVERFLOWS[case]
    folder = write_folder(workspace / "model", family)
    tensors = safetensors_numpy.load_file(str(folder / "model.safetensors"))
    damage(tensors)
    assert all(np.isfinite(t).all() for t in tensors.values())  # every weight is a number
    safetensors_numpy.save_file(tensors, str(folder / "model.safetensors"))
    refused(workspace, capsys, folder, f"numbers overflow to NaN or infinity {where}",
            options=options)


class _Marker:  # unpickling it would write a file: the loader must never unpickle
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def test_a_pickle_named_model_safetensors_is_never_unpickled(workspace, capsys):
    folder = write_folder(workspace / "model", "bert")
    marker = workspace / "unpickled"
    (folder / "model.safetensors").write_bytes(pickle.dumps(_Marker(marker)))
    refused(workspace, capsys, folder, "as safetensors")
    assert not marker.exists()


def test_a_tokenizer_with_ids_past_the_table_is_refused(workspace, capsys):
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder = write_folder(workspace / "model", "gpt2")
    words = {w: i for i, w in enumerate(WORDS + [f"extra{i}" for i in range(30)])}
    tok = Tokenizer(models.WordLevel(words, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(folder / "tokenizer.json"))
    refused(workspace, capsys, folder, "it gives ids up to 38 ('extra29'), but the embedding "
            "table has 9 rows (vocab_size in config.json)")


def _special(cls_id):  # a BERT-style post-processor adding [CLS] as `cls_id`
    def edit(raw):
        raw["post_processor"]["special_tokens"]["[CLS]"]["ids"] = [cls_id]
    return edit


def _unknown(raw):
    raw["model"]["unk_token"] = "[NOT THERE]"


def _added(raw):  # an added token past the 9 rows (tokenizers numbers it 9, the next free id)
    raw["added_tokens"] = [{"id": 99999, "content": "<big>", "single_word": False,
                            "lstrip": False, "rstrip": False, "normalized": False,
                            "special": True}]


# tokenizer.json of the tiny BERT (9 words, table of 9 rows), edited: (edit, needle)
TOKENIZERS = {
    "[CLS] as id 99999": (_special(99999), "its post-processor adds ids up to 99999 ('[CLS]'), "
                          "but the embedding table has 9 rows"),
    "[CLS] as id 9, one past the table": (_special(9), "its post-processor adds ids up to 9 "
                                          "('[CLS]')"),
    "unk_token missing from the vocabulary": (_unknown, 'its unk_token "[NOT THERE]" is not in '
                                              "its vocabulary"),
    "an added token past the table": (_added, "it gives ids up to 9 ('<big>')"),
}


@pytest.mark.parametrize("case", TOKENIZERS)
def test_every_id_a_tokenizer_can_give_is_checked(case, workspace, capsys):
    edit, needle = TOKENIZERS[case]
    folder = write_folder(workspace / "model", "bert")
    raw = json.loads((folder / "tokenizer.json").read_text())
    edit(raw)
    (folder / "tokenizer.json").write_text(json.dumps(raw))
    refused(workspace, capsys, folder, needle)


@pytest.mark.parametrize(("content", "needle"), [
    (b"{not json", "the tokenizer file is corrupt"),
    (b"", "the tokenizer file is corrupt"),
])
def test_a_damaged_tokenizer_is_refused(content, needle, workspace, capsys):
    folder = write_folder(workspace / "model", "bert")
    (folder / "tokenizer.json").write_bytes(content)
    refused(workspace, capsys, folder, needle)


def test_a_folder_where_a_file_should_be_is_refused(workspace, capsys):
    folder = write_folder(workspace / "model", "bert")
    (folder / "tokenizer.json").unlink()
    (folder / "tokenizer.json").mkdir()
    refused(workspace, capsys, folder, "lacks tokenizer.json")


def _reheadered(path, edit, extra=b""):  # model.safetensors with its header text edited
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    text = edit(raw[8:8 + n].decode()).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + n:] + extra)


def _aliased(text):  # h.0.ln_1.bias's offsets made h.0.ln_1.weight's (both [8] float32)
    header = json.loads(text)
    header["h.0.ln_1.bias"]["data_offsets"] = header["h.0.ln_1.weight"]["data_offsets"]
    return json.dumps(header)


def _named_twice(text):  # the first tensor's entry given again under the same name
    name, entry = next(iter((k, v) for k, v in json.loads(text).items() if k != "__metadata__"))
    return _added(text, f'"{name}": {json.dumps(entry)}')


def _added(text, more):  # the header's JSON object with one more "key": value at its end
    return text.rstrip()[:-1] + f", {more}}}"


# the weights' header, damaged as the safetensors library would refuse it (each case is in
# tests/test_real_safetensors_file.py against safe_open): (edit, extra bytes, needle)
HEADERS = {
    "bytes after the last tensor": (lambda t: t, b"\0" * 4, "its tensors end at byte"),
    "one tensor's bytes another's": (_aliased, b"", "shares bytes with another tensor"),
    "a tensor named twice": (_named_twice, b"", "twice"),
    "float shape": (lambda t: t.replace('"shape":[8]', '"shape":[8.0]', 1), b"", "malformed"),
    "__metadata__ a list": (lambda t: _added(t, '"__metadata__": ["x"]'), b"",
                            "its __metadata__ is not an object of texts"),
    "nested 100,000 deep": (lambda t: _added(t, '"x": ' + "[" * 100_000 + "]" * 100_000),
                            b"", "the header nests too deep"),
}


@pytest.mark.parametrize("case", HEADERS)
def test_weights_the_safetensors_library_refuses(case, workspace, capsys):
    edit, extra, needle = HEADERS[case]
    folder = write_folder(workspace / "model", "gpt2")
    _reheadered(folder / "model.safetensors", edit, extra)
    refused(workspace, capsys, folder, needle)


@pytest.mark.parametrize("unreadable", ["the folder", "config.json", "model.safetensors",
                                        "tokenizer.json"])
def test_an_unreadable_model_folder_or_file(unreadable, workspace, capsys):
    """chmod 000, run as a user whom file modes bind (root's override dropped: hostile.py)."""
    folder = write_folder(workspace / "model", "bert")
    target = folder if unreadable == "the folder" else folder / unreadable
    target.chmod(0)
    try:
        err = refused(workspace, capsys, folder, "ermission denied", subprocess_run=True)
    finally:
        target.chmod(0o755 if unreadable == "the folder" else 0o644)
    assert unreadable.split()[-1] in err or "model folder" in err
