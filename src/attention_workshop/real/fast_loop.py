"""The float32 layer loop: each layer as stages, each stage's work split over the threads allowed.

Activations are feature-major, [features, T] (see fast_ops.py). A family writes its layer
as two lists of stages (see families.py): the ones that make Q|K|V from the layer's input,
and the ones that make its output from the heads' merged outputs; between them this loop
runs attention, head by head. A stage is `Stage(n, fn)`: fn(part) computes the slice `part`
of range(n) and touches nothing another part computes, so the parts may run at once:

    Stage(3 * D, lambda r: linear_rows(w, x, b, qkv, r))            # output rows: half of W each
    Stage(T, lambda c: layer_norm_columns(a, g, b, eps, c), WHOLE)  # tokens, kept on one thread

From SPLIT_FROM tokens on, with two threads or more allowed (OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS, threadpoolctl's limits), each stage's parts run on that many Python
threads (numpy releases the GIL inside its loops), the BLAS at one thread each: numpy's
element-wise work runs on one core per call, so splitting it is what keeps every core busy,
and split by output rows each thread reads only its share of the weights. A stage ends
when all its parts have: the next may read any of them. With one thread allowed, one runs.
"""

from collections.abc import Callable
from typing import NamedTuple

from attention_workshop.attention import causal_mask
from attention_workshop.real.blas_threads import threads_allowed
from attention_workshop.real.buffers import resident, reusable
from attention_workshop.real.fast_ops import attention_heads, softmax_subtracts_max
from attention_workshop.real.fast_path import layer_weights
from attention_workshop.real.team import Team

SPLIT_FROM = 32  # tokens; below, the threads' hand-overs cost more than they save
# Below this many tokens, unsplit, the BLAS stays at one thread: a second one gained at most
# 15% on a quiet machine at 5 tokens and cost 3x and more whenever the other core was busy
# (a cold `real "the river bank"`: 0.42 s -> 0.61 s at load 3)
ONE_BLAS_THREAD_BELOW = 16
# From this many tokens on, the layers' weights are read from copies in the process's memory
# (buffers.resident: ~10% faster products, copied once per model); below, from the mapped
# file, so a cold run on a short sentence copies nothing
RESIDENT_FROM = 16


class Stage(NamedTuple):
    n: int  # the work's size: output rows, tokens or heads
    fn: Callable  # fn(slice of range(n)) computes that part
    grain: int = 1  # the fewest units worth handing to another thread


# A grain no stage reaches: the stage runs whole, on one thread. Layer norms do: a token
# half of a feature-major [d, T] array is a strided block of columns, and numpy's loops over
# it were slower than over the whole (MiniLM, 512 tokens: 0.30 ms whole on one thread,
# 0.80 ms split over two; 128 tokens: 0.09 against 0.34).
WHOLE = 1 << 30


class LayerIO:
    """The buffers a layer reads and writes, feature-major: x [d_model, T] the layer's input,
    qkv [3 d_model, T] Q|K|V, y [d_model, T] the layer's output (views of the forward's
    outputs, set for each layer), context [d_model, T] the heads' outputs merged;
    `temp(name, rows)` gives a family its own [rows, T] scratch (the same array on every
    layer)."""

    def __init__(self, cfg, T, dtype):
        self.T, self.dtype, self.temps = T, dtype, {}
        self.context = reusable((cfg.d_model, T), dtype, "context")
        self.x = self.y = self.qkv = None

    def temp(self, name, rows):
        if name not in self.temps:
            self.temps[name] = reusable((rows, self.T), self.dtype, f"temp {name}")
        return self.temps[name]


def run_layers_fast(fast_stages, weights, cfg, x, prefix):
    # family's fast_stages(layer, cfg, io) -> (before, after); {name: array}; ModelConfig;
    # [T, d_model] float32 embeddings; "encoder.layer." -> the dict fast_path.run_layers fills
    """fast_path.run_layers for float32: every layer as its stages, attention between.
    hidden_states is a view of the layers' own feature-major outputs (no copies)."""
    L, H, T, D = cfg.n_layer, cfg.n_head, len(x), cfg.d_model
    # the forward's arrays come back to it once the caller has let them go (buffers.py)
    states = reusable((L + 1, D, T), x.dtype, "hidden states")  # layer i: states[i] -> [i + 1]
    states[0] = x.T
    qkvs = reusable((L, 3 * D, T), x.dtype, "q|k|v")  # each layer's Q|K|V, feature-major

    def heads_of(part):  # 0 (Q) or 1 (K) -> [L, H, T, d_head], token-major, a view of qkvs
        return qkvs[:, part * D:(part + 1) * D].reshape(L, H, cfg.d_head, T).transpose(0, 1, 3, 2)

    out = {
        "hidden_states": states.transpose(0, 2, 1),  # [L + 1, T, D], token-major, a view
        "attentions": reusable((L, H, T, T), x.dtype, "attentions"),  # 75 MB at 512 tokens
        "queries": heads_of(0),
        "keys": heads_of(1),
        # what each head blends: attention reads it token-major, so it is a copy
        "values": reusable((L, H, T, cfg.d_head), x.dtype, "values"),
    }
    mask = causal_mask(T) if cfg.causal else None  # [T, T]
    io = LayerIO(cfg, T, x.dtype)
    n = threads_for(T)
    with Team(n, hold_blas=n > 1 or T < ONE_BLAS_THREAD_BELOW) as team:
        for i in range(L):
            layer = layer_weights(weights, f"{prefix}{i}.")
            if T >= RESIDENT_FROM:
                layer = {name: resident(array) for name, array in layer.items()}
            io.x, io.y, io.qkv = states[i], states[i + 1], qkvs[i]
            before, after = fast_stages(layer, cfg, io)
            team.run(*before)
            loud = softmax_subtracts_max(io.qkv, H, cfg.d_head)  # once a layer, before the split
            team.run(Stage(H, lambda heads, i=i, loud=loud: attention_heads(
                io.qkv, heads, cfg.d_head, mask, loud, out["attentions"][i], io.context,
                out["values"][i])))
            team.run(*after)
    return out


def threads_for(T):  # tokens -> how many Python threads share each stage
    """Example: threads_for(16) -> 1; threads_for(512) with two allowed -> 2."""
    return 1 if T < SPLIT_FROM else threads_allowed()
