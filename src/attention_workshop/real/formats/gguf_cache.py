"""A GGUF's dequantized numbers kept on disk: a later load maps them instead of dequantizing.

Dequantizing SmolLM2's 4- and 8-bit blocks with the gguf package is ~1 s of every load (135
million numbers), and gives the same float32 numbers every time. So the first load writes
them to one file (538 MB for SmolLM2), and every later load maps that file (copy on write:
nothing is copied unless a weight is written), numbers that were checked finite when they
were written. Only a GGUF of CACHE_FROM bytes or more is kept (a test's small file is read
as before). An entry is named by the GGUF's path, size and modification time and by FORMAT:
a changed or moved file is read afresh. The folder may be deleted at any time.

The folder: $ATTENTION_WORKSHOP_CACHE if set (set and empty: nothing is kept), else
$XDG_CACHE_HOME/attention-workshop, else ~/.cache/attention-workshop.

Example: kept(path, dequantize) -> {name: float32 array}; dequantize() runs on the first
load only (and whenever the entry cannot be read or written).
"""

import hashlib
import json
import mmap
import os
import shutil
from pathlib import Path

FORMAT = 1  # what an entry holds and how: a change here names every entry anew
CACHE_FROM = 64 * 2**20  # bytes: smaller GGUF files are dequantized at every load
ALIGN = 64  # each array starts at a multiple of this many bytes in the numbers' file


def folder():  # -> Path, or None when the environment turns the cache off
    given = os.environ.get("ATTENTION_WORKSHOP_CACHE")
    if given is not None:
        return Path(given) if given else None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attention-workshop"


def entry(path):  # GGUF path -> the folder its numbers are kept in, or None (not kept)
    """Example: a 113 MB file -> ~/.cache/attention-workshop/gguf-3f2a...; a 2 KB one -> None."""
    where = folder()
    if where is None:
        return None
    info = Path(path).stat()
    if info.st_size < CACHE_FROM:
        return None
    name = f"{Path(path).resolve()}|{info.st_size}|{info.st_mtime_ns}|{FORMAT}"
    return where / f"gguf-{hashlib.sha256(name.encode()).hexdigest()[:24]}"


def kept(path, dequantize):  # GGUF path, () -> {name: float32 array} -> {name: float32 array}
    place = entry(path)
    found = read(place) if place is not None else None
    if found is not None:
        return found
    numbers = dequantize()
    if place is not None:
        write(place, numbers)
    return numbers


def read(place):  # -> {name: float32 array} mapped from the entry, or None (absent, partial)
    import numpy as np

    try:
        index = json.loads((place / "index.json").read_text())
        with open(place / "numbers.f32", "rb") as f:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    except (OSError, ValueError):
        return None
    if index.get("format") != FORMAT or len(data) != index.get("bytes"):
        return None
    return {name: np.frombuffer(data, np.float32, int(np.prod(shape)), offset).reshape(shape)
            for name, shape, offset in index["tensors"]}


def write(place, numbers):  # -> None: the entry written whole, or nothing (no room, no right)
    """Written beside it first, then renamed into place: a reader never sees half an entry,
    and of two processes writing at once, the first to rename wins."""
    import numpy as np

    part = place.with_name(f"{place.name}.{os.getpid()}.part")
    try:
        part.mkdir(parents=True, exist_ok=True)
        tensors, offset = [], 0
        with open(part / "numbers.f32", "wb") as f:
            for name, w in numbers.items():
                offset = -(-offset // ALIGN) * ALIGN
                f.seek(offset)
                f.write(np.ascontiguousarray(w, dtype=np.float32).data)
                tensors.append([name, list(w.shape), offset])
                offset += w.size * 4
            f.truncate(offset)
        (part / "index.json").write_text(json.dumps({"format": FORMAT, "bytes": offset,
                                                     "tensors": tensors}))
        part.rename(place)
    except OSError:
        pass
    finally:
        shutil.rmtree(part, ignore_errors=True)
