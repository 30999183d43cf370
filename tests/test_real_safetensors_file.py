"""real/safetensors_file.py against the safetensors library, which wrote the files.

Every tensor read through the memory map equals safetensors.numpy.load_file's copy, for each
dtype the reader knows; malformed files are refused with a ValueError naming the problem.
"""

import json

import numpy as np
import pytest

from attention_workshop.real.safetensors_file import DTYPES, as_one_array, numbers, tensors

safetensors_numpy = pytest.importorskip("safetensors.numpy")


def stored(tmp_path, arrays, metadata=None):  # {name: array} -> path written by safetensors
    path = tmp_path / "t.safetensors"
    safetensors_numpy.save_file(arrays, str(path), metadata=metadata)
    return path


@pytest.mark.parametrize("seed", range(3))
def test_every_tensor_equals_the_librarys_own(tmp_path, seed):
    rng = np.random.default_rng(seed)
    arrays = {}
    for i, dtype in enumerate(["<f8", "<f4", "<f2", "<i8", "<i4", "<i2", "i1", "u1", "?"]):
        shape = tuple(int(n) for n in rng.integers(0, 5, size=int(rng.integers(0, 4))))
        arrays[f"t{i}.{dtype}"] = np.asarray(rng.normal(size=shape) * 50).astype(dtype)
    path = stored(tmp_path, arrays, metadata={"format": "np"})
    expected = safetensors_numpy.load_file(str(path))
    got = tensors(path)
    assert set(got) == set(expected) == set(arrays)
    for name, array in expected.items():
        view = got[name].array
        assert view.dtype == array.dtype and view.shape == array.shape == got[name].shape, name
        np.testing.assert_array_equal(view, array)
        assert not view.flags.writeable  # a view of the file, never written


def test_float32_tensors_are_views_of_the_file_not_copies(tmp_path):
    path = stored(tmp_path, {"w": np.arange(12, dtype=np.float32).reshape(3, 4)})
    w = tensors(path)["w"].array
    assert w.base is not None and not w.flags.owndata
    np.testing.assert_array_equal(w, np.arange(12).reshape(3, 4))


def rewritten(path, header=None, data=None, length=None):  # a file with a forged header
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n]) if header is None else header
    body = json.dumps(header).encode() if not isinstance(header, bytes) else header
    data = raw[8 + n:] if data is None else data
    size = len(body) if length is None else length
    path.write_bytes(size.to_bytes(8, "little") + body + data)
    return path


FORGED = {  # name -> (how the file is damaged, what the refusal says)
    "short": (lambda p: p.write_bytes(b"\x01\x02"), "shorter than the 8-byte header length"),
    "long header": (lambda p: rewritten(p, length=1 << 40), "does not fit"),
    "not json": (lambda p: rewritten(p, header=b"{not json"), "Expecting"),
    "a list": (lambda p: rewritten(p, header=[1, 2]), "not a JSON object"),
    "dtype a number": (lambda p: rewritten(p, header={"w": {"dtype": 32, "shape": [2],
                                                "data_offsets": [0, 8]}}), "malformed"),
    "shape text": (lambda p: rewritten(p, header={"w": {"dtype": "F32", "shape": "big",
                                          "data_offsets": [0, 8]}}), "malformed"),
    "wrong size": (lambda p: rewritten(p, header={"w": {"dtype": "F32", "shape": [3],
                                          "data_offsets": [0, 8]}}), "do not fit"),
    "past the end": (lambda p: rewritten(p, header={"w": {"dtype": "F32", "shape": [2],
                                          "data_offsets": [0, 1 << 30]}}), "do not fit"),
    "negative": (lambda p: rewritten(p, header={"w": {"dtype": "F32", "shape": [-2, -1],
                                          "data_offsets": [0, 8]}}), "do not fit"),
    "truncated data": (lambda p: rewritten(p, data=b"\x00" * 4), "do not fit"),
}


@pytest.mark.parametrize("damage", sorted(FORGED))
def test_malformed_files_are_refused(tmp_path, damage):
    forge, message = FORGED[damage]
    path = stored(tmp_path, {"w": np.ones(2, np.float32)})
    forge(path)
    with pytest.raises(ValueError, match=message):
        tensors(path)


def test_bfloat16_bits_widen_to_float32_and_float8_comes_without_an_array(tmp_path):
    path = stored(tmp_path, {"w": np.ones(3, np.float32)})
    bits = np.array([0x3F80, 0xC000, 0x7F80], "<u2").tobytes()  # 1.0, -2.0, +inf by hand
    rewritten(path, header={"b": {"dtype": "BF16", "shape": [3], "data_offsets": [0, 6]},
                            "f": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [6, 8]}},
              data=bits + b"\x00\x00")
    got = tensors(path)
    np.testing.assert_array_equal(numbers(got["b"]), [1.0, -2.0, np.inf])
    assert numbers(got["b"]).dtype == np.float32
    assert got["f"] == ("F8_E4M3", (2,), None)


def test_dtypes_known_are_numpys_little_endian_ones():
    for name, code in DTYPES.items():
        assert np.dtype(code).byteorder in "<|=", name


@pytest.mark.parametrize("dtype", ["<f4", "<f8", "<f2"])
def test_one_array_holds_every_tensor_of_one_dtype(tmp_path, dtype):
    rng = np.random.default_rng(1)
    arrays = {name: rng.normal(size=shape).astype(dtype)
              for name, shape in {"a": (2, 3), "b": (4,), "c": (3, 1, 2)}.items()}
    got = tensors(stored(tmp_path, arrays))
    (whole,) = as_one_array(got)
    assert whole.dtype == np.dtype(dtype) and whole.size == 6 + 4 + 6
    np.testing.assert_array_equal(np.sort(whole), np.sort(np.concatenate(
        [a.ravel() for a in arrays.values()])))  # each tensor's numbers, none other
    for left in ("a", "b", "c"):  # first, middle or last in the file: the others' numbers
        pieces = as_one_array(got, leave_out=[got[left].array])
        np.testing.assert_array_equal(np.sort(np.concatenate(pieces)), np.sort(np.concatenate(
            [a.ravel() for name, a in arrays.items() if name != left])))
    assert as_one_array(got, leave_out=[got[n].array for n in "abc"]) == []


@pytest.mark.parametrize("arrays", [
    {"a": np.ones(3, np.float32), "b": np.ones(3, np.float64)},  # two dtypes
    {"a": np.ones(3, np.int32)},  # not floats
    {},  # nothing
])
def test_no_one_array_for_mixed_or_whole_number_files(tmp_path, arrays):
    assert as_one_array(tensors(stored(tmp_path, arrays))) is None
