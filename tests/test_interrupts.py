"""interrupts.raised: a Ctrl-C that lands where raising would be lost or harmful still stops
the command, a moment later; one that a library swallows still stops the commit.

Each case sends itself SIGINT (signal.raise_signal runs the handler at once, in the frame
that called it) and checks where Interrupted comes out.
"""

import signal
import time
import weakref

import pytest
from folders import tree

from attention_workshop import interrupts, staging
from attention_workshop.errors import Interrupted
from attention_workshop.writing import write_atomic

WAIT = 2.0  # seconds a deferred interrupt has to come back in (it comes in ~0.005)


def test_an_interrupt_inside_the_import_machinery_comes_once_out_of_it():
    """Python's import code can hold its global lock where an exception would leave it
    held (a thread importing beside the main one then waits forever): not raised there."""
    machinery = compile("import signal\nsignal.raise_signal(signal.SIGINT)\nfinished = True\n",
                        interrupts.IMPORT_MACHINERY + ">", "exec")
    space, start = {}, time.monotonic()
    with interrupts.raised(), pytest.raises(Interrupted):
        exec(machinery, space)  # the handler runs inside it, and lets it finish
        time.sleep(WAIT)  # the interrupt comes here
    assert space["finished"] and time.monotonic() - start < WAIT


def test_an_interrupt_raised_where_python_ignores_exceptions_comes_again(capsys):
    """In a weakref callback (matplotlib's transforms have many) an exception is printed
    as "Exception ignored" and dropped: the interrupt comes again instead, silently."""

    class Node:
        pass

    node, went_on, start = Node(), [], time.monotonic()
    with interrupts.raised(), pytest.raises(Interrupted):
        watch = weakref.ref(node, lambda _: signal.raise_signal(signal.SIGINT))
        del node  # the callback runs now; its Interrupted is dropped by Python
        went_on.append(watch() is None)
        time.sleep(WAIT)  # the interrupt comes again here
    assert went_on == [True] and time.monotonic() - start < WAIT
    assert capsys.readouterr().err == ""


def test_an_interrupt_a_library_swallowed_still_stops_the_commit(tmp_path):
    """Cython's generated module code ignores any error while it registers its types: a
    Ctrl-C that lands there is lost, but staging sees it was received and commits nothing."""
    folder = tmp_path / "out"
    with staging.staged(folder, "run") as stage:
        write_atomic(stage.path / "results.log", b"old\n")
    before = tree(folder)
    with interrupts.raised(), pytest.raises(Interrupted) as stopped:
        with staging.staged(folder, "run") as stage:
            write_atomic(stage.path / "results.log", b"new\n")
            try:  # a library's bare except
                signal.raise_signal(signal.SIGINT)
            except BaseException:  # noqa: B036 (what the library does)
                pass
    assert stopped.value.left == f"'{folder}' is as it was (nothing in it changed)"
    assert tree(folder) == before


# The program as a shell starts it (`python -m attention_workshop`, through runpy so that a
# hook can send the signal at a chosen moment): where -> the hook's code run at that moment
WHEN = {
    "while a command's module is imported": "import_of('attention_workshop.commands.explore')",
    "while argparse is imported": "import_of('argparse')",
    "after the command, as the process ends": "gc_freeze()",
}
PROGRAM = """
import gc, importlib.abc, os, runpy, signal, sys, time
sig, twice = getattr(signal, sys.argv[1]), sys.argv[2] == "twice"
def send():
    os.kill(os.getpid(), sig)
    if twice:
        os.kill(os.getpid(), sig)
    time.sleep(1)  # the handler runs within this second
class Hook(importlib.abc.MetaPathFinder):
    def __init__(self, name):
        self.name = name
    def find_spec(self, name, path=None, target=None):
        if name == self.name:
            sys.meta_path.remove(self)
            send()
def import_of(name):
    sys.meta_path.insert(0, Hook(name))
def gc_freeze():
    gc.freeze = send
{when}
sys.argv = ["attention-workshop", *sys.argv[3:]]
runpy.run_module("attention_workshop", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("twice", ["once", "twice"])
@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("when", WHEN)
def test_the_program_interrupted_at_any_moment_says_one_line(when, name, twice, tmp_path):
    """Once a traceback (KeyboardInterrupt in an import), a silent death by SIGTERM, or with
    two Ctrl-C in a row "Interrupted: None": now exit 128 + N and one line, every time."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", PROGRAM.format(when=WHEN[when]), name, twice,
                           "explore", "the river bank", "--out", "out"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    code = 128 + getattr(signal, name)
    left = "'out' holds the new set, complete" if when.startswith("after") else \
        "nothing was written"
    assert done.returncode == code, done.stderr
    if when.startswith("after"):  # explore's own report first, then the one line
        assert done.stderr == f"wrote out/explore_weights.png\nattention-workshop: " \
                              f"interrupted; {left}\n"
        assert done.stdout.startswith('explore "the river bank" (3 words)\n')  # flushed first
    else:
        assert done.stderr == f"attention-workshop: interrupted; {left}\n"
        assert done.stdout == "" and not (tmp_path / "out").exists()
