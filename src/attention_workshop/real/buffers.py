"""One big output array's memory kept between forward passes, reused once nobody holds it.

A 512-token MiniLM run returns 6 x 12 x 512 x 512 float32 attention weights: 75 MB that the
kernel hands over page by page (and zeroes) each time a fresh array is written. So the
memory of the last such array stays mapped here, and the next forward pass of the same size
writes into it, but only once the array handed out is gone: every numpy view of it (a
RunResult's .attentions, a slice of it, a transpose) keeps that array alive, so a result
still held keeps its numbers, and the next run gets fresh memory.

Example: a = reusable((2, 3), np.float32); del a; reusable((2, 3), np.float32) -> the same
memory again. With `a` (or a[0], or a.T) still held: new memory.
"""

import mmap
import threading
import weakref

import numpy as np

_lock = threading.Lock()
_kept = {}  # "memory": the anonymous mapping last handed out; "array": a weak ref to its array


def reusable(shape, dtype):  # tuple, dtype -> an array of that shape and dtype (not cleared)
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    with _lock:
        memory, array = _kept.get("memory"), _kept.get("array")
        if memory is None or len(memory) != nbytes or array() is not None:
            memory = mmap.mmap(-1, max(nbytes, 1))  # pages arrive (zeroed) on first write
            if hasattr(mmap, "MADV_HUGEPAGE") and nbytes >= 1 << 22:
                memory.madvise(mmap.MADV_HUGEPAGE)  # as numpy does for its own large arrays
        # np.frombuffer's array is the base of every view taken from it, so its weak ref
        # dies exactly when the last view does
        owner = np.frombuffer(memory, dtype, count=nbytes // dtype.itemsize)
        _kept["memory"], _kept["array"] = memory, weakref.ref(owner)
        return owner.reshape(shape)
