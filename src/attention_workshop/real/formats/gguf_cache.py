"""A GGUF's dequantized numbers kept on disk: a later load maps them instead of dequantizing.

Dequantizing SmolLM2's 4- and 8-bit blocks with the gguf package is ~1 s of every load (135
million numbers), and gives the same float32 numbers every time. So the first load writes
them to one file (538 MB for SmolLM2), and every later load maps that file (copy on write:
nothing is copied unless a weight is written), numbers that were checked finite when they
were written. A float64 load keeps its own entry (the float32 numbers widened, 1.08 GB):
widening them in memory took 0.3-1.5 s on the Xeon of docs/benchmarks.md (most of it the
kernel clearing 1 GB of fresh pages), mapping the kept file 0.1 s. Only a GGUF of CACHE_FROM
bytes or more is kept (a test's small file is read as before). An entry is named by the
GGUF's path, size and modification time, by FORMAT and by its dtype: a changed or moved file
is read afresh. The folder may be deleted at any time.

The folder: $ATTENTION_WORKSHOP_CACHE if set (set and empty: nothing is kept), else
$XDG_CACHE_HOME/attention-workshop, else ~/.cache/attention-workshop.

Example: kept(path, dequantize) -> {name: float32 array}; dequantize() runs on the first
load only (and whenever the entry cannot be read or written); kept(path, dequantize,
"float64") -> the same numbers in float64, widened from kept(path, dequantize) once.
"""

import hashlib
import json
import mmap
import os
import shutil
import threading
from pathlib import Path

FORMAT = 1  # what an entry holds and how: a change here names every entry anew
CACHE_FROM = 64 * 2**20  # bytes: smaller GGUF files are dequantized at every load
ALIGN = 64  # each array starts at a multiple of this many bytes in the numbers' file
FILES = {"float32": "numbers.f32", "float64": "numbers.f64"}  # an entry's numbers, by dtype


def folder():  # -> Path, or None when the environment turns the cache off
    given = os.environ.get("ATTENTION_WORKSHOP_CACHE")
    if given is not None:
        return Path(given) if given else None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attention-workshop"


def entry(path, dtype="float32"):  # GGUF path -> the folder its numbers are kept in, or None
    """Example: a 113 MB file -> ~/.cache/attention-workshop/gguf-3f2a...; a 2 KB one -> None.
    A float64 entry is another folder (float32's keeps the name it had before float64's)."""
    where = folder()
    if where is None:
        return None
    info = Path(path).stat()
    if info.st_size < CACHE_FROM:
        return None
    name = f"{Path(path).resolve()}|{info.st_size}|{info.st_mtime_ns}|{FORMAT}"
    name += "" if dtype == "float32" else f"|{dtype}"
    return where / f"gguf-{hashlib.sha256(name.encode()).hexdigest()[:24]}"


def kept(path, dequantize, dtype="float32"):
    # GGUF path, () -> {name: float32 array}, "float32" or "float64" -> {name: array in dtype}
    import numpy as np

    dtype = np.dtype(dtype).name
    if dtype not in FILES:
        raise ValueError(f"dtype {dtype!r}: float32 or float64")
    place = entry(path, dtype)
    found = read(place, dtype) if place is not None else None
    if found is not None:
        return found
    if dtype == "float32":
        numbers = dequantize()
    else:  # float32's numbers (kept or made), widened: exact
        numbers = {name: w.astype(dtype) for name, w in kept(path, dequantize).items()}
    if place is not None:
        write(place, numbers, dtype)
    return numbers


def read(place, dtype="float32"):  # -> {name: array} mapped from the entry, or None
    """None: the entry is absent or partial."""
    import numpy as np

    try:
        index = json.loads((place / "index.json").read_text())
        with open(place / FILES[dtype], "rb") as f:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    except (OSError, ValueError):
        return None
    if index.get("format") != FORMAT or len(data) != index.get("bytes"):
        return None
    return {name: np.frombuffer(data, dtype, int(np.prod(shape)), offset).reshape(shape)
            for name, shape, offset in index["tensors"]}


def write(place, numbers, dtype="float32"):  # -> None: the entry written whole, or nothing
    #                                            (no room, no right)
    """Written beside it first, then renamed into place: a reader never sees half an entry,
    and of two processes (or threads) writing at once, the first to rename wins."""
    import numpy as np

    part = place.with_name(f"{place.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        part.mkdir(parents=True, exist_ok=True)
        tensors, offset = [], 0
        with open(part / FILES[dtype], "wb") as f:
            for name, w in numbers.items():
                offset = -(-offset // ALIGN) * ALIGN
                f.seek(offset)
                f.write(np.ascontiguousarray(w, dtype=dtype).data)
                tensors.append([name, list(w.shape), offset])
                offset += w.size * np.dtype(dtype).itemsize
            f.truncate(offset)
        (part / "index.json").write_text(json.dumps({"format": FORMAT, "bytes": offset,
                                                     "tensors": tensors}))
        part.rename(place)
    except OSError:
        pass
    finally:
        shutil.rmtree(part, ignore_errors=True)
