"""Threads that share the work of each stage of a forward pass (loop.py): this one and
n - 1 workers, each worker a thread that waits for one part at a time.

A hand-over is two locks, go and done: the caller sets the job and releases go, computes
its own part, then acquires done, which the worker releases when its part is computed: a
split stage ends sooner than through a ThreadPoolExecutor (no Future, no Condition a call;
docs/benchmarks.md).
"""

import threading
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from attention_workshop.real.blas_threads import one_blas_thread

ALIGN = 16  # parts of a big stage start at multiples of this (rows: whole SIMD registers)


class Stage(NamedTuple):
    n: int  # the work's size: output rows, tokens or heads
    fn: Callable  # fn(slice of range(n)) computes that part
    grain: int = 1  # the fewest units worth handing to another thread


def parts(n, k, grain=1):  # -> [slice]: range(n) in k near-equal parts of >= grain units
    """Big works are cut at multiples of ALIGN (whole SIMD registers of rows).

    Example: parts(1152, 2) -> [slice(0, 576), slice(576, 1152)]; parts(12, 2) (heads) ->
    [slice(0, 6), slice(6, 12)]; parts(1, 2) -> [slice(0, 1)]; parts(128, 2, grain=128)
    -> [slice(0, 128)].
    """
    k = max(1, min(k, n // max(1, grain)))
    align = ALIGN if n >= 64 * k else 1
    inner = {min(n, round(n * j / k / align) * align) for j in range(1, k)}
    cuts = sorted(inner | {0, n})
    return [slice(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]



class Team:
    """`with Team(n, hold_blas) as team: team.run(stage, ...)`: each stage's parts
    (`parts`) on n threads, one stage after another; a part's exception is raised
    here once every part has ended. The BLAS at one thread inside if hold_blas (always with
    n > 1: one thread per core, see blas_threads.py), else as the user set it (on a quiet
    machine its second thread made a 16-token pass faster)."""

    def __init__(self, n, hold_blas):
        self.n, self.hold_blas = n, hold_blas

    def __enter__(self):
        self.limits = one_blas_thread() if self.hold_blas else None
        self.workers = [Worker() for _ in range(self.n - 1)]
        return self

    def run(self, *stages):
        for stage in stages:
            if self.n == 1:  # one thread: the whole, with nothing to cut
                stage.fn(slice(0, stage.n))
                continue
            pieces = parts(stage.n, self.n, stage.grain)
            busy = self.workers[:len(pieces) - 1]
            errors_raised = np.geterr()  # numpy's error handling is per thread: the caller's
            for worker, piece in zip(busy, pieces[1:], strict=True):  # holds in the workers
                worker.start(stage.fn, piece, errors_raised)
            try:
                stage.fn(pieces[0])
            finally:
                errors = [worker.wait() for worker in busy]
            for error in errors:
                if error is not None:
                    raise error

    def __exit__(self, *exc):
        for worker in self.workers:
            worker.stop()
        if self.limits:
            self.limits.restore_original_limits()


class Worker:
    """A thread that computes one part at a time: start(fn, part), then wait() -> the
    exception fn raised, or None; stop() ends the thread (after its part, if one runs)."""

    def __init__(self):
        self.go, self.done = threading.Lock(), threading.Lock()
        self.go.acquire()
        self.done.acquire()
        self.job, self.error = None, None
        self.thread = threading.Thread(target=self.loop, name="attention-workshop worker",
                                       daemon=True)
        self.thread.start()

    def loop(self):
        while True:
            self.go.acquire()
            if self.job is None:
                return
            fn, part, errors_raised = self.job
            try:
                with np.errstate(**errors_raised):
                    fn(part)
                self.error = None
            except BaseException as exc:  # handed to the caller, raised there
                self.error = exc
            self.done.release()

    def start(self, fn, part, errors_raised=None):  # errors_raised: np.geterr()'s dict
        self.job = (fn, part, errors_raised or np.geterr())
        self.go.release()

    def wait(self):
        self.done.acquire()
        return self.error

    def stop(self):
        self.job = None
        try:
            self.go.release()
        except RuntimeError:  # go already released (a Ctrl-C before the worker took its
            pass  # job): it takes go next, and finds no job
        self.thread.join()
