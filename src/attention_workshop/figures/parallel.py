"""Draw figures in two processes at once: matplotlib draws on one core, and run has two.

After every module has been computed (and matplotlib imported), the process forks:
the child draws its share of the figures and exits, the parent draws the rest and
waits. The child inherits everything already imported and computed, so it starts in
milliseconds. Without fork (Windows, macOS) or with one core, everything is drawn here.
If the child fails, the parent draws the child's share itself; if the parent fails or is
interrupted, it kills the child first, and a child whose parent dies ends with it.
"""

import contextlib
import os
import signal
import sys
import warnings

from attention_workshop import interrupts
from attention_workshop.errors import Interrupted


def can_fork():
    return sys.platform == "linux" and (os.cpu_count() or 1) > 1


def split(jobs):  # [(cost, path, draw)] -> ([...], [...]) with about equal total cost
    """Longest first, each job to the lighter side. Example costs [3, 2, 2, 1] -> [3, 1], [2, 2]."""
    sides, totals = ([], []), [0.0, 0.0]
    for job in sorted(jobs, key=lambda job: -job[0]):
        lighter = int(totals[1] < totals[0])
        sides[lighter].append(job)
        totals[lighter] += job[0]
    return sides


def run_jobs(jobs):  # [(cost, path, draw)] -> [Path]
    return [draw() for _, _, draw in jobs]


def draw_jobs(jobs):  # [(cost, path, draw)] -> [Path], in the order given
    """Run every drawing job, in two processes when this machine allows it."""
    if not can_fork() or len(jobs) < 2:
        return run_jobs(jobs)
    here, there = split(jobs)
    # Ctrl-C and SIGTERM wait until the fork is over: raised inside os.fork's own hooks
    # (logging's lock release after a fork), an interrupt would be printed and ignored
    with warnings.catch_warnings(), interrupts.held() as caught:
        # Python 3.12+ warns that forking a process with threads (OpenBLAS's idle pool)
        # may deadlock the child; the child only draws with matplotlib, which uses no BLAS.
        warnings.simplefilter("ignore", DeprecationWarning)
        parent, pid = os.getpid(), os.fork()
    if pid != 0 and caught:
        _stop(pid)
        raise Interrupted(caught[0])
    if pid == 0:  # the child: draw, then leave at once without running any cleanup
        code = 1
        try:
            _die_with(parent)
            run_jobs(there)
            code = 0
        finally:
            os._exit(code)
    try:
        run_jobs(here)
        _, status = os.waitpid(pid, 0)
    except BaseException:  # an error or an interrupt here: stop the child before the caller
        _stop(pid)  # (the caller throws the half-drawn files away)
        raise
    if os.waitstatus_to_exitcode(status) != 0:
        run_jobs(there)
    return [path for _, path, _ in jobs]


def _stop(pid):  # end the child now and wait for it
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def _die_with(parent):  # in the child: end when the parent ends, even by SIGKILL (Linux)
    """Otherwise a child outliving a killed run would go on writing into the stage that the
    next run removes. PR_SET_PDEATHSIG is 1; the parent may have died before it was set."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)
