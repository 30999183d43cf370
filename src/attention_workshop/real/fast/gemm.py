"""A prompt's products with a layer's weights: _gemm.c's loop where the CPU runs it, else numpy's.

On an AVX-512 CPU _gemm.c's float32 loop multiplies W [rows, n] by many tokens faster than
numpy's OpenBLAS on a layer's shapes (docs/benchmarks.md); elsewhere (AVX2 only, no C
compiler at install) numpy's product runs. Either way the math is W x. The loop sums each
output number over n in one order, so a token's numbers do not depend on how many tokens
or threads share the product; OpenBLAS's last bits do.

Two layouts, as the two kinds of accelerator hold activations:
- `times_transposed(x, w)`: x [T, n] @ W.T -> [T, rows] (llama.py's `x @ W.T`);
- `into(w, x, out)`: out [rows, T] = W x for x [n, T] (loop.py's feature-major layers).

times_transposed shares W's rows over as many threads as `shared_by` says (fast/llama.py's
forward: the threads allowed, even where its team runs alone): _gemm.c's own threads, which
spin between products (a hand-over through the Python team's locks cost ~70 us a product);
with none set, a product of FROM_FLOPS or more gets the threads the user allows (the output
head after a forward). `into` runs on the thread that calls it.

Example: times_transposed(np.ones((2, 3), np.float32), np.eye(3, dtype=np.float32)) ->
[[1, 1, 1], [1, 1, 1]].
"""

import contextlib
import contextvars

import numpy as np

from attention_workshop.real.blas_threads import threads_allowed
from attention_workshop.real.fast.team import Stage

try:
    from attention_workshop.real.fast import _gemm as compiled
except ImportError:  # built without a C compiler
    compiled = None
if compiled is not None and not compiled.available():  # not an AVX-512 CPU
    compiled = None

# A product this big (2 T rows n multiply-adds) shares its rows even with no team set
FROM_FLOPS = 50_000_000
# From this many tokens on, numpy's OpenBLAS is as fast or faster than the loop with x and
# out feature by feature (MiniLM's layout; SmolLM2's shapes, 512 tokens, one thread: 104-117
# GFLOP/s against OpenBLAS's 131 in the same pass; 128 tokens: 115-129 against 102;
# docs/benchmarks.md): `into` runs it below. Token by token the loop runs at any length
# (from 256 tokens turned the other way round in _gemm.c: 150-160 GFLOP/s at 512 tokens)
TOKENS_BELOW = 256
_team = contextvars.ContextVar("the team sharing a product's rows", default=None)
_to_blas = contextvars.ContextVar("products left to the BLAS's own threads", default=False)


@contextlib.contextmanager
def shared_by(team, threads=None):  # a fast/team.Team, the threads _gemm.c's loop may use
    # (default: the team's) -> a context: products inside share their rows over them
    token = _team.set((team, team.n if threads is None else threads))
    try:
        yield
    finally:
        _team.reset(token)


@contextlib.contextmanager
def to_blas(flag=True):  # -> a context: inside, products are numpy's (the BLAS's threads)
    """For a pass that leaves the BLAS its threads instead of sharing its own work (loop.py
    under SPLIT_FROM tokens: MiniLM, 16 tokens, two threads: 6.5 ms so, 8.1 on one thread
    of this loop)."""
    token = _to_blas.set(flag)
    try:
        yield
    finally:
        _to_blas.reset(token)


def runs(w, x, T, tokens_first=True):  # [rows, n], x, its tokens, its layout -> whether
    # _gemm.c's loop takes this product
    """Float32 both, 2-D, rows contiguous (a GPT-2 Conv1D's W.T view is not: numpy's); x
    feature by feature under TOKENS_BELOW tokens."""
    return (compiled is not None and (tokens_first or T < TOKENS_BELOW) and not _to_blas.get()
            and w.dtype == np.float32
            and x.dtype == np.float32
            and w.ndim == 2 and x.ndim == 2 and w.strides[1] == 4 and x.strides[1] == 4
            and w.strides[0] >= 0 and x.strides[0] >= 0)


def times_transposed(x, w):  # [T, n], [rows, n] -> [T, rows] = x @ w.T
    if runs(w, x, len(x)):
        out = np.empty((len(x), len(w)), np.float32)
        compiled.weights_times(w, x, out, True, True, _threads(2 * len(x) * w.size))
        return out
    team, _ = _team.get() or (None, 1)
    if team is None or team.n == 1 or x.dtype != w.dtype or x.ndim != 2:
        return x @ w.T  # the BLAS on the threads the user allows
    # a long prompt (or a CPU without _gemm.c's loop) in a team that holds the BLAS at one
    # thread: each thread its own rows
    out = np.empty((len(x), len(w)), np.result_type(x, w))
    team.run(Stage(len(w), lambda r: np.matmul(x, w[r].T, out=out[:, r])))
    return out


def into(w, x, out):  # [rows, n], [n, T], out [rows, T] -> out = W x, on this thread
    """(loop.py's stages already give each thread its own rows or inputs.)"""
    if not (runs(w, x, x.shape[1], tokens_first=False) and out.dtype == np.float32
            and out.strides[1] == 4):
        return np.matmul(w, x, out=out)
    compiled.weights_times(w, x, out, False, False)
    return out


def rest():  # -> None: _gemm.c's threads, spinning after a product, sleep now
    """Before work the team's threads share (the attention's blocks, silu): a thread spinning
    for the next product would take a core from them (512 tokens, two threads: 0.67-0.71 s
    a forward with a 50 us spin, 0.73-0.78 with a 1 ms spin not told to rest)."""
    if compiled is not None:
        compiled.rest()


def _threads(flops):  # a product's multiply-adds x 2 -> the threads that share its rows
    shared = _team.get()
    if shared is not None:
        return shared[1]
    return threads_allowed() if flops >= FROM_FLOPS else 1
