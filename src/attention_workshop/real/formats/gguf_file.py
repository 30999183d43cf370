"""A GGUF file (llama.cpp's format), every count and length in its header checked against the
file's size before anything is built from it; the tensors' bytes memory-mapped, not read.

The format, version 2 or 3, little-endian:
  b"GGUF", uint32 version, uint64 tensor count, uint64 key count;
  the keys: a string name, a uint32 value type, the value (a string is a uint64 length and that
  many UTF-8 bytes; an array a uint32 item type, a uint64 item count, the items);
  the tensors: a string name, a uint32 dimension count, uint64 sizes (the fastest-varying
  first: numpy's shape reversed), a uint32 ggml type (F32, Q4_1, ...), a uint64 offset;
  then, at the next multiple of general.alignment (32), the data the offsets count from.

Why not gguf.GGUFReader alone: it trusts the counts. A header claiming an array of 10^12
items loops 10^12 times, and a string of 2^60 bytes or a tensor past the end comes back as a
shorter array without a word. Here each length is checked against the bytes left first, so a
hostile header is refused at once, in memory bounded by the file. Reading the header this way
also costs ~0.2 s for SmolLM2's 49,152 tokens and 48,900 merges; the reader's per-item numpy
views took ~1.7 s. The reader stays the tests' reference (tests/test_gguf_file.py).

Example: open_gguf(path).metadata["llama.block_count"] -> 30;
.tensors["blk.0.attn_q.weight"] -> Tensor(qtype=Q4_1, shape=(576, 576), ...).
"""

import math
import mmap
import os
import stat
import struct
from typing import NamedTuple

from attention_workshop.reading import os_reason, printable, refuse

MAGIC = b"GGUF"
VERSIONS = (2, 3)  # version 1 wrote 32-bit counts; no reader reads it any more
# Caps far above any real file's, so that a hostile header costs a second at the most whatever
# the file's size (each string read is a step of a Python loop, ~1 us; measured at the caps:
# 20,000 tensors 0.35 s, 100,000 keys 0.3 s, 1,000,000 strings 1 s)
MAX_TENSORS = 20_000  # a 405B Llama has ~1,100, DeepSeek-V3 ~1,000
MAX_KEYS = 100_000  # SmolLM2 has 33
MAX_ITEMS = 1_000_000  # in one array: the largest vocabularies have ~262,000 tokens
MAX_STRINGS = 1_000_000  # in all the arrays together: Llama 3 has 128,256 tokens, ~280,000 merges
MAX_DIMS = 4  # ggml's GGML_MAX_DIMS
ALIGNMENT = 32  # when general.alignment is absent
TODO = "the file is damaged or not a GGUF file: download or install it again"
# value type -> struct format; 8 is a string, 9 an array
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
           10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9
U32, U64 = struct.Struct("<I"), struct.Struct("<Q")


class Tensor(NamedTuple):
    name: str
    qtype: object  # gguf.GGMLQuantizationType
    shape: tuple  # numpy's order: (rows, columns), e.g. (576, 576) for blk.0.attn_q.weight
    offset: int  # in the file
    nbytes: int


class GGUF(NamedTuple):
    path: object
    version: int
    metadata: dict  # key -> int | float | bool | str | [str] | numpy array (numbers)
    tensors: dict  # name -> Tensor, in the file's order
    data: object  # the file, memory-mapped

    def raw(self, name):  # -> the tensor's bytes, [rows, bytes per row] uint8, a view of the map
        import numpy as np
        from gguf.quants import quant_shape_to_byte_shape

        t = self.tensors[name]
        shape = quant_shape_to_byte_shape(t.shape, t.qtype)
        return np.frombuffer(self.data, np.uint8, t.nbytes, t.offset).reshape(shape)


class Malformed(ValueError):
    """What is wrong with the bytes; open_gguf turns it into the one-line refusal."""


def open_gguf(path):  # str | Path -> GGUF; WorkshopError naming the problem
    """Example: a 4096-byte file whose header says 1000 tensors -> "cannot read GGUF file
    'x.gguf': it claims 18 keys and 1000 tensors, more than its 4096 bytes can describe
    (truncated?); the file is damaged or not a GGUF file: download or install it again"."""
    data = _map(path)
    try:
        return _parse(path, data)
    except Malformed as exc:
        raise refuse("GGUF file", path, str(exc), getattr(exc, "todo", TODO)) from None


def _map(path):  # -> mmap of a regular, non-empty file; WorkshopError otherwise
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise refuse("GGUF file", path, "it is not a regular file", "give the path of a file")
        if info.st_size < 24:  # magic, version, two counts
            raise refuse("GGUF file", path, f"it is {info.st_size} bytes, shorter than a GGUF "
                         "header (24)", TODO)
        with open(path, "rb") as f:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:  # reading.py's words for each: missing, too long, not enough memory
        raise refuse("GGUF file", path, *os_reason(exc)) from None
    except ValueError:  # a NUL byte in the name
        raise refuse("GGUF file", path, "the name holds a NUL byte", "check the path") from None


def _parse(path, data):  # -> GGUF; Malformed
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    if data[:4] != MAGIC:
        raise Malformed(f"it starts with {printable(repr(bytes(data[:4])))}, not b'GGUF'")
    version = U32.unpack_from(data, 4)[0]
    if version not in VERSIONS:
        kind = " (a big-endian file)" if version & 0xFFFF == 0 else ""
        exc = Malformed(f"it is GGUF version {version}{kind}; versions 2 and 3 are read")
        exc.todo = "convert the model again with a recent llama.cpp"
        raise exc
    at = Cursor(data, 8)
    n_tensors, n_keys = at.u64(), at.u64()
    for count, what, cap in ((n_keys, "keys", MAX_KEYS), (n_tensors, "tensors", MAX_TENSORS)):
        if count > cap:
            raise Malformed(f"it claims {count} {what}; at most {cap} are read")
    # the least room each takes: a key 8 + 4 + 1 bytes, a tensor 8 + 4 + 8 + 4 + 8
    if n_keys * 13 + n_tensors * 32 > len(data) - at.pos:
        raise Malformed(f"it claims {n_keys} keys and {n_tensors} tensors, more than its "
                        f"{len(data)} bytes can describe (truncated?)")
    metadata = {}
    for _ in range(n_keys):
        key = at.string("a key's name")
        if key in metadata:
            raise Malformed(f"the key {named_key(key)} appears twice")
        metadata[key] = at.value(at.u32(), key)
    infos = [at.tensor_info() for _ in range(n_tensors)]
    alignment = metadata.get("general.alignment", ALIGNMENT)
    if not isinstance(alignment, int) or alignment < 1 or alignment & (alignment - 1):
        raise Malformed(f"general.alignment is {printable(repr(alignment), 40)}; it must be a "
                        "power of two")
    start = -(-at.pos // alignment) * alignment
    tensors, end = {}, start  # end: where the data so far ends
    for name, dims, code, offset in sorted(infos, key=lambda info: info[3]):
        if name in tensors:
            raise Malformed(f"the tensor '{printable(name, 80)}' appears twice")
        try:
            qtype = GGMLQuantizationType(code)
            block, size = GGML_QUANT_SIZES[qtype]
        except (ValueError, KeyError):
            raise Malformed(f"the tensor '{printable(name, 80)}' has quantization type {code}, "
                            f"which ggml does not define") from None
        shape = tuple(reversed(dims))
        if shape[-1] % block:
            raise Malformed(f"the tensor '{printable(name, 80)}' has rows of {shape[-1]}, not a "
                            f"multiple of {qtype.name}'s block of {block}")
        nbytes = math.prod(shape) // block * size
        if offset % alignment or start + offset < end or start + offset + nbytes > len(data):
            where = f"bytes {start + offset}-{start + offset + nbytes}"
            why = (f"lie past the end of the {len(data)}-byte file (truncated?)"
                   if start + offset + nbytes > len(data) else
                   f"are not aligned to {alignment}" if offset % alignment else
                   "overlap another tensor's")
            raise Malformed(f"the tensor '{printable(name, 80)}' ({list(dims)} {qtype.name}) "
                            f"would take {where}, which {why}")
        tensors[name] = Tensor(name, qtype, shape, start + offset, nbytes)
        end = start + offset + nbytes
    order = {info[0]: i for i, info in enumerate(infos)}
    tensors = dict(sorted(tensors.items(), key=lambda item: order[item[0]]))
    return GGUF(path, version, metadata, tensors, data)


class Cursor:
    """Reads the header forward from `pos`, each length checked against the bytes left.
    `what` names the thing read, for messages: "a key's name", or with `item` i,
    "item i of 'tokenizer.ggml.tokens'" (put together only when refused)."""

    def __init__(self, data, pos):
        self.data, self.pos = data, pos
        self.strings_left = MAX_STRINGS

    def take(self, n, what, item=None):  # -> the start of the next n bytes
        if n > len(self.data) - self.pos:
            raise Malformed(f"{_thing(what, item)} at byte {self.pos} needs {n} bytes, but the "
                            f"file ends at byte {len(self.data)} (truncated?)")
        self.pos += n
        return self.pos - n

    def u32(self):
        return U32.unpack_from(self.data, self.take(4, "a number"))[0]

    def u64(self):
        return U64.unpack_from(self.data, self.take(8, "a number"))[0]

    def string(self, what, item=None):
        n = self.u64()
        at = self.take(n, what, item)
        try:
            return self.data[at:at + n].decode("utf-8")
        except UnicodeDecodeError:
            raise Malformed(f"{_thing(what, item)} at byte {at} is not UTF-8 text") from None

    def strings(self, count, named):  # -> [str]: an array's `count` strings, as string() reads
        """string()'s reads in one loop of locals (SmolLM2's 98,369 strings: 0.23 -> 0.07 s);
        at the first one that is not whole, or not UTF-8, string() reads it and says why."""
        data, pos, end, unpack = self.data, self.pos, len(self.data), U64.unpack_from
        out = []
        try:
            for _ in range(count):
                if end - pos < 8:
                    break
                n = unpack(data, pos)[0]
                if n > end - pos - 8:
                    break
                out.append(data[pos + 8:pos + 8 + n].decode("utf-8"))
                pos += 8 + n
        except UnicodeDecodeError:
            pass
        self.pos = pos
        return out + [self.string(named, i) for i in range(len(out), count)]

    def value(self, kind, key):  # a value of type `kind` (key: for messages)
        named = named_key(key)
        if kind in SCALARS:
            form = SCALARS[kind]
            at = self.take(struct.calcsize(form), f"the value of {named}")
            return struct.unpack_from(form, self.data, at)[0]
        if kind == STRING:
            return self.string(f"the value of {named}")
        if kind != ARRAY:
            raise Malformed(f"the key {named} has value type {kind}, which GGUF does not define")
        item, count = self.u32(), self.u64()
        if item == ARRAY:
            raise Malformed(f"the key {named} holds an array of arrays, which llama.cpp reads "
                            "nowhere")
        if item not in SCALARS and item != STRING:
            raise Malformed(f"the key {named} holds items of type {item}, which GGUF does not "
                            "define")
        least = 8 if item == STRING else struct.calcsize(SCALARS[item])  # a string: its length
        if count > MAX_ITEMS or item == STRING and count > self.strings_left:
            raise Malformed(f"the key {named} claims {count} items; at most {MAX_ITEMS} in one "
                            f"array and {MAX_STRINGS} strings in all are read")
        if count * least > len(self.data) - self.pos:
            raise Malformed(f"the key {named} claims {count} items, more than the "
                            f"{len(self.data) - self.pos} bytes left can hold (truncated?)")
        if item == STRING:
            self.strings_left -= count
            return self.strings(count, named)
        import numpy as np

        at = self.take(count * least, f"the value of {named}")  # numbers: one copy, no loop
        return np.frombuffer(self.data, np.dtype(SCALARS[item]), count, at).copy()

    def tensor_info(self):  # -> (name, dims fastest-varying first, ggml type code, offset)
        name = self.string("a tensor's name")
        n_dims = self.u32()
        if not 1 <= n_dims <= MAX_DIMS:
            raise Malformed(f"the tensor '{printable(name, 80)}' has {n_dims} dimensions; "
                            f"ggml's have 1 to {MAX_DIMS}")
        dims = [self.u64() for _ in range(n_dims)]
        if min(dims) < 1:
            raise Malformed(f"the tensor '{printable(name, 80)}' has a size of 0: {dims}")
        return name, dims, self.u32(), self.u64()


def named_key(key):  # a key as messages show it: quoted, on one line, cut
    return printable(repr(key), 80)


def _thing(what, item):
    return what if item is None else f"item {item} of {what}"
