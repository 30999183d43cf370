"""A .safetensors file, memory-mapped: its header read, every tensor a read-only numpy view.

The format: 8 bytes (little-endian) giving the header's length N, N bytes of JSON
{name: {"dtype": "F32", "shape": [384, 384], "data_offsets": [begin, end]}, ...} (and an
optional "__metadata__"), then the tensors' bytes, offsets counted from the end of the
header. Mapping the file reads nothing yet: a tensor's pages come from the OS file cache
when first used, and float32 weights are used in place, shared with that cache (copying
MiniLM's 90 MB out of the file took ~90 ms of a 0.4 s cold start; mapping takes < 1 ms).

Example: tensors(path)["embeddings.word_embeddings.weight"].array -> a [30522, 384] float32
view of the file.
"""

import json
import mmap
from typing import NamedTuple

import numpy as np

# safetensors dtype -> numpy (little-endian, as the format stores them). bfloat16 has no
# numpy dtype: its 16-bit patterns are mapped as uint16 and widened by `numbers`; the float8
# kinds have neither, and come with no array (a loader refuses them if it needs them).
DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8",
          "I32": "<i4", "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?"}
MAX_HEADER = 100 << 20  # bytes; the safetensors library refuses larger headers too


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
    header = json.loads(bytes(data[8:8 + n]).decode("utf-8"))
    if not isinstance(header, dict):
        raise ValueError("the header is not a JSON object")
    header.pop("__metadata__", None)
    return Tensors({name: view(data, 8 + n, name, entry) for name, entry in header.items()},
                   np.frombuffer(data, np.uint8, offset=8 + n))


class Tensors(dict):
    """{name: Stored}, and .data: every byte after the header, [bytes] uint8 (a view)."""

    def __init__(self, stored, data):
        super().__init__(stored)
        self.data = data


def as_one_array(stored, leave_out=()):
    # Tensors, arrays among its tensors -> [arrays]: the data in the tensors' dtype, or None
    """If every tensor has the same numpy float dtype, the bytes after the header read as
    that dtype, in one array, or in the pieces around the tensors left out: a tensor is a
    slice of it (a file holding bytes beyond its tensors shows them too). Example: F32
    tensors a (6 numbers), b (4), c (2), leave_out [b] -> [a's 6, c's 2]."""
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


def view(data, start, name, entry):  # mmap, data offset, str, header entry -> Stored
    """Example: {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]} -> a [2, 3] view."""
    try:
        code = entry["dtype"]
        shape = tuple(int(size) for size in entry["shape"])
        begin, end = (int(offset) for offset in entry["data_offsets"])
        if not isinstance(code, str):
            raise TypeError(code)
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"tensor '{name}' has a malformed header entry {entry!r:.80}") from None
    count = int(np.prod(shape, dtype=np.int64))
    if min(shape, default=0) < 0 or not 0 <= begin <= end <= len(data) - start:
        raise ValueError(f"tensor '{name}': shape {list(shape)} and offsets {[begin, end]} "
                         f"do not fit the file")
    if code not in DTYPES:
        return Stored(code, shape, None)
    dtype = np.dtype(DTYPES[code])
    if end - begin != count * dtype.itemsize:
        raise ValueError(f"tensor '{name}': shape {list(shape)} and offsets {[begin, end]} "
                         f"do not fit the file")
    return Stored(code, shape, np.frombuffer(data, dtype, count, start + begin).reshape(shape))


def numbers(stored):  # Stored -> its array; bfloat16 widened to float32 (a new array)
    """A bfloat16 is the top half of a float32's bits. Example: bits 0x3F80 -> 1.0."""
    if stored.dtype == "BF16":
        return (stored.array.astype(np.uint32) << 16).view(np.float32)
    return stored.array
