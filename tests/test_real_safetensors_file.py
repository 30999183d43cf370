"""real/formats/safetensors_file.py against the safetensors library, which wrote the files.

Every tensor read through the memory map equals safetensors.numpy.load_file's copy, for each
dtype the reader knows; malformed files are refused with a ValueError naming the problem.
"""

import json
import re

import numpy as np
import pytest

from attention_workshop.real.formats.safetensors_file import DTYPES, as_one_array, numbers, tensors

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
                                                "data_offsets": [0, 8]}}), "has dtype 32"),
    "shape text": (lambda p: rewritten(p, header={"w": {"dtype": "F32", "shape": "big",
                                          "data_offsets": [0, 8]}}), "malformed"),
    "wrong size": (lambda p: rewritten(p, header={"w": {"dtype": "F32", "shape": [3],
                                          "data_offsets": [0, 8]}}), "do not fit"),
    "past the end": (lambda p: rewritten(p, header={"w": {"dtype": "F32", "shape": [2],
                                          "data_offsets": [0, 1 << 30]}}), "do not fit"),
    "negative": (lambda p: rewritten(p, header={"w": {"dtype": "F32", "shape": [-2, -1],
                                          "data_offsets": [0, 8]}}), "malformed"),
    "truncated data": (lambda p: rewritten(p, data=b"\x00" * 4), "past the 4 bytes"),
}


@pytest.mark.parametrize("damage", sorted(FORGED))
def test_malformed_files_are_refused(tmp_path, damage):
    forge, message = FORGED[damage]
    path = stored(tmp_path, {"w": np.ones(2, np.float32)})
    forge(path)
    with pytest.raises(ValueError, match=message):
        tensors(path)


def raw_file(path, header_text, data):  # header as JSON text (duplicates, NaN kept) + data
    body = header_text.encode() if isinstance(header_text, str) else header_text
    path.write_bytes(len(body).to_bytes(8, "little") + body + data)
    return path


def entry(begin, end, shape=(2,), dtype="F32"):  # one tensor's header entry, as JSON text
    return json.dumps({"dtype": dtype, "shape": list(shape), "data_offsets": [begin, end]})


def w(begin=0, end=8, shape=(2,), dtype="F32"):
    return f'{{"w": {entry(begin, end, shape, dtype)}}}'


DEEP = 100_000
# name -> (header JSON text, data bytes, what our refusal says); the safetensors library
# refuses each one too (tested below), so a loader reading it would fail or read garbage
LIBRARY_REFUSES = {
    "2 bytes after the last tensor": (w(), bytes(10), "its tensors end at byte 8 of 10"),
    "4 bytes after the last tensor": (w(), bytes(12), "end at byte 8 of 12"),
    "data and no tensor": ("{}", b"xx", "end at byte 0 of 2"),
    "a gap between two tensors": (f'{{"a": {entry(0, 8)}, "b": {entry(12, 20)}}}', bytes(20),
                                  "tensor 'b' at bytes 12-20 leaves a gap"),
    "two tensors on the same bytes": (f'{{"a": {entry(0, 8)}, "b": {entry(0, 8)}}}', bytes(8),
                                      "at bytes 0-8 shares bytes with another tensor"),
    "two tensors overlapping by half": (f'{{"a": {entry(0, 8)}, "b": {entry(4, 12)}}}',
                                        bytes(12), "tensor 'b' at bytes 4-12 shares bytes"),
    "an empty tensor inside another": (f'{{"a": {entry(0, 8)}, "z": {entry(4, 4, [0])}}}',
                                       bytes(8), "shares bytes"),
    "offsets backwards": (w(8, 0), bytes(8), "do not fit"),
    "float shape [2.0]": (w(shape=[2.0]), bytes(8), "malformed header entry"),
    "float shape [32, 32.5]": (w(0, 4160, shape=[32, 32.5]), bytes(4160), "malformed"),
    "string shape": (w(shape=["2"]), bytes(8), "malformed"),
    "true in a shape": (w(shape=[True, 2]), bytes(8), "malformed"),
    "negative size": (w(shape=[-2, -1]), bytes(8), "malformed"),
    "string offsets": ('{"w": {"dtype": "F32", "shape": [2], "data_offsets": ["0", "8"]}}',
                       bytes(8), "malformed"),
    "float offsets": ('{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0.0, 8]}}',
                      bytes(8), "malformed"),
    "three offsets": ('{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8, 8]}}',
                      bytes(8), "malformed"),
    "no offsets": ('{"w": {"dtype": "F32", "shape": [2]}}', bytes(8), "malformed"),
    "an entry that is a number": ('{"w": 5}', b"", "malformed"),
    "a dtype the library does not know": (w(dtype="F99"), bytes(8), "has dtype 'F99', which "
                                          "safetensors does not know"),
    "a dtype in lower case": (w(dtype="f32"), bytes(8), "has dtype 'f32'"),
    "a shape whose size overflows": (w(shape=[2**62, 4]), bytes(8), "do not fit"),
    "a field given twice": ('{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], '
                            '"dtype": "F32"}}', bytes(8), 'the header gives "dtype" twice'),
    "__metadata__ a list": (f'{{"__metadata__": [1], "w": {entry(0, 8)}}}', bytes(8),
                            "its __metadata__ is not an object of texts"),
    "__metadata__ holding a number": (f'{{"__metadata__": {{"x": 1}}, "w": {entry(0, 8)}}}',
                                      bytes(8), "__metadata__ is not an object of texts"),
    "__metadata__ holding null": (f'{{"__metadata__": {{"x": null}}, "w": {entry(0, 8)}}}',
                                  bytes(8), "__metadata__ is not an object of texts"),
    "__metadata__ shaped like a tensor": (f'{{"__metadata__": {entry(0, 8)}}}', bytes(8),
                                          "__metadata__ is not an object of texts"),
    "__metadata__ given twice": (f'{{"__metadata__": {{}}, "__metadata__": {{}}, '
                                 f'"w": {entry(0, 8)}}}', bytes(8), "gives \"__metadata__\""),
    "NaN in the header": (f'{{"w": {entry(0, 8)}, "__metadata__": {{"x": NaN}}}}', bytes(8),
                          "the header holds NaN, which is not JSON"),
    "nested 100,000 deep": ('{"w": ' + "[" * DEEP + "]" * DEEP + "}", b"", "nests too deep"),
    "bytes after the JSON": (w() + "\0\0", bytes(8), "Extra data"),
    "not UTF-8": (b'{"w\xff": ' + entry(0, 8).encode() + b"}", bytes(8), "not UTF-8 text"),
    "an empty header": ("", bytes(8), "Expecting value"),
}
# accepted by the library, so by us too: refusing more than it does would refuse real files
LIBRARY_READS = {
    "spaces after the JSON": (w() + "   ", bytes(8)),
    "null __metadata__": (f'{{"__metadata__": null, "w": {entry(0, 8)}}}', bytes(8)),
    "a field we do not use": ('{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], '
                              '"note": 1}}', bytes(8)),
    "empty tensors at the ends": (f'{{"z": {entry(0, 0, [0])}, "w": {entry(0, 8)}, '
                                  f'"y": {entry(8, 8, [3, 0])}}}', bytes(8)),
    "no tensor at all": ("{}", b""),
    "a float8 tensor": (w(0, 2, dtype="F8_E4M3"), bytes(2)),
}


def library_reads(path):  # -> True if safetensors.safe_open reads every tensor of the file
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), "np") as f:
            for name in f.keys():
                if f.get_slice(name).get_dtype() in DTYPES:
                    f.get_tensor(name)
    except SafetensorError:
        return False
    return True


@pytest.mark.parametrize("case", LIBRARY_REFUSES)
def test_what_the_library_refuses_we_refuse(tmp_path, case):
    text, data, message = LIBRARY_REFUSES[case]
    path = raw_file(tmp_path / "t.safetensors", text, data)
    assert not library_reads(path)  # the reference refuses it...
    with pytest.raises(ValueError, match=re.escape(message)):  # ...and so do we, saying why
        tensors(path)


@pytest.mark.parametrize("case", LIBRARY_READS)
def test_what_the_library_reads_we_read(tmp_path, case):
    path = raw_file(tmp_path / "t.safetensors", *LIBRARY_READS[case])
    assert library_reads(path)
    with safe_open_np(path) as f:
        expected = {name: tuple(f.get_slice(name).get_shape()) for name in f.keys()}
    assert {name: s.shape for name, s in tensors(path).items()} == expected


def safe_open_np(path):
    from safetensors import safe_open

    return safe_open(str(path), "np")


def test_a_duplicate_tensor_name_is_refused(tmp_path):
    """The library keeps the last of two entries named alike; which one a loader meant is
    unknowable, so we refuse it (json's object_pairs_hook sees both)."""
    path = raw_file(tmp_path / "t.safetensors", f'{{"w": {entry(0, 8)}, "w": {entry(8, 16)}}}',
                    bytes(16))
    with pytest.raises(ValueError, match='the header gives "w" twice'):
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
