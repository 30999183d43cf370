"""A .safetensors file, memory-mapped: its header read, every tensor a read-only numpy view.

The format: 8 bytes (little-endian) giving the header's length N, N bytes of JSON
{name: {"dtype": "F32", "shape": [384, 384], "data_offsets": [begin, end]}, ...} (and an
optional "__metadata__" of texts), then the tensors' bytes, offsets counted from the end of
the header. Mapping the file reads nothing yet: a tensor's pages come from the OS file cache
when first used, and float32 weights are used in place, shared with that cache (copying
them out took a quarter of a cold start: docs/benchmarks.md).

A file the safetensors library refuses is refused here too (`header` and `check_layout`):
a name or a field given twice, a shape or offset that is not a whole number >= 0 (2.5,
"32", true), a dtype the library does not know, a `__metadata__` that is not an object of
texts, NaN in the header, nesting too deep to parse; and tensors that do not tile the data
exactly, one after another: no gap, no tensor's bytes shared with another's, no byte after
the last one.

Example: tensors(path)["embeddings.word_embeddings.weight"].array -> a [30522, 384] float32
view of the file.
"""

import json
import math
import mmap
from typing import NamedTuple

import numpy as np

# safetensors dtype -> numpy (little-endian, as the format stores them). bfloat16 has no
# numpy dtype: its 16-bit patterns are mapped as uint16 and widened by `numbers`; the float8
# kinds have neither, and come with no array (a loader refuses them if it needs them).
DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8",
          "I32": "<i4", "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?"}
# every dtype code the safetensors library reads (0.8) -> bits per number
BITS = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8,
        "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "I16": 16,
        "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64,
        "F64": 64, "I64": 64, "U64": 64}
MAX_HEADER = 100 << 20  # bytes; the safetensors library refuses larger headers too
FIELDS = ("dtype", "shape", "data_offsets")


class Stored(NamedTuple):
    dtype: str  # the file's own code: "F32", "BF16", "F8_E4M3", ...
    shape: tuple
    array: object  # a read-only view of the bytes (bfloat16: their bits), None if no numpy type


def tensors(path):  # Path -> {name: Stored}; ValueError or OSError if malformed
    with open(path, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)  # the map outlives the file
    if len(data) < 8:
        raise ValueError(f"{len(data)} bytes, shorter than the 8-byte header length")
    n = int.from_bytes(data[:8], "little")
    if n > min(MAX_HEADER, len(data) - 8):
        raise ValueError(f"header length {n} does not fit the {len(data)}-byte file")
    entries = {name: fields(name, entry) for name, entry in header(bytes(data[8:8 + n])).items()}
    check_layout(entries, len(data) - 8 - n)
    return Tensors({name: view(data, 8 + n, *entry) for name, entry in entries.items()},
                   np.frombuffer(data, np.uint8, offset=8 + n))


def header(raw):  # the header's bytes -> {name: entry}, __metadata__ checked and left out
    """Example: b'{"__metadata__": {"format": "pt"}, "w": {...}}' -> {"w": {...}}."""
    from attention_workshop.reading import DuplicateKey, unique_keys

    try:
        doc = json.loads(raw.decode("utf-8"), object_pairs_hook=unique_keys,
                         parse_constant=_finite)
    except DuplicateKey as exc:  # a tensor's name, or one entry's field
        raise ValueError(f"the header gives {exc} twice") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"the header is not UTF-8 text (byte {exc.start})") from None
    except RecursionError:  # the parser recurses: 100,000 nested lists would end it
        raise ValueError("the header nests too deep to be a safetensors header") from None
    if not isinstance(doc, dict):
        raise ValueError("the header is not a JSON object")
    metadata = doc.pop("__metadata__", None)
    if metadata is not None and not (isinstance(metadata, dict) and
                                     all(isinstance(v, str) for v in metadata.values())):
        raise ValueError("its __metadata__ is not an object of texts")
    return doc


def _finite(word):  # json's parse_constant: NaN, Infinity
    raise ValueError(f"the header holds {word}, which is not JSON")


def _whole(value):  # a size or an offset: an int >= 0 (not True, not 2.0, not "2")
    return type(value) is int and value >= 0


def fields(name, entry):  # header entry -> (name, dtype code, shape, begin, end)
    """Example: {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]} ->
    ("w", "F32", (2, 3), 0, 24)."""
    ok = isinstance(entry, dict) and all(key in entry for key in FIELDS)
    if ok:
        code, shape, offsets = (entry[key] for key in FIELDS)
        ok = isinstance(shape, list) and all(map(_whole, shape)) and \
            isinstance(offsets, list) and len(offsets) == 2 and all(map(_whole, offsets))
    if not ok:
        raise ValueError(f"tensor '{_shown(name)}' has a malformed header entry "
                         f"{_shown(repr(entry))}")
    if not isinstance(code, str) or code not in BITS:
        raise ValueError(f"tensor '{_shown(name)}' has dtype {_shown(repr(code))}, which "
                         "safetensors does not know")
    begin, end = offsets
    bits = math.prod(shape) * BITS[code]  # exact: Python's ints do not wrap
    if end < begin or bits % 8 or end - begin != bits // 8:
        raise ValueError(f"tensor '{_shown(name)}': shape {shape} and offsets {offsets} do not "
                         f"fit the file")
    return name, code, tuple(shape), begin, end


def check_layout(entries, size):  # {name: fields}, bytes after the header
    """The tensors tile the data in order, as the library requires. Example: a [0, 8] and
    b [4, 12] -> refused (b's first 4 bytes are a's last 4)."""
    at, gap = 0, None
    for name, _, _, begin, end in sorted(entries.values(), key=lambda e: (e[3], e[4])):
        if begin < at:  # said first: one tensor aliasing another also leaves a gap elsewhere
            raise ValueError(f"tensor '{_shown(name)}' at bytes {begin}-{end} shares bytes "
                             f"with another tensor (the previous one ends at {at})")
        if begin > at and gap is None:
            gap = f"tensor '{_shown(name)}' at bytes {begin}-{end} leaves a gap (the previous " \
                  f"one ends at {at})"
        at = end
    if gap is not None:
        raise ValueError(gap)
    if at != size:
        raise ValueError(f"its tensors end at byte {at} of {size}" if at < size else
                         f"tensor data ends at byte {at}, past the {size} bytes the file holds")


def _shown(text):  # a name from the file, on one line and cut
    from attention_workshop.reading import printable

    return printable(text, 80)


class Tensors(dict):
    """{name: Stored}, and .data: every byte after the header, [bytes] uint8 (a view)."""

    def __init__(self, stored, data):
        super().__init__(stored)
        self.data = data


def as_one_array(stored, leave_out=()):
    # Tensors, arrays among its tensors -> [arrays]: the data in the tensors' dtype, or None
    """If every tensor has the same numpy float dtype, the bytes after the header read as
    that dtype, in one array, or in the pieces around the tensors left out: a tensor is a
    slice of it. Example: F32 tensors a (6 numbers), b (4), c (2), leave_out [b] -> [a's 6,
    c's 2]."""
    codes = {s.dtype for s in stored.values()}
    if len(codes) != 1 or codes & {"BF16"} or not codes <= set(DTYPES):
        return None
    dtype = np.dtype(DTYPES[codes.pop()])
    if dtype.kind != "f" or len(stored.data) % dtype.itemsize:
        return None
    whole = stored.data.view(dtype)
    start = whole.__array_interface__["data"][0]
    cuts = sorted(((part.__array_interface__["data"][0] - start) // dtype.itemsize, part.size)
                  for part in leave_out)  # [(first element, count)]
    pieces, at = [], 0
    for first, count in cuts:
        pieces.append(whole[at:first])
        at = first + count
    return [piece for piece in [*pieces, whole[at:]] if piece.size]


def view(data, start, name, code, shape, begin, end):  # mmap, data offset, fields -> Stored
    """Example: ("w", "F32", (2, 3), 0, 24) -> a [2, 3] view."""
    if code not in DTYPES:
        return Stored(code, shape, None)
    dtype = np.dtype(DTYPES[code])
    count = (end - begin) // dtype.itemsize
    return Stored(code, shape, np.frombuffer(data, dtype, count, start + begin).reshape(shape))


def numbers(stored):  # Stored -> its array; bfloat16 widened to float32 (a new array)
    """A bfloat16 is the top half of a float32's bits. Example: bits 0x3F80 -> 1.0."""
    if stored.dtype == "BF16":
        return (stored.array.astype(np.uint32) << 16).view(np.float32)
    return stored.array
