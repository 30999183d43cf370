"""A generated token's step for Llama: llama.forward's arithmetic for one new token after a
KV cache, with nothing made that the step does not need.

llama.py's readable forward runs a new token through the same code as a prompt: it
concatenates the cache with the new keys and values (a copy of the whole cache, every layer,
every token), repeats them for the query heads, and the trace copies them again into its
outputs. Here the cache lives in memory kept between steps (buffers.extended): the new
token's keys and values are written once, in place, after the earlier ones; the query heads
of a group read their key/value head where it lies (no repeat); the attention weights are
made in the output itself; the products read the file's blocks straight into their outputs
(blocks.FileBlocks, one compiled call each). Where every layer's matrices are the file's
blocks (a GGUF model: SmolLM2) and the activation is silu, the layer loop itself is one
compiled call, _kernels.c's decode_layers: the same sums in the same order, so the same
bits, without returning to Python ~12 times a layer, and with Q, K and V (and the gate and
up) read as one stacked matrix each (plan(): the weights' addresses, gathered once per
model). The formulas are llama.py's own (rms_norm,
rotate, silu(gate) * up, the causal softmax of fast/llama.py), as _kernels.c's loops: rotary
gives layers.rotate's bits, and the norm's squares, the scores' and the products' sums are
added in another order (float32's rounding; tests/test_fast_decode_step.py,
tests/test_smollm2.py, tests/test_module4.py).

Example: step(w, cfg, [id], past) -> the dict llama.forward(w, cfg, [id], past) returns.
"""

import functools
import math
from dataclasses import dataclass

import numpy as np

from attention_workshop.real.blas_threads import threads_allowed
from attention_workshop.real.config import MAX_TOKENS
from attention_workshop.real.families import Weights, layer_weights
from attention_workshop.real.fast import kernels
from attention_workshop.real.fast.blocks import FileBlocks
from attention_workshop.real.fast.buffers import extended
from attention_workshop.real.layers import ACTIVATION, rotary_frequencies


def applies(ids, past, hooks):  # -> True where step() runs a forward pass
    """One new token after a cache, no caller's hooks (an intervention runs llama.py's own
    forward, which calls every hook point), and _kernels.c built (its loops run the step)."""
    return past is not None and len(ids) == 1 and not hooks and kernels.compiled is not None


def product(w, x, threads, out=None):  # [out, in] array or FileBlocks, [1, in] float32 ->
    # [1, out] (into `out`, C-contiguous, where given)
    """x @ W.T: a FileBlocks' blocks straight into the output (blocks.Transposed's call,
    without the operator's dispatch), else numpy's product."""
    out = np.empty((1, w.shape[0]), np.float32) if out is None else out
    if isinstance(w, FileBlocks):
        kernels.compiled.blocks_times_vector(w.quants, w.scales, w.offsets, x[0], out.reshape(-1),
                                             None, threads)
    else:
        np.matmul(x, w.T, out=out)
    return out


def linear(x, layer, name, bias, threads, out=None):  # as llama.linear, into `out` if given
    y = product(layer[f"{name}.weight"], x, threads, out)
    if bias:
        y += layer[f"{name}.bias"]
    return y


# a layer's weights in decode_layers' order (_kernels.c's PLAN_ fields): the norms one
# address each, the products three (quants, scales, offsets; 0 for 8-bit blocks), with Q, K
# and V stacked into one matrix, and the gate and up into another
PLANNED = ("input_layernorm.weight", ("self_attn.q_proj.weight", "self_attn.k_proj.weight",
                                      "self_attn.v_proj.weight"),
           "self_attn.o_proj.weight", "post_attention_layernorm.weight",
           ("mlp.gate_proj.weight", "mlp.up_proj.weight"), "mlp.down_proj.weight")


@dataclass(frozen=True)
class Plan:
    addresses: np.ndarray  # [n_layer, 14] int64: PLANNED's arrays where they lie in memory
    arrays: tuple  # those arrays (the stacked ones made here), held so the addresses stay theirs


def plan(w, cfg):  # Weights, ModelConfig -> Plan, or None where decode_layers cannot run
    """Every layer's PLANNED tensors, checked (float32 norms of d_model, FileBlocks of the
    shapes llama.forward multiplies, C-contiguous, the stacked ones of one block type), as
    addresses for one compiled call; the stacked matrices are copies made once (SmolLM2:
    52 MB). None for a model with a bias, another activation, or a matrix kept only as
    float32."""
    if (cfg.bias or cfg.out_bias or cfg.activation != "silu" or kernels.compiled is None
            or not hasattr(kernels.compiled, "decode_layers")):
        return None
    D, F, q, kv = cfg.d_model, cfg.d_mlp, cfg.n_head * cfg.d_head, cfg.n_kv_head * cfg.d_head
    shapes = {"q_proj": (q, D), "k_proj": (kv, D), "v_proj": (kv, D), "o_proj": (D, q),
              "gate_proj": (F, D), "up_proj": (F, D), "down_proj": (D, F)}
    rows, arrays = [], []
    for i in range(cfg.n_layer):
        layer, row = layer_weights(w, f"layers.{i}."), []
        for name in PLANNED:
            if isinstance(name, tuple):
                parts = _stacked([_blocks(layer.get(n), shapes[n.split(".")[1]]) for n in name])
            elif name.endswith("norm.weight"):
                parts = [layer.get(name)] if _is(layer.get(name), np.float32, (D,)) else None
            else:
                parts = _blocks(layer.get(name), shapes[name.split(".")[1]])
            if parts is None:
                return None
            row += [0 if p is None else p.ctypes.data for p in parts]
            arrays += [p for p in parts if p is not None]
        rows.append(row)
    return Plan(np.array(rows, np.int64), tuple(arrays))


def _stacked(each):  # [[quants, scales, offsets or None] | None] -> their rows stacked, or None
    if any(p is None for p in each) or len({p[2] is None for p in each}) > 1:
        return None  # a matrix the plan cannot read, or 4- and 8-bit blocks mixed
    return [None if each[0][j] is None else np.concatenate([p[j] for p in each])
            for j in range(3)]


def _is(a, dtype, shape):  # -> True for a C-contiguous ndarray of that dtype and shape
    return (isinstance(a, np.ndarray) and a.dtype == dtype and a.shape == shape
            and a.flags.c_contiguous)


def _blocks(value, shape):  # FileBlocks?, (rows, n) -> [quants, scales, offsets or None] | None
    if not isinstance(value, FileBlocks) or value.shape != shape:
        return None
    rows, n = shape
    four = value.offsets is not None
    quants = (np.uint8, (rows, n // 2)) if four else (np.int8, (rows, n))
    if not (_is(value.quants, *quants) and _is(value.scales, np.float32, (rows, n // 32))
            and (not four or _is(value.offsets, np.float32, (rows, n // 32)))):
        return None
    return [value.quants, value.scales, value.offsets]


@functools.lru_cache(maxsize=16)
def frequencies(d, theta):  # -> [d] float64, read-only: layers.rotary_frequencies once for
    # each half (position p's angles in layers.rotary_angles are p times these)
    inv_freq = rotary_frequencies(d, theta)
    both = np.concatenate([inv_freq, inv_freq])
    both.flags.writeable = False
    return both


def turn_at(position, d, theta):  # int, d_head, theta -> (cos, sin) [d] float64
    """rotary_angles([position], d, theta) for one position, the same bits (the same float64
    products p x frequency, the same cos and sin) in 3 numpy calls instead of 7: after a
    token's ~110 MB of blocks have passed through the caches, each call costs ~10 us."""
    angles = position * frequencies(d, theta)
    return np.cos(angles), np.sin(angles)


def rms_norm(x, weight, eps):  # [rows, d_model] float32 -> [rows, d_model]: layers.rms_norm
    out = np.empty_like(x)
    kernels.compiled.rms_norm_row(x, weight, eps, out)
    return out


def step(w, cfg, ids, past):  # weights, ModelConfig, [1] int, {"keys", "values"} -> dict
    L, H, K, d, D = cfg.n_layer, cfg.n_head, cfg.n_kv_head, cfg.d_head, cfg.d_model
    start = past["keys"].shape[2]  # tokens in the cache
    S = start + 1
    room = min(cfg.n_ctx, MAX_TOKENS)
    keys = extended(past["keys"], room, "cache keys")  # [L, K, S, d]
    values = extended(past["values"], room, "cache values")
    key_memory, value_memory = keys.base, values.base  # [L, K, room, d]: row S - 1 is ours
    x = np.array(w["embed_tokens.weight"][np.asarray(ids)], np.float32)  # [1, d_model]
    out = {"hidden_states": np.empty((L + 1, 1, D), np.float32),
           "attentions": np.empty((L, H, 1, S), np.float32),
           "queries": np.empty((L, H, 1, d), np.float32), "keys": keys, "values": values,
           "head_outputs": np.empty((L, H, 1, d), np.float32)}
    out["hidden_states"][0] = x
    cos, sin = turn_at(start, d, cfg.rope_theta)  # [d_head] float64
    scale, threads = 1.0 / math.sqrt(d), threads_allowed()
    planned = w.kept("decode plan", lambda w: plan(w, cfg)) if isinstance(w, Weights) else None
    if planned is not None:  # the layer loop below, as one compiled call
        sizes = np.array([L, D, H, K, d, cfg.d_mlp, key_memory.shape[2], S], np.int64)
        x = x[0].copy()  # [d_model]: becomes the last layer's output
        kernels.compiled.decode_layers(planned.addresses, sizes, x, cos, sin, key_memory,
                                       value_memory, out["hidden_states"], out["attentions"],
                                       out["queries"], out["head_outputs"], cfg.eps, scale,
                                       threads)
        x = x[None]
    else:
        x = layers(w, cfg, x, out, key_memory, value_memory, start, cos, sin, scale, threads)
    out["hidden_states"][L] = rms_norm(x, w["norm.weight"], cfg.eps)
    return out


def layers(w, cfg, x, out, key_memory, value_memory, start, cos, sin, scale, threads):
    # -> x [1, d_model] after the last layer: decode_layers' loop, written in Python, for
    # the models plan() turns down (a bias, another activation, float32 matrices)
    L, H, K, d = cfg.n_layer, cfg.n_head, cfg.n_kv_head, cfg.d_head
    S = start + 1
    k, v = np.empty((1, K * d), np.float32), np.empty((1, K * d), np.float32)
    for i in range(L):
        layer = layer_weights(w, f"layers.{i}.")
        h = rms_norm(x, layer["input_layernorm.weight"], cfg.eps)  # [1, d_model]
        q = out["queries"][i]  # [H, 1, d]
        linear(h, layer, "self_attn.q_proj", cfg.bias, threads, q.reshape(1, H * d))
        linear(h, layer, "self_attn.k_proj", cfg.bias, threads, k)
        linear(h, layer, "self_attn.v_proj", cfg.bias, threads, v)
        kernels.compiled.rotary(q, cos, sin)  # layers.rotate, in place: the same bits
        kernels.compiled.rotary(k, cos, sin)
        key_memory[i, :, start] = k.reshape(K, d)
        value_memory[i, :, start] = v.reshape(K, d)
        z = out["head_outputs"][i]  # [H, 1, d]
        kernels.compiled.attend_cached(q, key_memory[i], value_memory[i], K, S, scale,
                                       out["attentions"][i], z)
        x = x + linear(z.reshape(1, H * d), layer, "self_attn.o_proj", cfg.out_bias, threads)
        h = rms_norm(x, layer["post_attention_layernorm.weight"], cfg.eps)
        gate = product(layer["mlp.gate_proj.weight"], h, threads)  # [1, d_mlp]
        up = product(layer["mlp.up_proj.weight"], h, threads)
        if cfg.activation == "silu":
            kernels.compiled.silu_times(gate, up)
        else:
            gate = ACTIVATION[cfg.activation](gate) * up
        x = x + product(layer["mlp.down_proj.weight"], gate, threads)
        out["hidden_states"][i + 1] = x
    return x
