"""The GGUF's numbers kept on disk (real/formats/gguf_cache.py): a load through the cache
gives the fresh read's numbers bit for bit (float64's own entry, the same numbers widened); a
partial, moved or changed entry is read afresh; a folder that cannot be written costs nothing
but the time; two threads writing one entry at once leave it whole; a new entry removes those
whose file is gone or changed."""

import json
import os

import numpy as np
import pytest
from smollm2_reference import smollm2_path

from attention_workshop.real.formats import gguf_cache
from attention_workshop.real.formats.gguf_checkpoint import read_gguf


@pytest.fixture(scope="module")
def fresh():  # SmolLM2 read with no cache at all: the reference
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTENTION_WORKSHOP_CACHE", "")
        return read_gguf(smollm2_path())


def same_model(a, b):
    assert a.config == b.config and a.tokenizer.to_str() == b.tokenizer.to_str()
    assert a.weights.keys() == b.weights.keys() and a.blocks.keys() == b.blocks.keys()
    for name, w in a.weights.items():
        assert w.dtype == b.weights[name].dtype and np.array_equal(w, b.weights[name]), name
    for name, kept in a.blocks.items():
        for part in ("quants", "scales", "offsets"):
            x, y = getattr(kept, part), getattr(b.blocks[name], part)
            assert (x is None and y is None) or np.array_equal(x, y), (name, part)


def test_a_kept_load_equals_a_fresh_read(fresh, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_WORKSHOP_CACHE", str(tmp_path))
    first = read_gguf(smollm2_path())  # dequantizes and writes the entry
    place = gguf_cache.entry(smollm2_path())
    assert place.parent == tmp_path and (place / "numbers.f32").stat().st_size == sum(
        w.nbytes for w in fresh.weights.values())  # 64-byte alignment adds nothing here
    calls = []
    monkeypatch.setattr(gguf_cache, "write", lambda *a: calls.append(a))
    second = read_gguf(smollm2_path())  # maps the entry: nothing dequantized, nothing written
    assert calls == []
    same_model(first, fresh)
    same_model(second, fresh)
    monkeypatch.undo()  # writes again, in the same folder
    monkeypatch.setenv("ATTENTION_WORKSHOP_CACHE", str(tmp_path))
    widened = read_gguf(smollm2_path(), dtype="float64")  # float32's entry, widened: its own
    wide = gguf_cache.entry(smollm2_path(), "float64")
    assert wide.parent == tmp_path and wide != place and (wide / "numbers.f64").stat().st_size \
        == 2 * sum(w.nbytes for w in fresh.weights.values())
    monkeypatch.setattr(gguf_cache, "write", lambda *a: calls.append(a))
    mapped = read_gguf(smollm2_path(), dtype="float64")  # maps float64's entry
    assert calls == []
    for model in (widened, mapped):
        assert model.blocks == {} and model.weights.keys() == fresh.weights.keys()
        for name, w in model.weights.items():
            assert w.dtype == np.float64 and np.array_equal(w, fresh.weights[name]), name
    assert all(not w.flags.owndata for w in mapped.weights.values())  # the file's pages
    w = second.weights["model.norm.weight"]
    w[0] += 1.0  # copy on write: the entry's file keeps its numbers
    assert np.array_equal(read_gguf(smollm2_path()).weights["model.norm.weight"],
                          fresh.weights["model.norm.weight"])


def test_a_partial_entry_is_read_afresh(fresh, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_WORKSHOP_CACHE", str(tmp_path))
    place = gguf_cache.entry(smollm2_path())
    place.mkdir()
    (place / "index.json").write_text('{"format": 1, "bytes": 999, "tensors": []}')
    (place / "numbers.f32").write_bytes(b"\0" * 100)  # shorter than its index says
    assert gguf_cache.read(place) is None
    same_model(read_gguf(smollm2_path()), fresh)
    (place / "index.json").write_text("{not json")
    assert gguf_cache.read(place) is None


def test_an_unwritable_folder_only_costs_time(fresh, tmp_path, monkeypatch):
    (tmp_path / "a file").write_text("")
    monkeypatch.setenv("ATTENTION_WORKSHOP_CACHE", str(tmp_path / "a file"))
    same_model(read_gguf(smollm2_path()), fresh)
    assert list(tmp_path.iterdir()) == [tmp_path / "a file"]  # no half entry left behind


def test_which_files_are_kept_and_under_what_name(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_WORKSHOP_CACHE", str(tmp_path / "kept"))
    small, big = tmp_path / "small.gguf", tmp_path / "big.gguf"
    small.write_bytes(b"\0" * 1000)
    with open(big, "wb") as f:
        f.truncate(gguf_cache.CACHE_FROM)  # sparse: no disk used
    assert gguf_cache.entry(small) is None
    name = gguf_cache.entry(big)
    assert name.parent == tmp_path / "kept"
    os.utime(big, ns=(0, 10**9))  # the file changed: another entry
    assert gguf_cache.entry(big) != name
    monkeypatch.setenv("ATTENTION_WORKSHOP_CACHE", "")
    assert gguf_cache.entry(big) is None  # set and empty: nothing kept
    monkeypatch.delenv("ATTENTION_WORKSHOP_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert gguf_cache.entry(big).parent == tmp_path / "xdg" / "attention-workshop"


def test_two_threads_writing_one_entry_leave_it_whole(tmp_path):
    """One writer held in the middle of its file while the other writes the entry whole: each
    writes beside the entry under a name of its own, the first rename wins, nothing is left."""
    import threading

    place = tmp_path / "entry"
    numbers = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.ones(4, np.float32)}
    midway, go = threading.Event(), threading.Event()

    class Held(dict):  # the numbers, handed out one tensor, then a wait
        def items(self):
            items = iter(dict.items(self))
            yield next(items)
            midway.set()
            go.wait(10)
            yield from items

    held = threading.Thread(target=gguf_cache.write, args=(place, Held(numbers)))
    held.start()
    assert midway.wait(10)
    gguf_cache.write(place, {name: w + 1 for name, w in numbers.items()})  # whole, renamed first
    go.set()
    held.join()
    kept = gguf_cache.read(place)
    assert kept.keys() == numbers.keys()
    for name, w in numbers.items():
        assert np.array_equal(kept[name], w + 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry"]


def test_a_new_entry_removes_those_whose_file_is_gone_or_changed(tmp_path, monkeypatch):
    """Each entry records the file it was made from; writing one removes the entries whose
    file is gone, changed or unrecorded, and half-written ones a day old: nothing else."""
    kept_in = tmp_path / "kept"
    monkeypatch.setenv("ATTENTION_WORKSHOP_CACHE", str(kept_in))
    monkeypatch.setattr(gguf_cache, "CACHE_FROM", 1)
    numbers = {"w": np.arange(6, dtype=np.float32).reshape(2, 3)}
    files = {}
    for name in ("gone", "changed", "same", "new"):
        files[name] = tmp_path / f"{name}.gguf"
        files[name].write_bytes(name.encode())
    for name in ("gone", "changed", "same"):  # an entry each, through a load
        assert gguf_cache.kept(files[name], lambda: numbers)["w"].tolist() == [[0, 1, 2],
                                                                              [3, 4, 5]]
    wide = gguf_cache.entry(files["same"], "float64")
    gguf_cache.kept(files["same"], lambda: numbers, "float64")
    places = {name: gguf_cache.entry(files[name]) for name in files}
    index = json.loads((places["same"] / "index.json").read_text())
    assert index["source"] == {"path": str(files["same"].resolve()), "size": 4,
                               "mtime_ns": files["same"].stat().st_mtime_ns}
    files["gone"].unlink()
    os.utime(files["changed"], ns=(0, 10**9))  # since its entry was written
    legacy = kept_in / f"gguf-{'a' * 24}"  # written before entries named their file
    legacy.mkdir()
    (legacy / "index.json").write_text('{"format": 1, "bytes": 0, "tensors": []}')
    old_part, new_part = (kept_in / f"gguf-{c * 24}.1.2.part" for c in "bc")
    for part in (old_part, new_part):
        part.mkdir()
    os.utime(old_part, (0, 0))  # a writer killed long ago; new_part: one writing now
    others = [kept_in / "llama.cpp", kept_in / f"gguf-{'d' * 23}"]  # not entries
    for other in others:
        other.mkdir()
    before = set(kept_in.iterdir())
    gguf_cache.kept(files["new"], lambda: numbers)  # writes an entry: the folder is pruned
    removed = before - set(kept_in.iterdir())
    assert removed == {places["gone"], places["changed"], legacy, old_part}
    assert set(kept_in.iterdir()) == {places["same"], wide, places["new"], new_part, *others}
    assert gguf_cache.read(places["same"])["w"].tolist() == numbers["w"].tolist()
