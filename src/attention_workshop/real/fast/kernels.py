"""The compiled float32 kernels (_kernels.c), or None where the install could not build them.

`pip install` compiles _kernels.c when it finds a C compiler; where it finds none, the
install goes on without it (pyproject.toml marks it optional) and ops.py runs numpy's
passes instead: the same formulas, slower (docs/benchmarks.md). ops.py asks `compiled` at
each call, so a test may set it to None. A build older than the source (an editable install
whose source moved on without `pip install -e .` again) lacks the newer loops: it is not
used either, rather than fail in the middle of a forward pass.
"""

NAMES = ("gelu", "silu_times", "softmax_rows", "causal_softmax", "layer_norm_columns",
         "blocks_times_vector", "blocks_times_tokens", "block_versions",
         "block_team_size", "block_team_measured",
         "rms_norm_row", "rotary", "attend_cached")  # every loop ops.py and blocks.py call

try:
    from attention_workshop.real.fast import _kernels as compiled
except ImportError:  # built without a C compiler
    compiled = None
stale = compiled is not None and not all(hasattr(compiled, name) for name in NAMES)
if stale:  # rebuilt by `pip install -e .`; tests/test_fast_kernels.py fails until then
    compiled = None
