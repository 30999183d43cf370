"""Llama, accelerated: llama.forward itself, with the attention computed in place and the
outputs written into memory kept between passes.

At 512 tokens a layer's scores are 9 x 512 x 512 floats; the core's formula makes a new
array for the mask, the shift, the exponentials and the division (docs/benchmarks.md).
Here the scores are made once, masked in place and turned into weights by the compiled
softmax (ops.softmax_rows_in_place, numpy's passes where it is not built), which also
applies 1 / sqrt(d_head). Everything else is llama.py's own code, so the accelerator can
differ from it only in this function (tests/test_fast_equals_readable.py).
"""

import math

import numpy as np

from attention_workshop.real import llama
from attention_workshop.real.fast.buffers import reusable
from attention_workshop.real.fast.ops import softmax_rows_in_place
from attention_workshop.real.trace import Trace


def attend(q, k, v, mask):  # [H, T, d], [H, S, d], [H, S, d], [T, S] bool -> ([H, T, d], [H, T, S])
    """attention.scaled_dot_product_attention for float32, in place on one scores array."""
    scores = np.matmul(q, np.swapaxes(k, -1, -2))  # [H, T, S], unscaled
    np.copyto(scores, -np.inf, where=~mask)  # broadcast over heads: no new [H, T, S]
    softmax_rows_in_place(scores, 1.0 / math.sqrt(q.shape[-1]))
    return scores @ v, scores


class KeptTrace(Trace):
    """The outputs in memory kept between passes (buffers.reusable): a 512-token pass's 283 MB
    of attention weights are not handed over by the kernel page by page again each time."""

    @staticmethod
    def empty(shape, dtype, name):
        return reusable(shape, dtype, f"llama {name}")


def forward(w, cfg, ids, past=None):  # float32 weights -> as llama.forward
    return llama.forward(w, cfg, ids, past, attend=attend, trace=KeptTrace)
