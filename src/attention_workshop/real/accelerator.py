"""The one door to real/fast/, the accelerator: nothing else in the package imports it.

Without real/fast/ (deleted, or its import failing) every model runs its family's readable
forward and a GGUF's matrices keep no 4- and 8-bit blocks: the same numbers, only slower
(tests/test_accelerator_removable.py runs the commands in a copy without it).

Example: forward_for(minilm_cfg, "float32") -> fast.bert.forward; ("float64") -> None.
"""


def forward_for(cfg, dtype, hooks=False):  # ModelConfig, dtype, hooks given -> forward or None
    """real/fast/'s forward for this family and dtype, or None (the readable one runs)."""
    try:
        from attention_workshop.real.fast import accelerated
    except ImportError:
        return None
    return accelerated(cfg, dtype, hooks)


def kept_blocks(raw, qtype, matrix):  # a GGUF tensor's bytes, its type, its float32 numbers
    """-> fast.blocks.FileBlocks (the matrix with the file's blocks, which a generated token's
    products read), or the matrix itself where there is no accelerator or nothing to keep."""
    try:
        from attention_workshop.real.fast.blocks import from_gguf
    except ImportError:
        return matrix
    return from_gguf(raw, qtype, matrix)
