"""Sharded checkpoints a hostile user could hand in (model.safetensors.index.json): each is
one line, exit 2, nothing written, and no file outside the model folder is ever read.

The folders are tiny random Llamas (tests/real_folder.py) whose weights are split by hand
into two shards with the safetensors library, then the index is damaged one way each.
"""

import json

import numpy as np
import pytest
from hostile import assert_one_line_refusal
from real_folder import write_folder

from attention_workshop.real import load_model

safetensors_numpy = pytest.importorskip("safetensors.numpy")


def sharded(folder):  # a tiny Llama folder with its weights in two shards -> the index's map
    write_folder(folder, "llama")
    tensors = safetensors_numpy.load_file(str(folder / "model.safetensors"))
    (folder / "model.safetensors").unlink()
    names = sorted(tensors)
    halves = {"model-00001-of-00002.safetensors": names[::2],
              "model-00002-of-00002.safetensors": names[1::2]}
    weight_map = {}
    for shard, part in halves.items():
        safetensors_numpy.save_file({n: tensors[n] for n in part}, str(folder / shard))
        weight_map |= {n: shard for n in part}
    write_index(folder, {"metadata": {}, "weight_map": weight_map})
    return weight_map


def write_index(folder, index):
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))


def test_a_good_sharded_folder_equals_the_single_file(tmp_path):
    single = load_model(write_folder(tmp_path / "one", "llama")).run("the river bank")
    sharded(tmp_path / "two")
    both = load_model(tmp_path / "two").run("the river bank")
    np.testing.assert_array_equal(single.attentions, both.attentions)


def a_shard_named(name):
    def damage(folder, weight_map, outside):
        first = next(iter(weight_map))
        return {**weight_map, first: name(outside)}
    return damage


CASES = {  # name -> (damage(folder, weight_map, outside file) -> new weight_map | None, needle)
    "missing shard": (a_shard_named(lambda _: "model-00003-of-00003.safetensors"),
                      "is missing"),
    "shard by ..": (a_shard_named(lambda outside: f"../{outside.name}"),
                    "is not a file inside the model folder"),
    "absolute shard": (a_shard_named(lambda outside: str(outside)),
                       "is not a file inside the model folder"),
    "shard not text": (a_shard_named(lambda _: 7), "is not a file name"),
    "weight_map a list": (lambda folder, wm, _: list(wm), 'no "weight_map"'),
    "weight_map empty": (lambda folder, wm, _: {}, 'no "weight_map"'),
    "shard name too long": (a_shard_named(lambda _: "m" * 300 + ".safetensors"),
                            "cannot be looked at: the name is too long for the file system"),
    "NUL byte in a shard name": (a_shard_named(lambda _: "model-0\0.safetensors"),
                                 "cannot be looked at: the name holds a NUL byte"),
    "shard a folder": (a_shard_named(lambda _: "sub"), "'sub' is not a regular file"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_damaged_index_is_refused(case, tmp_path, capsys):
    damage, needle = CASES[case]
    folder = tmp_path / "model"
    weight_map = sharded(folder)
    outside = tmp_path / "secret.safetensors"  # a valid file outside: must never be read
    safetensors_numpy.save_file({"x": np.zeros(2, np.float32)}, str(outside))
    (folder / "sub").mkdir()
    write_index(folder, {"weight_map": damage(folder, weight_map, outside)})
    assert_one_line_refusal(["real", "the river bank", "--model", folder, "--out",
                             tmp_path / "out"], tmp_path, capsys, needle)


def test_a_symlinked_shard_pointing_outside_is_refused(tmp_path, capsys):
    folder = tmp_path / "model"
    weight_map = sharded(folder)
    shard = next(iter(weight_map.values()))
    outside = tmp_path / "elsewhere.safetensors"
    (folder / shard).rename(outside)
    (folder / shard).symlink_to(outside)
    assert_one_line_refusal(["real", "the river bank", "--model", folder], tmp_path, capsys,
                            "is not a file inside the model folder")


def test_two_shards_claiming_one_tensor_are_refused(tmp_path, capsys):
    folder = tmp_path / "model"
    weight_map = sharded(folder)
    name, shard = next(iter(weight_map.items()))
    other = next(s for s in weight_map.values() if s != shard)
    tensors = safetensors_numpy.load_file(str(folder / other))
    tensors[name] = safetensors_numpy.load_file(str(folder / shard))[name]  # in both now
    safetensors_numpy.save_file(tensors, str(folder / other))
    assert_one_line_refusal(["real", "the river bank", "--model", folder], tmp_path, capsys,
                            "is in two shards")


def test_an_index_that_puts_a_tensor_in_the_wrong_shard_is_refused(tmp_path, capsys):
    folder = tmp_path / "model"
    weight_map = sharded(folder)
    name, shard = next(iter(weight_map.items()))
    other = next(s for s in weight_map.values() if s != shard)
    write_index(folder, {"weight_map": {**weight_map, name: other}})
    assert_one_line_refusal(["real", "the river bank", "--model", folder], tmp_path, capsys,
                            "which does not hold it")


def test_an_index_that_is_not_json_is_refused(tmp_path, capsys):
    folder = tmp_path / "model"
    sharded(folder)
    (folder / "model.safetensors.index.json").write_text('{"weight_map": ')
    assert_one_line_refusal(["real", "the river bank", "--model", folder], tmp_path, capsys,
                            "model weights index")
