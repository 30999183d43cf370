"""The command line: `attention-workshop COMMAND ...`, also `python -m attention_workshop`.

Bad input becomes one line on stderr and exit code 2, never a traceback. Every message
goes out through `reading.printable`: a newline, an escape sequence or a byte that was not
UTF-8 in a path, a word or a module name shows escaped (\\n, \\x1b, \\xe9), on the one line.

Ctrl-C and SIGTERM, at any moment, end the program with one line and exit 128 + N (130,
143): from the package's first line (attention_workshop/__init__.py installs a handler
before it imports anything; `interrupts.exit_at_once` takes over here) while nothing is under
way; within a command through `interrupts.raised`, which cleans up first; and once the line
is said, or the command is over, a signal during the interpreter's own exit is ignored (its
exit code stands). Out of reach: Python's own start and the script's `import re` before our
first line (~20 ms): a signal then ends the process as the signal does (before Python has
installed its handler: silently, by the signal; after: Python's KeyboardInterrupt).

Memory: a MemoryError anywhere in a command (numpy's names the size it asked for) is one
line, exit 2, and the output folder is as it was (staging removes the stage on the way out).
"""

import atexit
import contextlib
import errno
import functools
import gc
import importlib
import os
import signal
import sys

from attention_workshop import interrupts
from attention_workshop.errors import Interrupted, WorkshopError

PROG = "attention-workshop"
if interrupts.running_as_program():
    interrupts.exit_at_once(PROG)

# subcommand -> module under attention_workshop.commands
COMMANDS = {
    "run": "run",
    "explore": "explore",
    "quiz": "quiz",
    "real": "real",
    "explorer": "explorer_page",  # writes explorer.html (explore.py prints a sentence's heads)
    "check-lesson": "check_lesson",
    "heads": "heads",
    "generate": "generate",
    "ablate": "ablate",
    "train": "train",
}


@functools.cache
def _parser_class():  # argparse is imported here, not first thing: see the top
    import argparse

    class Parser(argparse.ArgumentParser):
        """argparse, but a usage error is a single line that says where help is."""

        def error(self, message):
            from attention_workshop.reading import printable

            self.exit(2, f"{self.prog}: error: {printable(message)} (see '{self.prog} "
                         "--help')\n")

    return Parser


def build_parser(command=None):  # -> the parser of every command, or of `command` alone
    """With `command` (a key of COMMANDS) only that command's module is imported and given
    its arguments; the others are names only (a cold `real` has no use for run's, explore's or
    quiz's modules: docs/benchmarks.md). `--help` and unknown names get the full parser."""
    parser = _parser_class()(
        prog=PROG,
        description="Build self-attention from nothing, then see it inside a real transformer.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_parser_class())
    sub.required = True
    for name, module_name in COMMANDS.items():
        if command is not None and name != command:
            sub.add_parser(name)  # never chosen: argv names `command`
            continue
        module = importlib.import_module(f"attention_workshop.commands.{module_name}")
        text = module.HELP() if callable(module.HELP) else module.HELP
        command_parser = sub.add_parser(name, help=text, description=text)
        module.add_arguments(command_parser)
        command_parser.set_defaults(handler=module.main)
    return parser


def command_named(argv):  # argument list -> the command it names first, or None
    """Example: ["real", "the river bank"] -> "real"; ["--help"] -> None."""
    return argv[0] if argv and argv[0] in COMMANDS else None


def program():  # the `attention-workshop` script and `python -m attention_workshop`
    """main() on this process's own arguments, for a process that exits right after.

    The process's surroundings are made safe first (`_surroundings`): standard output writes
    what its encoding cannot hold as escapes, a standard output that cannot be written (a
    full disk, /dev/full) is one error line, and MPLBACKEND is dropped (a bad value stopped
    matplotlib's import; the figures are drawn to files, by Agg, whatever it names).

    Python's exit visits every object left for its cycle collector first (~0.1 s once numpy
    and matplotlib are loaded, longer than drawing a small figure); the process's end frees
    them all anyway, so they are frozen out of its sight (gc.freeze). No cleanup is skipped:
    files, the output folder and the drawing process are closed and waited for by then."""
    closed = _surroundings()
    if closed:  # nothing is done that could not be reported
        _say_error(closed)
        return 2
    code = main()
    try:
        sys.stdout.flush()
    except WorkshopError as exc:  # what was left in the buffer could not be written either
        _say_error(exc)
        code = 2
    except BrokenPipeError:
        code = 1
    gc.freeze()
    # the exit code is decided: a signal while the interpreter ends (after Python has put
    # its default handlers back) would kill the process after its line was said
    atexit.register(_deaf)
    return code


def _deaf():  # atexit, after the threads are joined: SIGINT and SIGTERM ignored to the end
    for name in interrupts.SIGNALS:
        signal.signal(getattr(signal, name), signal.SIG_IGN)


def _surroundings():  # -> a WorkshopError if standard output is closed, else None
    """The three standard streams: a closed one (`>&-`) is /dev/null, so no file the command
    opens can take its number (a message would be written into it). Standard input closed
    reads as empty (the quiz stops); standard error closed or full loses the messages, not
    the exit code; standard output closed is refused before anything is done."""
    os.environ.pop("MPLBACKEND", None)
    closed = [name for name in ("stdin", "stdout", "stderr") if getattr(sys, name) is None]
    for number, name in enumerate(("stdin", "stdout", "stderr")):
        if name in closed:
            fd = os.open(os.devnull, os.O_RDONLY if number == 0 else os.O_WRONLY)
            if fd != number:
                os.dup2(fd, number)
                os.close(fd)
            setattr(sys, name, open(number, "r" if number == 0 else "w", closefd=False))
    if hasattr(sys.stdout, "reconfigure"):  # PYTHONIOENCODING=ascii: "caf\\xe9", no crash
        sys.stdout.reconfigure(errors="backslashreplace")
    sys.stdout = _Output(sys.stdout)
    sys.stderr = _Messages(sys.stderr)
    if "stdout" in closed:
        return WorkshopError("standard output is closed (>&-), so nothing could be shown; "
                             "send it somewhere, e.g. > out.txt or > /dev/null")
    return None


class _Output:
    """sys.stdout, whose write errors are one WorkshopError: "cannot write to standard output
    (No space left on device); ...". Once one fails, the rest goes to /dev/null (so the
    interpreter's last flush stays silent). A closed pipe stays BrokenPipeError (`| head`)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        return self._guarded(self._stream.write, text)

    def flush(self):
        return self._guarded(self._stream.flush)

    def _guarded(self, call, *args):
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())
            full = "free some space, or " if exc.errno in (errno.ENOSPC, errno.EDQUOT) else ""
            raise WorkshopError(f"cannot write to standard output ({exc.strerror or exc}); "
                                f"{full}send the output elsewhere") from None

    def __getattr__(self, name):  # isatty, encoding, fileno, buffer: the stream's own
        return getattr(self._stream, name)


class _Messages(_Output):
    """sys.stderr: a message that cannot be written (2>/dev/full, a closed pipe) is dropped;
    there is nowhere left to say so, and the exit code still tells."""

    def _guarded(self, call, *args):
        try:
            return call(*args)
        except (OSError, ValueError):
            return None


def _say_error(exc):
    from attention_workshop.reading import printable

    print(f"{PROG}: error: {printable(exc)}", file=sys.stderr)


def main(argv=None):
    """Entry point; returns the exit code (0 ok, 2 bad input, 128 + N after signal N)."""
    argv = sys.argv[1:] if argv is None else [str(arg) for arg in argv]
    parser = build_parser(command_named(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2), already printed
        return exc.code
    try:
        return _handled(args)
    except KeyboardInterrupt as exc:  # a second Ctrl-C while the first was being handled
        return _interrupted(exc)


def _handled(args):  # the command, under interrupts.raised -> its exit code
    with interrupts.raised():
        try:
            if getattr(args, "out", None) == "":  # Path("") is the current folder
                raise WorkshopError("--out '' names no folder; give one, e.g. --out "
                                    "workshop-output")
            return args.handler(args)
        except WorkshopError as exc:
            _say_error(exc)
            return 2
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM; Interrupted says what it left
            return _interrupted(exc)
        except BrokenPipeError:  # the reader stopped early (e.g. `| head`): nothing more to say
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
        except MemoryError as exc:  # numpy's names the size; the stage is gone by now
            _say_error(WorkshopError(_out_of_memory(exc)))
            return 2
        except Exception:
            if interrupts.seen() is None:
                raise
            # an interrupt inside an import (numpy's C code) can surface as an ImportError
            return _interrupted(Interrupted(interrupts.seen()))


def _out_of_memory(exc):  # a MemoryError -> the one line's text
    """Example: numpy's "Unable to allocate 2.00 GiB for an array with shape (536870912,) and
    data type float32" -> "out of memory: unable to allocate 2.00 GiB for an array with shape
    (536870912,) and data type float32; free some memory (or raise ulimit -v), or ask for
    less"."""
    said = " ".join(str(exc).split())
    said = said[:1].lower() + said[1:] if said else "the process could not get more memory"
    return f"out of memory: {said}; free some memory (or raise ulimit -v), or ask for less"


def _interrupted(exc):  # a KeyboardInterrupt (Interrupted: its signal, what it left) -> code
    """One line, said once (a second interrupt while it is said adds nothing): what the
    interrupt left, else what the command had done by then (interrupts.noted)."""
    from attention_workshop.reading import printable

    left = getattr(exc, "left", None) or interrupts.noted() or "nothing was written"
    return interrupts.report(lambda: print(f"{PROG}: interrupted; {printable(left)}",
                                           file=sys.stderr),
                             getattr(exc, "signum", signal.SIGINT))
