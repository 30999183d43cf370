"""The float32 layer loop: every layer's rows (tokens) in one block, or in two on two threads.

A family's fast layer is two functions over a block of rows (see families.py):

    project(x_rows, layer, cfg, qkv_rows)             # [rows, d_model] -> [rows, 3 d_model]
    finish(x_rows, context_rows, layer, cfg, out_rows)  # the rest of the block, after attention

Between them this loop runs attention (fast_ops.attention_rows), which needs every row's
keys and values: the one point where the two halves wait for each other. numpy's
element-wise work (softmax's exp, gelu, layer norm) runs on one core per call, so from
SPLIT_FROM tokens on, when the BLAS may use two threads or more, each half runs on its own
Python thread (numpy releases the GIL inside its loops) with the BLAS at one thread each:
both cores stay busy with no more threads than the user allowed (OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS, threadpoolctl's limits). With one thread allowed, one runs.
"""

import numpy as np

from attention_workshop.attention import causal_mask
from attention_workshop.real.blas_threads import one_blas_thread, threads_allowed
from attention_workshop.real.buffers import reusable
from attention_workshop.real.fast_ops import attention_rows
from attention_workshop.real.fast_path import layer_weights

SPLIT_FROM = 128  # tokens; below, splitting cost more than it saved (measured on MiniLM)
# Below this many tokens the BLAS stays at one thread: a second one gained at most 15% on
# a quiet machine at 5 tokens (35% at 16) and cost 3x and more whenever the other core was
# busy (a cold `real "the river bank"`: 0.42 s -> 0.61 s at load 3)
ONE_BLAS_THREAD_BELOW = 16


def run_layers_fast(project, finish, weights, cfg, x, prefix):
    # project, finish: the family's fast layer; {name: array}; ModelConfig; [T, d_model]
    # float32 embeddings; "encoder.layer." -> the same dict of arrays as fast_path.run_layers
    """fast_path.run_layers for float32, with each layer as project + attention + finish."""
    L, H, T, D = cfg.n_layer, cfg.n_head, len(x), cfg.d_model
    out = {
        "hidden_states": np.empty((L + 1, T, D), x.dtype),
        "attentions": reusable((L, H, T, T), x.dtype),  # 75 MB at 512 tokens: see buffers.py
        "queries": np.empty((L, H, T, cfg.d_head), x.dtype),
        "keys": np.empty((L, H, T, cfg.d_head), x.dtype),
        "values": np.empty((L, H, T, cfg.d_head), x.dtype),  # what each head blends
    }
    mask = causal_mask(T) if cfg.causal else None  # [T, T]
    qkv = np.empty((T, 3 * D), x.dtype)  # Q | K | V side by side
    context = np.empty((T, D), x.dtype)  # the heads' outputs, merged
    context_heads = heads(context, H)  # [n_head, T, d_head], a view of context
    out["hidden_states"][0] = x
    halves = split(T)
    with Threads(len(halves), hold_blas=len(halves) > 1 or T < ONE_BLAS_THREAD_BELOW) as pool:
        for i in range(L):
            layer = layer_weights(weights, f"{prefix}{i}.")
            x, y = out["hidden_states"][i], out["hidden_states"][i + 1]
            pool.run(halves, lambda r, x=x, layer=layer: project(x[r], layer, cfg, qkv[r]))
            q, k, v = (heads(part, H) for part in np.split(qkv, 3, axis=-1))  # [H, T, d_head]
            out["queries"][i], out["keys"][i], out["values"][i] = q, k, v  # contiguous copies
            k_t = np.ascontiguousarray(k.transpose(0, 2, 1))  # [H, d_head, T]: q k^T is then
            # the plain kind of product, as weights @ v on the contiguous values

            def rest(r, i=i, x=x, y=y, layer=layer, k_t=k_t):
                attention_rows(out["queries"][i], k_t, out["values"][i], r, mask,
                               out["attentions"][i, :, r], context_heads[:, r])
                finish(x[r], context[r], layer, cfg, y[r])

            pool.run(halves, rest)
    return out


def heads(x, n_head):  # [T, d_model] -> [n_head, T, d_head], a view (transformer.split_heads)
    T, d_model = x.shape
    return x.reshape(T, n_head, d_model // n_head).transpose(1, 0, 2)


def split(T):  # -> [slice]: the row blocks, one per thread
    """Example: split(16) -> [slice(0, 16)]; split(512) on two allowed threads -> two halves."""
    if T < SPLIT_FROM or threads_allowed() < 2:
        return [slice(0, T)]
    return [slice(0, T // 2), slice(T // 2, T)]


class Blocks:
    """Runs fn on each block of rows: the second on a worker thread if there is one."""

    def __init__(self, executor=None):
        self.executor = executor

    def run(self, blocks, fn):
        other = self.executor.submit(fn, blocks[1]) if self.executor else None
        for block in blocks[:1] if other else blocks:
            fn(block)
        if other:
            other.result()


class Threads:
    """`with Threads(n_blocks, hold_blas) as blocks:` a worker thread if there are two
    blocks; the BLAS at one thread if hold_blas (always with two blocks: one thread per
    core, see blas_threads.py), else as the user set it (on a quiet machine its second
    thread made a 16-token pass 1.5x faster)."""

    def __init__(self, n_blocks, hold_blas):
        self.n_blocks, self.hold_blas = n_blocks, hold_blas

    def __enter__(self):
        self.limits = one_blas_thread() if self.hold_blas else None
        self.executor = None
        if self.n_blocks > 1:
            from concurrent.futures import ThreadPoolExecutor

            self.executor = ThreadPoolExecutor(max_workers=1)
        return Blocks(self.executor)

    def __exit__(self, *exc):
        if self.executor:
            self.executor.shutdown()
        if self.limits:
            self.limits.restore_original_limits()
