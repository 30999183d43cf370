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
is read afresh. Each entry records that source, and writing a new entry removes the entries
whose file is gone or has changed since (or that name none: written before this was), and
half-written ones a day old (a writer killed midway): a reinstalled package or a deleted
copy of the model does not leave 1.6 GB behind each time (seen: ten SmolLM2 entries, 5 GB,
in one cache). The folder may be deleted at any time.

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
import re
import shutil
import threading
import time
from pathlib import Path

FORMAT = 1  # what an entry holds and how: a change here names every entry anew
CACHE_FROM = 64 * 2**20  # bytes: smaller GGUF files are dequantized at every load
ALIGN = 64  # each array starts at a multiple of this many bytes in the numbers' file
FILES = {"float32": "numbers.f32", "float64": "numbers.f64"}  # an entry's numbers, by dtype
ENTRY = re.compile(r"gguf-[0-9a-f]{24}")  # an entry's folder; ".part" after it: being written
PART_AGE = 24 * 3600  # seconds: a half-written entry this old was left by a killed writer


def folder():  # -> Path, or None when the environment turns the cache off
    given = os.environ.get("ATTENTION_WORKSHOP_CACHE")
    if given is not None:
        return Path(given) if given else None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attention-workshop"


def source(path):  # GGUF path -> {"path", "size", "mtime_ns"}: what an entry was made from
    info = Path(path).stat()
    return {"path": str(Path(path).resolve()), "size": info.st_size, "mtime_ns": info.st_mtime_ns}


def entry(path, dtype="float32"):  # GGUF path -> the folder its numbers are kept in, or None
    """Example: a 113 MB file -> ~/.cache/attention-workshop/gguf-3f2a...; a 2 KB one -> None.
    A float64 entry is another folder (float32's keeps the name it had before float64's)."""
    where = folder()
    if where is None:
        return None
    made_from = source(path)
    if made_from["size"] < CACHE_FROM:
        return None
    name = f"{made_from['path']}|{made_from['size']}|{made_from['mtime_ns']}|{FORMAT}"
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
        write(place, numbers, dtype, source(path))
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


def write(place, numbers, dtype="float32", made_from=None):
    # -> None: the entry written whole, or nothing (no room, no right); made_from: source()
    """Written beside it first, then renamed into place: a reader never sees half an entry,
    and of two processes (or threads) writing at once, the first to rename wins. Then the
    folder's stale entries are removed (prune)."""
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
                                                     "tensors": tensors, "source": made_from}))
        part.rename(place)
    except OSError:
        return
    finally:
        shutil.rmtree(part, ignore_errors=True)
    prune(place)


def prune(keep):  # an entry just written -> None: its folder's stale entries removed
    """Stale: the file an entry was made from is gone, or its size or modification time is
    no longer the recorded one, or the entry records none; a ".part" folder (an entry being
    written) PART_AGE old. Anything else in the folder (llama.cpp's build) is left alone. A
    process still mapping a removed entry keeps its pages (Linux frees them once unmapped)."""
    try:
        places = list(keep.parent.iterdir())
    except OSError:
        return
    for place in places:
        name = place.name
        if place == keep or not ENTRY.fullmatch(name.split(".")[0]):
            continue
        if name != name.split(".")[0]:  # "<entry>.<pid>.<thread>.part"
            stale = name.endswith(".part") and _age(place) > PART_AGE
        else:
            stale = _stale(place)
        if stale:
            shutil.rmtree(place, ignore_errors=True)


def _stale(place):  # an entry's folder -> True if the file it was made from is gone or changed
    try:
        made_from = json.loads((place / "index.json").read_text()).get("source")
    except (OSError, ValueError, AttributeError):
        return False  # unreadable now: maybe being replaced; a later write looks again
    if not isinstance(made_from, dict):
        return True
    try:
        return source(made_from["path"]) != made_from
    except (OSError, KeyError, TypeError, ValueError):
        return True


def _age(place):  # -> seconds since place last changed (0 if it cannot be read)
    try:
        return time.time() - place.stat().st_mtime
    except OSError:
        return 0.0
