"""The compiled float32 kernels (_kernels.c), or None where the install could not build them.

`pip install` compiles _kernels.c when it finds a C compiler; where it finds none, the
install goes on without it (pyproject.toml marks it optional) and ops.py runs numpy's
passes instead: the same formulas, slower (docs/benchmarks.md). ops.py asks `compiled` at
each call, so a test may set it to None.
"""

try:
    from attention_workshop.real.fast import _kernels as compiled
except ImportError:  # built without a C compiler
    compiled = None
