"""Memory kept between forward passes: the arrays a forward writes (reused once nobody holds
them) and copies of the weights (made once while the checkpoint's arrays live).

A 512-token MiniLM run returns 6 x 12 x 512 x 512 float32 attention weights: 75 MB that the
kernel hands over page by page (and zeroes) each time a fresh array is written; its hidden
states, Q|K|V and values are 48 MB more, and the layers' scratch 5 MB that the C library
gives back to the kernel when the forward frees it (~3,000 page faults a forward, 25-45 ms
of the kernel's time). So the memory of the last array of each kind (a slot) stays mapped
here, and the next forward pass of the same size writes into it, but only once the array
handed out is gone: every numpy view of it (a RunResult's .attentions, a slice of it, a
transpose) keeps that array alive, so a result still held keeps its numbers, and the next
run (or a second forward running at the same time) gets fresh memory.

Example: a = reusable((2, 3), np.float32); del a; reusable((2, 3), np.float32) -> the same
memory again. With `a` (or a[0], or a.T) still held: new memory.
"""

import mmap
import threading
import weakref

import numpy as np

_lock = threading.Lock()
_kept = {}  # slot -> (the anonymous mapping last handed out, a weak ref to its array)


def reusable(shape, dtype, slot="attentions"):
    # tuple, dtype, the kind of array -> an array of that shape and dtype (not cleared)
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    with _lock:
        memory, array = _kept.get(slot, (None, None))
        if memory is None or len(memory) != nbytes or array() is not None:
            memory = mmap.mmap(-1, max(nbytes, 1))  # pages arrive (zeroed) on first write
            if hasattr(mmap, "MADV_HUGEPAGE") and nbytes >= 1 << 22:
                memory.madvise(mmap.MADV_HUGEPAGE)  # as numpy does for its own large arrays
        # np.frombuffer's array is the base of every view taken from it, so its weak ref
        # dies exactly when the last view does
        owner = np.frombuffer(memory, dtype, count=nbytes // dtype.itemsize)
        _kept[slot] = (memory, weakref.ref(owner))
        return owner.reshape(shape)


_stacks = {}  # (id of each part) -> (weak refs to the parts, their concatenation)


def stacked(*parts):  # arrays [n_i, ...] -> np.concatenate(parts), made once while they live
    """BERT's W_Q, W_K, W_V as one [3 d_model, d_model] matrix: one matrix product instead
    of three (~10% of the projection at 128 tokens). Kept while the parts live, found again
    by their identity; new parts (another model, a nudged tensor) get their own stack.

    Example: stacked(a, b) is stacked(a, b) -> True; np.array_equal(stacked(a, b),
    np.concatenate([a, b])) -> True.
    """
    key = tuple(map(id, parts))
    found = _stacks.get(key)  # a dict read needs no lock: the common case, ~96 a forward
    if _still_of(found, parts):
        return found[1]
    with _lock:
        found = _stacks.get(key)  # again, under the lock: another thread may have made it
        if not _still_of(found, parts):
            for old in [k for k, (rs, _) in _stacks.items() if any(r() is None for r in rs)]:
                del _stacks[old]  # parts gone: their stack goes too
            found = (tuple(weakref.ref(part) for part in parts), np.concatenate(parts))
            _stacks[key] = found
        return found[1]


def _still_of(found, parts):  # _stacks entry or None, arrays -> True if it is these parts'
    return found is not None and all(ref() is part for ref, part in zip(found[0], parts,
                                                                         strict=True))


def resident(array):  # array -> an in-memory copy of it, made once while it lives
    """A layer's weights in the process's own memory, not the checkpoint file's mapping:
    products read them ~10% faster (MiniLM's float32 forward, one thread: 46 ms instead of
    53 at 128 tokens, 14.4 instead of 15.9 at 16), the file's pages being the OS file
    cache's, mapped one by one. Copied on first use (~20 ms for MiniLM's 42 MB of layers),
    so a short sentence's cold run copies nothing (see fast_loop.RESIDENT_FROM).

    Example: resident(w) is resident(w) -> True; np.array_equal(resident(w), w) -> True.
    """
    return stacked(array)
