"""How many threads the BLAS (numpy's matrix products) may use, and holding it at one.

Held at one thread: (1) while fast/loop.py runs two Python threads, one per core, each
doing its own products; (2) for inputs under fast/loop.ONE_BLAS_THREAD_BELOW tokens;
(3) in float64 forward passes, whose digits then never depend on
the thread count (OpenBLAS's two-thread products round differently from 200 tokens on) and
whose small products (Module 3's 5-token sentences) never wait for a second thread (on this
shared 2-core machine, waking it for each product made a 16-token pass several times
slower whenever the other core was busy: docs/benchmarks.md). Otherwise the BLAS
uses what the user allows. threadpoolctl finds numpy's BLAS (OpenBLAS, MKL, BLIS, ...),
sets its thread count for the duration, then restores the user's; it is imported only
when needed.
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
