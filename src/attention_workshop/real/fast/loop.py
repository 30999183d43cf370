"""The float32 layer loop: each layer as stages, each stage's work split over the threads allowed.

Activations are feature-major, [features, T] (see ops.py). A family writes its layer
as a list of stages (see fast/__init__.py). A stage is `Stage(n, fn)`: fn(part) computes the
slice `part` of range(n) and touches nothing another part computes, so the parts may run at
once:

    Stage(H, lambda part: io.heads(part, qkv_pieces, x, w_o, b_o, a))  # Q|K|V to W_O
    Stage(T, lambda c: layer_norm_columns(io.gather(a), g, b, eps, c), WHOLE)  # one thread

A product after attention is split over its inner dimension: each part of the heads
multiplies its own rows of the heads' outputs by the matching columns of W_O
(io.linear_share: ops.linear_cols into io.share(part, a)), and the next stage adds
the shares (io.gather(a)). So a part makes its heads' q, k and v, their attention and its share of
the output in one go, and a layer has two hand-overs between threads (the heads, the MLP)
instead of five (less time on two threads: docs/benchmarks.md). On
one thread there is one part, and the shares are the whole products.

From SPLIT_FROM tokens on, with two threads or more allowed (OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS, threadpoolctl's limits), each stage's parts run on that many Python
threads (numpy and the compiled kernels release the GIL inside their loops), the BLAS at
one thread each. A stage ends when all its parts have: the next may read any of them. With
one thread allowed, one runs.
"""

import threading

from attention_workshop.attention import causal_mask
from attention_workshop.real.blas_threads import threads_allowed
from attention_workshop.real.families import layer_weights
from attention_workshop.real.fast import gemm
from attention_workshop.real.fast.buffers import resident, reusable
from attention_workshop.real.fast.ops import attention_heads, linear_cols, qkv_rows_of_heads
from attention_workshop.real.fast.team import Team

SPLIT_FROM = 32  # tokens; below, the threads' hand-overs cost more than they save
# Below this many tokens, unsplit, the BLAS stays at one thread: a second one gained little on
# a quiet machine and cost several times more whenever the other core was busy
# (docs/benchmarks.md)
ONE_BLAS_THREAD_BELOW = 16
# From this many tokens on, the layers' weights are read from copies in the process's memory
# (buffers.resident: faster products, copied once per model); below, from the mapped
# file, so a cold run on a short sentence copies nothing
RESIDENT_FROM = 16


# A grain no stage reaches: the stage runs whole, on one thread. Layer norms do: a token
# half of a feature-major [d, T] array is a strided block of columns, and numpy's loops over
# it were slower than over the whole (docs/benchmarks.md).
WHOLE = 1 << 30


class LayerIO:
    """What a layer's stages read and write, feature-major, set for each layer: x [d_model, T]
    the layer's input, qkv [3 d_model, T] Q|K|V, y [d_model, T] the layer's output (views of
    the forward's outputs); context [d_model, T] the heads' outputs merged; attentions
    [n_head, T, T] and values [n_head, T, d_head], the layer's slices of the forward's.

    temp(name, rows): a family's own [rows, T] scratch (the same array on every layer);
    heads(part, ...): a part of the heads' work, from Q|K|V to their share of W_O's product;
    linear_share, share(part, out) and gather(out): a product split over its inner
    dimension (module doc).
    """

    def __init__(self, cfg, T, dtype, mask):  # ModelConfig, tokens, dtype, [T, T] bool or None
        self.T, self.dtype, self.temps = T, dtype, {}
        self.d_head, self.mask = cfg.d_head, mask
        self.context = None  # the layer's [d_model, T] heads' outputs, set per layer
        self.x = self.y = self.qkv = self.attentions = self.values = None
        self.pending = []  # [(out, scratch)]: shares written, not yet added to their out
        self.lock = threading.Lock()

    def temp(self, name, rows):
        if name not in self.temps:
            self.temps[name] = reusable((rows, self.T), self.dtype, f"temp {name}")
        return self.temps[name]

    def heads(self, part, pieces, src, w_o, b_o, out):
        # slice of head numbers; Q|K|V's [(w, b)] as in ops.linear_pieces_rows; src
        # [d_model, T] the input they multiply; W_O [d_model, d_model], b_O [d_model]; out
        """What the heads `part` do in a layer: their rows of qkv from src
        (ops.qkv_rows_of_heads); their attention (ops.attention_heads: weights
        into attentions, outputs into their rows of context, v into values); and their share
        of out = W_O context + b_O + x (linear_share)."""
        qkv_rows_of_heads(pieces, src, self.qkv, part, self.d_head)
        attention_heads(self.qkv, part, self.d_head, self.mask, self.attentions, self.context,
                        self.values)
        rows = slice(part.start * self.d_head, part.stop * self.d_head)  # their context rows
        self.linear_share(part, w_o, self.context, rows, out, b_o, self.x)

    def linear_share(self, part, w, x, cols, out, b, add):
        # a stage's part (slice), [out, in], [in, T], slice of inputs, [out, T], [out], [out, T]
        """The share of out = W x + b + add that the inputs `cols` give (ops.linear_cols),
        written where share(part, out) says; the first part's share carries b and add."""
        target = self.share(part, out)
        linear_cols(w, x, cols, target, *((b, add) if target is out else ()))

    def share(self, part, out):  # a stage's part (slice), [rows, T] -> [rows, T]
        """Where `part` writes its share of a product into out: the first part (the only one,
        on one thread) into out itself, adding the bias and residual; any other into a
        scratch of its own that gather(out) adds to out.

        Example: two parts of the heads, slice(0, 6) and slice(6, 12): share(slice(0, 6), a)
        is a; share(slice(6, 12), a) is a scratch, pending until gather(a).
        """
        if part.start == 0:
            return out
        scratch = self.temp(f"share from {part.start}, {len(out)} rows", len(out))
        with self.lock:
            if any(s is scratch for _, s in self.pending):
                raise RuntimeError("a share's scratch was written twice before a gather")
            self.pending.append((out, scratch))
        return scratch

    def gather(self, out):  # [rows, T] -> out, with every share pending for it added
        """Run by the stage after the one that wrote the shares (all its parts have ended)."""
        with self.lock:
            mine = [s for target, s in self.pending if target is out]
            self.pending = [(t, s) for t, s in self.pending if t is not out]
        for scratch in mine:
            out += scratch
        return out


def run_layers_fast(fast_stages, weights, cfg, x, prefix):
    # family's fast_stages(layer, cfg, io) -> [Stage]; {name: array}; ModelConfig;
    # [T, d_model] float32 embeddings; "encoder.layer." -> the dict a family's forward returns
    """A family's readable layer loop, for float32: every layer as its stages.
    hidden_states is a view of the layers' own feature-major outputs (no copies)."""
    L, H, T, D = cfg.n_layer, cfg.n_head, len(x), cfg.d_model
    # the forward's arrays come back to it once the caller has let them go (buffers.py)
    states = reusable((L + 1, D, T), x.dtype, "hidden states")  # layer i: states[i] -> [i + 1]
    states[0] = x.T
    qkvs = reusable((L, 3 * D, T), x.dtype, "q|k|v")  # each layer's Q|K|V, feature-major
    contexts = reusable((L, D, T), x.dtype, "contexts")  # each layer's heads' outputs, merged

    def heads_of(part):  # 0 (Q) or 1 (K) -> [L, H, T, d_head], token-major, a view of qkvs
        return qkvs[:, part * D:(part + 1) * D].reshape(L, H, cfg.d_head, T).transpose(0, 1, 3, 2)

    out = {
        "hidden_states": states.transpose(0, 2, 1),  # [L + 1, T, D], token-major, a view
        "attentions": reusable((L, H, T, T), x.dtype, "attentions"),  # 75 MB at 512 tokens
        "queries": heads_of(0),
        "keys": heads_of(1),
        # what each head blends: attention reads it token-major, so it is a copy
        "values": reusable((L, H, T, cfg.d_head), x.dtype, "values"),
        # each head's output before W_O: the heads' rows of each layer's context [D, T]
        "head_outputs": contexts.reshape(L, H, cfg.d_head, T).transpose(0, 1, 3, 2),
    }
    io = LayerIO(cfg, T, x.dtype, causal_mask(T) if cfg.causal else None)
    n = threads_for(T)
    hold = n > 1 or T < ONE_BLAS_THREAD_BELOW
    # unheld, the BLAS may run on several threads: its products then, not gemm.py's loop
    with Team(n, hold_blas=hold) as team, gemm.to_blas(not hold and threads_allowed() > 1):
        for i in range(L):
            layer = layer_weights(weights, f"{prefix}{i}.")
            if T >= RESIDENT_FROM:
                layer = {name: resident(array) for name, array in layer.items()}
            io.x, io.y, io.qkv, io.context = states[i], states[i + 1], qkvs[i], contexts[i]
            io.attentions, io.values = out["attentions"][i], out["values"][i]
            team.run(*fast_stages(layer, cfg, io))
            if io.pending:  # a family's stages wrote a share that no stage added
                raise RuntimeError(f"layer {i}: a share of a product was never gathered")
    return out


def threads_for(T):  # tokens -> how many Python threads share each stage
    """Example: threads_for(16) -> 1; threads_for(512) with two allowed -> 2."""
    return 1 if T < SPLIT_FROM else threads_allowed()
