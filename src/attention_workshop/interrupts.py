"""Ctrl-C (SIGINT) and SIGTERM: how the command line turns them into one clean line, and how
a commit holds them off until it is over.

Python raises KeyboardInterrupt wherever the main thread is when Ctrl-C comes. Inside the
import of a C extension (numpy's) it can surface as an ImportError instead, so the handler
installed by `raised` also takes note: `seen()` then tells the caller that an interrupt,
not a broken install, stopped the command.
"""

import contextlib
import signal

from attention_workshop.errors import Interrupted

SIGNALS = ("SIGINT", "SIGTERM")
_seen = []  # the signals `raised`'s handler received, first first
_noted = []  # what the command has left behind so far (staging notes each commit)


@contextlib.contextmanager
def raised():
    """Within the block, SIGINT and SIGTERM raise errors.Interrupted (SIGTERM too: `kill PID`,
    a CI timeout), so `finally` blocks run and a half-built output set is cleaned away; the
    previous handlers come back after. Outside the main thread nothing changes."""

    def interrupt(signum, frame):
        _seen.append(signum)
        raise Interrupted(signum)

    _seen.clear()
    _noted.clear()
    try:
        with _handlers(interrupt):
            yield
    finally:
        _seen.clear()
        _noted.clear()


def seen():  # -> the first signal `raised` received, or None
    return _seen[0] if _seen else None


def note(left):  # what an interrupt from now on leaves behind, e.g. "'out' holds the new set"
    _noted[:] = [left]


def noted():  # -> the last note, or None: nothing was written yet
    return _noted[-1] if _noted else None


@contextlib.contextmanager
def held():  # -> list of the signals that came while held, first first
    """Ctrl-C and SIGTERM wait until the block ends: Python runs handlers in the main thread,
    so handlers that only take note keep the block whole, whichever thread the signal
    reached (numpy's BLAS threads among them)."""
    caught = []
    with _handlers(lambda signum, frame: caught.append(signum)):
        yield caught


@contextlib.contextmanager
def _handlers(handler):
    saved = {}
    try:
        for name in SIGNALS:
            number = getattr(signal, name)
            saved[number] = signal.signal(number, handler)
    except ValueError:  # not the main thread: signals cannot be caught here
        pass
    try:
        yield
    finally:
        for number, previous in saved.items():
            signal.signal(number, previous)
