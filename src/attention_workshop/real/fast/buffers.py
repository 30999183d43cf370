"""Memory kept between forward passes: the arrays a forward writes (reused once nobody holds
them) and copies of the weights (made once while the checkpoint's arrays live).

A 512-token MiniLM run returns 6 x 12 x 512 x 512 float32 attention weights: 75 MB that the
kernel hands over page by page (and zeroes) each time a fresh array is written; its hidden
states, Q|K|V and values are 48 MB more, and the layers' scratch 5 MB that the C library
gives back to the kernel when the forward frees it (page faults, the kernel's time:
docs/benchmarks.md). So the memory of the last array of each kind (a slot) stays mapped
here, and the next forward pass of the same size writes into it, but only once the array
handed out is gone: every numpy view of it (a RunResult's .attentions, a slice of it, a
transpose) keeps that array alive, so a result still held keeps its numbers, and the next
run (or a second forward running at the same time) gets fresh memory.

Example: a = reusable((2, 3), np.float32); del a; reusable((2, 3), np.float32) -> the same
memory again. With `a` (or a[0], or a.T) still held: new memory.
"""

import ctypes
import ctypes.util
import mmap
import threading
import weakref

import numpy as np

_lock = threading.RLock()  # extended() takes a reusable() slot while holding it
_kept = {}  # slot -> (the anonymous mapping last handed out, a weak ref to its array)


def reusable(shape, dtype, slot="attentions"):
    # tuple, dtype, the kind of array -> an array of that shape and dtype (not cleared)
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    with _lock:
        memory, array = _kept.get(slot, (None, None))
        if memory is None or len(memory) != nbytes or array() is not None:
            memory = _anonymous(max(nbytes, 1))  # pages arrive (zeroed) on first write
        # an array over the mapping is the base of every view taken from it, so its weak
        # ref dies exactly when the last view does
        owner = np.ndarray(shape, dtype, buffer=memory)
        _kept[slot] = (memory, weakref.ref(owner))
        return owner


def _anonymous(nbytes):  # -> a private anonymous mapping of nbytes (zeroed on first write)
    """2 MB pages asked for from 4 MB on, as numpy does for its own large arrays. Private:
    mmap's default for anonymous memory is a shared mapping, which Linux gives large pages
    only where shmem's own setting allows (usually never)."""
    if hasattr(mmap, "MAP_PRIVATE"):
        memory = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    else:  # Windows: no flags
        memory = mmap.mmap(-1, nbytes)
    if hasattr(mmap, "MADV_HUGEPAGE") and nbytes >= 1 << 22:
        memory.madvise(mmap.MADV_HUGEPAGE)
    return memory


LARGE_PAGE = 2 << 20
PACKED = 64 << 20  # weights' copies share mappings of this size (2 MB pages come only whole)
_packing = [None, 0]  # the mapping being filled (a uint8 array over it), its next free byte


def packed(array):  # array -> a C-contiguous copy of it, beside the copies made before it
    """A GGUF's 4- and 8-bit blocks, copied one matrix after another into large mappings
    aligned to 2 MB pages: a generated token reads all 111 MB of SmolLM2's, matrix by matrix
    in the order they were copied, and on 4 KB pages from the C library's heap (a layer's
    matrices are 55-442 KB, too small for numpy's own large pages) each page costs its own
    address translation (docs/benchmarks.md). A mapping's memory goes once every copy in it
    has gone.

    Example: a, b = packed(x), packed(y) -> b's memory starts where a's ends (rounded up to
    64 bytes); np.array_equal(a, x) -> True."""
    nbytes = array.nbytes
    with _lock:
        memory, at = _packing
        if memory is None or at + nbytes > len(memory):
            memory = np.frombuffer(_anonymous(max(PACKED, nbytes) + LARGE_PAGE), np.uint8)
            at = -memory.ctypes.data % LARGE_PAGE  # the first byte of a 2 MB page
        _packing[:] = [memory, at + -(-nbytes // 64) * 64]
    copy = memory[at:at + nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


# glibc's mallopt parameters: arrays under MMAP_BELOW bytes come from the heap, and up to
# TRIM_FROM bytes freed at its top stay mapped (glibc's defaults adapt up to 32 MB and twice
# that, and gave freed pages back mid-forward)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_BELOW, TRIM_FROM = 32 << 20, 512 << 20
_kept_freed = []  # [True] once asked in this process


def keep_freed_memory():  # -> bool: the C library now keeps what numpy frees, for reuse
    """Once a process, before the first forward: a prompt's products each return a new
    array (SmolLM2, 128 tokens: 210 arrays of 96-768 KB a forward), and the C library handed
    their pages back to the kernel as they were freed, so the next one's were handed over
    (and zeroed) again, a page at a time: two threads' products at 128 tokens ran 218-225
    GFLOP/s so, 255-264 with the freed memory kept (docs/benchmarks.md). Only glibc's malloc
    takes these settings (mallopt); elsewhere nothing changes (False)."""
    with _lock:
        if not _kept_freed:
            _kept_freed.append(_mallopt(M_MMAP_THRESHOLD, MMAP_BELOW)
                               and _mallopt(M_TRIM_THRESHOLD, TRIM_FROM))
        return _kept_freed[0]


def _mallopt(param, value):  # -> whether glibc took it
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(param, value))
    except (OSError, AttributeError):  # no C library by that name, or not glibc's
        return False


_copies = {}  # id of a weight -> (a weak ref to it, its in-memory copy)


def resident(array):  # array -> an in-memory copy of it, made once while it lives
    """A layer's weights in the process's own memory, not the checkpoint file's mapping:
    products read them faster (docs/benchmarks.md), the file's pages being the OS file
    cache's, mapped one by one. Copied on first use, so a short sentence's cold run copies
    nothing (see loop.RESIDENT_FROM).

    Kept while the weight lives, found again by its identity; another array (another model,
    a nudged tensor) gets its own copy, and a copy goes once its weight has.

    Example: resident(w) is resident(w) -> True; np.array_equal(resident(w), w) -> True.
    """
    found = _copies.get(id(array))  # a dict read needs no lock: the common case, ~96 a forward
    if _still_of(found, array):
        return found[1]
    with _lock:
        found = _copies.get(id(array))  # again, under the lock: another thread may have made it
        if not _still_of(found, array):
            for old in [key for key, (ref, _) in _copies.items() if ref() is None]:
                del _copies[old]  # its weight gone: the copy goes too
            found = (weakref.ref(array), np.array(array, order="C"))
            _copies[id(array)] = found
        return found[1]


def _still_of(found, array):  # _copies entry or None, array -> True if it is array's copy
    return found is not None and found[0]() is array


_growing = {}  # id of a cache's memory -> (a weak ref to it, the tokens written into it)


def extended(cache, room, slot="cache"):
    # [L, K, S, d] keys or values, tokens it may hold, its kind -> [L, K, S + 1, d]
    """A decoder's cache with a row for one more token (row S, not yet written), in memory
    kept between steps: where `cache` is the first S rows of such memory and nobody has
    written past them, the same memory, one row longer; otherwise (a prompt's cache, or a
    second step from the same cache) a copy into memory with room for `room` tokens: the
    slot's memory (reusable) once the last generation's cache of that kind is gone, so a
    generation does not fault in 12 MB of fresh pages again (SmolLM2: 23-35 ms a
    generation on a virtual machine, ~1 ms of each of 32 tokens; docs/benchmarks.md).
    So a generated token writes only its own keys and values, and an earlier step's cache
    (a view of the first S rows) keeps its numbers.

    Example: a = extended(prompt_keys, 512) -> a copy with room for 512 tokens; b =
    extended(a, 512) -> a's memory, one row longer; extended(a, 512) again -> a copy (the
    row after a's is b's).
    """
    L, K, S, d = cache.shape
    base = cache.base
    with _lock:
        found = _growing.get(id(base)) if base is not None else None
        if (found is not None and found[0]() is base and found[1] == S and base.ndim == 4
                and base.shape[2] > S and cache.strides == base.strides
                and cache.__array_interface__["data"] == base.__array_interface__["data"]):
            _growing[id(base)] = (found[0], S + 1)
            return base[:, :, :S + 1]
        for old in [key for key, (ref, _) in _growing.items() if ref() is None]:
            del _growing[old]
        memory = reusable((L, K, max(room, S + 1), d), cache.dtype, slot)
        memory[:, :, :S] = cache
        _growing[id(memory)] = (weakref.ref(memory), S + 1)
        return memory[:, :, :S + 1]
