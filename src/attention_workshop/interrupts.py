"""Ctrl-C (SIGINT) and SIGTERM: how the command line turns them into one clean line, and how
a commit holds them off until it is over.

Python raises KeyboardInterrupt wherever the main thread is when Ctrl-C comes. Inside the
import of a C extension (numpy's) it can surface as an ImportError instead, or be swallowed
(Cython's generated code ignores any error registering its memoryview type), so the
handler installed by `raised` also takes note: `seen()` then tells the caller that an
interrupt, not a broken install, stopped the command, and staging checks it once more
before a commit. Where raising would be lost or harmful (Python's own import code, where
ignored exceptions go), the signal is sent again a moment later.

Outside `raised` (while the command line is still being imported and parsed, and once the
command is over), the program's process exits at once on either signal, saying in one line
what it had left (`exit_at_once`): nothing is half done then, so there is nothing to clean
up. The line is said once (`reported`): a second Ctrl-C as the first is being reported
adds nothing.
"""

import contextlib
import os
import signal
import sys
import threading

from attention_workshop.errors import Interrupted

IMPORT_MACHINERY = "<frozen importlib._bootstrap"  # the file name of Python's import code
RETRY = 0.005  # seconds before an interrupt deferred out of the import machinery comes again

SIGNALS = ("SIGINT", "SIGTERM")
_seen = []  # the signals `raised`'s handler received, first first
_noted = []  # what the command has left behind so far (staging notes each commit)
_armed = []  # non-empty while `raised` is in force: a deferred interrupt may come again
_reported = []  # the signal the command line said it was interrupted by, once said


@contextlib.contextmanager
def raised():
    """Within the block, SIGINT and SIGTERM raise errors.Interrupted (SIGTERM too: `kill PID`,
    a CI timeout), so `finally` blocks run and a half-built output set is cleaned away; the
    previous handlers come back after. Outside the main thread nothing changes."""

    def interrupt(signum, frame):
        _seen.append(signum)
        if frame is not None and frame.f_code.co_filename.startswith(IMPORT_MACHINERY):
            _again(signum)  # see below: raising here could leave Python's import lock held
            return
        raise Interrupted(signum)

    def unraisable(info):  # raised where Python ignores exceptions: a weakref callback,
        if isinstance(info.exc_value, Interrupted):  # a __del__, os.fork's hooks
            _again(info.exc_value.signum)  # comes again, instead of a message and no effect
        else:
            previous(info)

    _seen.clear()
    _noted.clear()
    _reported.clear()
    _armed[:] = [True]
    previous, sys.unraisablehook = sys.unraisablehook, unraisable
    try:
        with _handlers(interrupt):
            yield
    finally:  # what was noted stays: an interrupt after the command says what it left
        sys.unraisablehook = previous
        _armed.clear()
        _seen.clear()


def _again(signum):
    """Send `signum` to this process again in a moment. An exception raised inside Python's
    own import code (between its lock's acquire and the `try` that releases it, or in a
    callback whose exceptions are ignored) can leave the global import lock held: the
    interrupt was lost, and the thread that imports matplotlib beside the modules
    (figures.preload) waited on that lock forever. The signal comes again, through
    whichever handler is in place then, until it lands outside the import code."""
    threading.Timer(RETRY, _resend, (signum,)).start()


def _resend(signum):  # in the timer's thread; once `raised` has ended there is nothing to stop
    if _armed:
        os.kill(os.getpid(), signum)


def seen():  # -> the first signal `raised` received, or None
    return _seen[0] if _seen else None


def note(left):  # what an interrupt from now on leaves behind, e.g. "'out' holds the new set"
    from attention_workshop.reading import printable  # escaped now, not in a handler

    _noted[:] = [printable(left)]


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


def report(say, signum):  # say(): prints the one line -> the exit code, 128 + the first signal
    """The command line's "interrupted" line, said once whatever comes while it is said."""
    with held():
        if not _reported:
            say()
            _reported.append(int(signum))
    return 128 + _reported[0]


def running_as_program():
    """True in the process the command line was started as (the installed script, or
    `python -m attention_workshop`); False where it is imported (tests, a notebook). The
    package's first lines ask the same, to install their own handler before any import."""
    from attention_workshop import started_as_program

    return started_as_program()


def exit_at_once(program):  # install: Ctrl-C or SIGTERM ends the process with one line
    """Until `raised` takes over, and after it: exit 128 + N at once, after the line
    "PROGRAM: interrupted; what was left" (what `note` last said, else nothing written),
    unless the command line had already said it. Only os.write and os._exit run here: the
    signal may come in the middle of an import."""

    def now(signum, frame):
        if not _reported:
            _reported.append(signum)
            with contextlib.suppress(Exception):  # what was printed so far still goes out
                sys.stdout.flush()
            left = noted() or "nothing was written"
            with contextlib.suppress(OSError):
                os.write(2, f"{program}: interrupted; {left}\n".encode("utf-8", "replace"))
        os._exit(128 + _reported[0])

    for name in SIGNALS:
        signal.signal(getattr(signal, name), now)
