"""A weight matrix as the GGUF file stores it, for generation's one-token steps.

SmolLM2's file keeps each linear layer in blocks of 32 numbers along a row, 4 bits each plus
a scale and an offset (Q4_1), and its token embedding in blocks of 8-bit numbers and a scale
(Q8_0). gguf_checkpoint.py turns them into the float32 matrices every forward pass reads.
A prompt's pass multiplies many tokens by each matrix, and the BLAS's float32 product is
the fastest way. A generated token is one row: its step reads each weight once, so it costs
what reading the weights costs: 538 MB in float32, ~18 ms on one core of this machine,
against 111 MB as the file's blocks (docs/benchmarks.md).

So FileBlocks keeps both: the float32 matrix and the blocks it was made from. `x @ W.T` on
a single token runs _kernels.c's blocks_times_vector, which makes each weight from its block
exactly as gguf's dequantize makes it (the same float32 numbers) and sums them with x in
another order, its rows shared by the threads the user allows (`sharing`: the same bits on
any number); anything else runs on the float32 matrix. So llama.py's own `x @ W.T` runs
unchanged: fast/llama.py hands it these objects in place of the arrays
(tests/test_fast_blocks.py checks each version of the kernel against gguf's own dequantize).

Example: w = from_gguf(raw, GGMLQuantizationType.Q4_1, array) -> (x[None] @ w.T)[0] equals
array @ x within float32's rounding, and (e_j[None] @ w.T)[0] is array[:, j] exactly.
"""

import contextlib
import contextvars

import numpy as np

from attention_workshop.real.blas_threads import threads_allowed
from attention_workshop.real.fast import gemm, kernels
from attention_workshop.real.fast.buffers import packed

BLOCK = 32  # numbers per block, along a row
# GGUF's block layouts: bytes per block; a block starts with its float16 scale (and offset)
Q4_1_BYTES, Q8_0_BYTES = 20, 34  # 2 + 2 + 16 (two 4-bit numbers a byte), 2 + 32
# From this many tokens on, a product runs on the float32 matrix (the BLAS); below, on the
# blocks (docs/benchmarks.md: a token's 211 products, CPU time, 8 tokens 49.7 ms against the
# BLAS's 101.5, 16 tokens 101.8 against 137.5)
TOKENS_FROM_BLAS = 24
# the threads a one-token product shares its rows with, set for a forward pass (asking
# threadpoolctl costs ~8 us, a product 10-80 us: once a pass, not ~200 times a token)
_threads = contextvars.ContextVar("threads of a one-token product", default=None)


@contextlib.contextmanager
def sharing(n):  # threads allowed -> a context: one-token products inside use n threads
    """Example: with sharing(threads_allowed()): x @ w.T  (x one token: its rows over them)."""
    token = _threads.set(max(1, int(n)))
    try:
        yield
    finally:
        _threads.reset(token)


def threads():  # -> the threads a one-token product uses now: `sharing`'s, else the user's
    n = _threads.get()
    return threads_allowed() if n is None else n


class FileBlocks:
    """W [rows, n] as float32 numbers (`array`) and as the file's blocks: quants [rows, n / 2]
    uint8 (4 bits: the low halves of a block's 16 bytes are its first 16 numbers, the high
    halves the next 16) or [rows, n] int8 (8 bits); scales and, for 4 bits, offsets
    [rows, n / 32] float32. Number j of block b in row r is scales[r, b] q + offsets[r, b]."""

    __array_ufunc__ = None  # x @ W.T: numpy leaves the product to Transposed.__rmatmul__

    def __init__(self, array, quants, scales, offsets=None):
        self.array, self.quants, self.scales, self.offsets = array, quants, scales, offsets
        self.shape, self.ndim, self.dtype = array.shape, array.ndim, array.dtype

    @property
    def T(self):  # noqa: N802 (numpy's name, so that llama.py's x @ W.T reads it)
        return Transposed(self)

    def __getitem__(self, index):  # the embedding table's rows: from the float32 numbers
        return self.array[index]

    def __len__(self):
        return len(self.array)

    def __array__(self, dtype=None, copy=None):
        return np.array(self.array, dtype=dtype, copy=copy)

    @property
    def bytes_read(self):  # what one token's product reads from the blocks
        return sum(a.nbytes for a in (self.quants, self.scales, self.offsets) if a is not None)


class Transposed:
    """W.T of a FileBlocks: `x @ W.T` for x [T, n] float32 -> [T, rows]."""

    __array_ufunc__ = None

    def __init__(self, blocks):
        self.blocks = blocks

    def __rmatmul__(self, x):
        w = self.blocks
        if (x.ndim != 2 or not 1 <= len(x) < TOKENS_FROM_BLAS or x.dtype != np.float32
                or kernels.compiled is None):
            return gemm.times_transposed(x, w.array)  # a longer prompt, or no compiled kernel
        out = np.empty((len(x), w.shape[0]), np.float32)
        if len(x) == 1:
            kernels.compiled.blocks_times_vector(w.quants, w.scales, w.offsets,
                                                 np.ascontiguousarray(x[0]), out[0], None,
                                                 threads())
        else:  # a short prompt: each block's weights made once for 4 or 8 tokens
            kernels.compiled.blocks_times_tokens(w.quants, w.scales, w.offsets,
                                                 np.ascontiguousarray(x), out, None, threads())
        return out


def from_gguf(raw, qtype, array):
    # [rows, bytes per row] uint8 (rows in the float32 matrix's order), GGMLQuantizationType,
    # the float32 matrix they make [rows, n] -> FileBlocks, or the array itself (another type)
    """The file's blocks split into quants, scales and offsets (copies: the file's map is not
    kept open). Types other than Q4_1 and Q8_0 keep only the float32 matrix."""
    from gguf.constants import GGMLQuantizationType as Q

    rows = raw.shape[0]
    if array.dtype != np.float32 or array.ndim != 2 or array.shape[1] % BLOCK:
        return array
    if qtype == Q.Q4_1:
        b = raw.reshape(rows, -1, Q4_1_BYTES)  # [rows, n / 32, 20]
        return FileBlocks(array, packed(b[..., 4:]).reshape(rows, -1),
                          _halves(b[..., 0:2]), _halves(b[..., 2:4]))
    if qtype == Q.Q8_0:
        b = raw.reshape(rows, -1, Q8_0_BYTES)  # [rows, n / 32, 34]
        return FileBlocks(array, packed(b[..., 2:]).view(np.int8).reshape(rows, -1),
                          _halves(b[..., 0:2]))
    return array


def _halves(two_bytes):  # [rows, blocks, 2] uint8, a float16 each -> [rows, blocks] float32
    return packed(np.ascontiguousarray(two_bytes).view(np.float16)[..., 0].astype(np.float32))
