"""How many threads the BLAS (numpy's matrix products) may use, and holding it at one.

A forward pass through a small model is hundreds of small matrix products. On a 2-core
machine, waking OpenBLAS's second thread for each one made a 16-token MiniLM forward pass
several times slower whenever the other core was busy (medians 103 ms vs 18 ms on one
thread), so the forward passes hold the BLAS at one thread and, for long inputs, split
their rows over Python threads themselves (row_split.py). threadpoolctl finds numpy's
BLAS (OpenBLAS, MKL, BLIS, ...) and sets its thread count for the duration, then
restores the user's.
"""

import functools
import os


@functools.cache
def blas():  # -> threadpoolctl's handle on the BLAS libraries loaded (numpy's), found once
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas")


def threads_allowed():  # -> the least of the BLAS's thread counts and this process's CPUs
    """What the user allows: OpenBLAS reads OPENBLAS_NUM_THREADS (else OMP_NUM_THREADS) when
    it loads, and threadpoolctl's limits change it later; both show in its num_threads."""
    counts = [lib.num_threads for lib in blas().lib_controllers]
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min([*counts, cpus or 1])


def one_blas_thread():  # -> a context manager: the BLAS at one thread inside it
    """Example: with one_blas_thread(): x @ w  (one core, whatever OMP_NUM_THREADS says)."""
    return blas().limit(limits=1)
