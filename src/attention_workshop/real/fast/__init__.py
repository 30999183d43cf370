"""The accelerator: a family's float32 forward pass made fast, proved equal to its readable one.

The readable forward (bert.py, gpt2.py, llama.py beside this folder) is the math; this
folder is the speed: feature-major layers split in stages over threads (loop.py), the
pieces of a layer on buffers (ops.py), compiled loops for gelu, silu, softmax and layer
norm (_kernels.c, optional: kernels.py), a prompt's products with a layer's weights on
AVX-512 CPUs (_gemm.c, optional: gemm.py), memory kept between passes (buffers.py), the
threads (team.py), a GGUF's 4- and 8-bit blocks for a generated token's products
(blocks.py), and a generated token's own step on a cache that grows in place
(decode_step.py). Each accelerated family has one file here: `forward(weights, cfg, ids)` with
the same contract as its readable forward (families/__init__.py), written as `stages(layer, cfg,
io)` for loop.run_layers_fast (bert.py, gpt2.py), or as the readable forward itself with
its hooks (llama.py). A family without one, or float64 (Module 3's digits), runs
the readable forward. tests/test_fast_equals_readable.py proves every accelerated family
equal to its readable file; docs/benchmarks.md has the measurements.

Adding an accelerator: a file here and one line in ACCELERATORS.
"""

import importlib

# family (config.json's model_type) -> its accelerator's module
ACCELERATORS = {
    "bert": "attention_workshop.real.fast.bert",
    "gpt2": "attention_workshop.real.fast.gpt2",
    "llama": "attention_workshop.real.fast.llama",
    "qwen2": "attention_workshop.real.fast.llama",  # Qwen2's forward is llama.forward
}


# the accelerators that are their family's readable forward with its hook points, so they
# honour a caller's hooks; the others rewrite their blocks as stages and step aside for hooks
WITH_HOOKS = {"llama", "qwen2"}


def accelerated(cfg, dtype, hooks=False):  # ModelConfig, dtype, hooks given -> forward, or None
    """Example: MiniLM in float32 -> fast.bert.forward; in float64, or with hooks -> None.
    Found once for each family, dtype and hooks (every run asks: with a generated token's
    caches cold, the import machinery took ~40 us of its step)."""
    key = (cfg.family, str(dtype), bool(hooks))
    if key not in _found:
        _found[key] = _accelerator(*key)
    return _found[key]


_found = {}  # (family, dtype, hooks) -> its accelerator's forward, or None


def _accelerator(family, dtype, hooks):
    if dtype != "float32" or family not in ACCELERATORS:
        return None
    if hooks and family not in WITH_HOOKS:
        return None
    return importlib.import_module(ACCELERATORS[family]).forward
