"""Llama, accelerated: llama.forward itself, with its attention computed in place, the
outputs written into memory kept between passes, and a generated token's products read
from the file's blocks.

At 512 tokens a layer's scores are 9 x 512 x 512 floats; the core's formula makes a new
array for the mask, the shift, the exponentials and the division (docs/benchmarks.md).
Here the scores are made once and turned into weights in place by the causal softmax
(ops.causal_softmax_in_place: the compiled loop skips the keys a token may not see, and
applies 1 / sqrt(d_head)), and the MLP's silu(gate) * up is one compiled pass
(ops.silu_times_in_place) instead of numpy's six; both share their rows between the threads
the user allows. A model read from a GGUF file hands in its weights as fast/blocks.py's
FileBlocks (Model.blocks): llama.py's own `x @ W.T` then reads the 4- and 8-bit blocks when
it multiplies one token.
Everything else is llama.py's own code, so the accelerator can differ from it only in these
(tests/test_fast_equals_readable.py, tests/test_fast_blocks.py). A generated token after a
cache, with no caller's hooks, runs decode_step.py instead: llama.py's arithmetic for one
token with nothing copied (tests/test_fast_decode_step.py).
"""

import math

import numpy as np

from attention_workshop.real.blas_threads import threads_allowed
from attention_workshop.real.families import llama
from attention_workshop.real.fast import decode_step, gemm, kernels
from attention_workshop.real.fast.blocks import sharing
from attention_workshop.real.fast.buffers import keep_freed_memory, reusable
from attention_workshop.real.fast.loop import threads_for
from attention_workshop.real.fast.ops import (
    causal_softmax_in_place,
    compiled_attention,
    compiled_for,
    silu_times_in_place,
)
from attention_workshop.real.fast.team import Stage, Team
from attention_workshop.real.layers import rms_norm, rotate
from attention_workshop.real.trace import KEPT, Trace, TraceLayer


def attention(team, traces=()):  # Team, [KeptTrace] -> attend(q, k, v, mask): the heads'
    # rows split over the team's threads; the weights written into the last trace's memory
    def attend(q, k, v, mask):  # [H, T, d], [H, S, d], [H, S, d], [T, S] -> ([H, T, d], [H, T, S])
        """attention.scaled_dot_product_attention for float32 and llama's causal mask (row t
        sees keys 0..S - T + t, as `mask` says: np.tri(T, S, S - T)), in place. For head sizes
        of 16-64 by 16, _kernels.c's attend_prompt: each thread of the team one call for its
        rows, the GIL released (SmolLM2, 128 tokens, two threads: 172-184 -> 159-171 ms a
        forward; numpy's calls, a block at a time, had held the GIL for longer than their
        arithmetic took). Else numpy's products, a block of ROWS rows of a head at a time: a
        block's scores against the keys its last row sees (the later keys' weights are 0,
        written by the softmax, and never multiplied), then its weights times v; the blocks
        shared by the team's threads, the BLAS at one thread in each. The weights are written
        where the trace keeps this layer's (it then copies nothing) when a trace is given."""
        H, T, d = q.shape
        S = k.shape[1]
        slot = traces[-1].attention_slot((H, T, S)) if traces else None
        scores = np.empty((H, T, S), np.float32) if slot is None else slot  # every weight
        # is written below
        out = np.empty((H, T, d), np.float32)
        scale = 1.0 / math.sqrt(d)
        compiled = compiled_attention(d, scores, out) if q.dtype == np.float32 else None
        if compiled is not None:
            q, k, v = (np.ascontiguousarray(a, np.float32) for a in (q, k, v))
            gemm.rest()
            team.run(Stage(H * T, lambda rows: compiled.attend_prompt(
                q, k, v, scores, out, scale, rows.start, rows.stop)))
            return out, scores
        blocks = -(-T // ROWS)

        def part(units):  # units: a slice of range(H * blocks), head-major
            for u in range(units.start, units.stop):
                h, first = divmod(u, blocks)
                rows = slice(first * ROWS, min(T, (first + 1) * ROWS))
                seen = S - T + rows.start  # keys before the block's first row's own
                keys = seen + rows.stop - rows.start  # the keys its last row sees
                np.matmul(q[h, rows], k[h, :keys].T, out=scores[h, rows, :keys])
                causal_softmax_in_place(scores[h, None, rows], scale, seen)
                np.matmul(scores[h, rows, :keys], v[h, :keys], out=out[h, rows])
        gemm.rest()
        team.run(Stage(H * blocks, part))
        return out, scores
    return attend


# a head's rows per block: at 512 tokens, 8 blocks do 44% fewer multiply-adds than whole
# rows (a block stops at its last row's own key)
ROWS = 64


def activation(team):  # Team -> gated(gate, up, name), silu's rows split over its threads
    def gated(gate, up, name):  # [T, d_mlp] twice (fresh products), config's name -> gate
        """llama.gated: silu(gate) * up in one compiled pass (ops.silu_times_in_place), in
        place on gate; another activation runs llama.py's own."""
        if name != "silu" or gate.dtype != np.float32 or not gate.flags.c_contiguous:
            return llama.gated(gate, up, name)
        gemm.rest()
        team.run(Stage(len(gate), lambda rows: silu_times_in_place(gate[rows], up[rows])))
        return gate
    return gated


class KeptTrace(Trace):
    """The outputs in memory kept between passes (buffers.reusable): a 512-token pass's 283 MB
    of attention weights are not handed over by the kernel page by page again each time.
    `attention_slot` lends the layer's place for its weights to the attention, which writes
    them there, and a point whose value already is its place is not copied (60 ms of 1.3 s
    at 512 tokens)."""

    current = 0  # the layer running (the forward asks for its points as it starts)

    @staticmethod
    def empty(shape, dtype, name):
        return reusable(shape, dtype, f"llama {name}")

    def layer(self, i):  # -> layer i's points
        self.current = i
        return KeptLayer(self.out, i)

    def attention_slot(self, shape):  # [H, T, S] -> the current layer's weights' place, or None
        slot = self.out["attentions"][self.current]
        return slot if slot.shape == shape and slot.dtype == np.float32 else None


class KeptLayer(TraceLayer):
    def __call__(self, name, value):
        kept = KEPT.get(name)
        if kept is not None and value is not None:
            place = self.out[kept[0]][self.i + kept[1]]
            if isinstance(value, np.ndarray) and value.__array_interface__ == \
                    place.__array_interface__:  # the same numbers in the same memory
                return value
        return super().__call__(name, value)


def norm(x, weight, eps):  # [T, D] float32, [D], float -> [T, D]: llama.py's rms_norm
    """layers.rms_norm in one compiled pass a row (the sum of squares in another order: within
    float32's rounding of it); numpy's formula where the loop is not built, or where a square
    could overflow (it raises as numpy's does)."""
    if (compiled_for(x, weight) is None or x.ndim != 2 or weight.ndim != 1
            or not -1e19 < x.min() <= x.max() < 1e19):
        return rms_norm(x, weight, eps)
    return decode_step.rms_norm(x, weight, eps)  # the compiled loop, a row at a time


def turn(x, cos, sin):  # [H, T, d] float32, [T, d] float64 twice -> [H, T, d]
    """layers.rotate in one compiled pass (_kernels.c's rotary: the same float64 arithmetic,
    the same bits) on a copy of x; numpy's formula for other types."""
    k = kernels.compiled
    if (k is None or x.dtype != np.float32 or cos.dtype != np.float64 or x.ndim != 3
            or x.shape[1:] != cos.shape or sin.shape != cos.shape):
        return rotate(x, cos, sin)
    out = np.array(x, order="C")  # a copy: the caller's q stays as it was
    k.rotary(out, np.ascontiguousarray(cos), np.ascontiguousarray(sin), x.shape[-1])
    return out


def forward(w, cfg, ids, past=None, hooks=None):  # float32 weights (or FileBlocks), hook
    # points -> as llama.forward
    if decode_step.applies(ids, past, hooks):  # a generated token: its own step
        return decode_step.step(w, cfg, ids, past)
    keep_freed_memory()  # the products' fresh arrays: pages kept mapped between them
    # the products' rows and the attention's blocks over the team's threads, the BLAS at one
    # thread in each (alone, the BLAS as the user set it, unless _gemm.c's threads run the
    # products); a one-token product's rows over the threads allowed
    traces = []

    def trace(*args, **kwargs):  # a KeptTrace that the attention writes its weights into
        traces.append(KeptTrace(*args, **kwargs))  # (not with a caller's hooks: they may keep
        return traces[-1]  # the weights they were shown, then hand back others)

    allowed = threads_allowed()  # asked before the team holds the BLAS at one thread
    n = threads_for(len(ids))
    with (Team(n, hold_blas=n > 1 or gemm.compiled is not None) as team,
          sharing(allowed), gemm.shared_by(team, allowed)):
        return llama.forward(w, cfg, ids, past, hooks,
                             attend=attention(team, () if hooks else traces),
                             trace=trace, gated=activation(team), norm=norm, turn=turn)
