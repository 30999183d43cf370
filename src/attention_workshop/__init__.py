"""attention-workshop: self-attention built from nothing, then found inside a real transformer.

The core is two small modules with no I/O: `embeddings` (the toy table) and
`attention` (softmax, scaled dot-product attention and the two toy heads).
The names a learner uses at a Python prompt or in a notebook come from here:

    from attention_workshop import embed, simple_attention, wired_attention, explore, load_model
    out, weights = simple_attention(embed("the river bank"))   # weights[2] -> bank's row
    explore("the river bank")                                   # both heads, every table
    load_model("minilm").run("the river bank")                  # a real model's attentions

Each is imported on first use, so `attention-workshop --help` imports no numpy.
"""

# Ctrl-C or SIGTERM from this first line on, while the command line starts: its one line
# and exit 128 + N, not a KeyboardInterrupt traceback from inside an import. _signal is
# built into Python and loaded at its start, and os with it: nothing is imported before
# the handler is in place (cli.py's interrupts.exit_at_once takes over, and says what stays
# out of reach).
import _signal
import os
import sys


def started_as_program():  # -> True in the process `attention-workshop` started
    """The installed script, or `python -m attention_workshop` (while Python is still
    finding the package, __main__ is not yet ours: its own command line says so). False
    where the package is imported (tests, a notebook, `python -m pytest`)."""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None) == f"{__name__}.__main__" or \
            os.path.basename(getattr(main, "__file__", None) or "") == "attention-workshop":
        return True
    options = iter(sys.orig_argv[1:])  # Python's own options, up to -m MODULE
    for option in options:
        if option == "-" or not option.startswith("-") or option.startswith("--"):
            return False  # a script (or stdin, or --help...): the rest are its arguments
        for at, flag in enumerate(option[1:], 2):  # a cluster of flags: -Im MODULE, -Xdev
            if flag in "cmWX":  # these take a value: the rest of the cluster, or the next
                value = option[at:] or next(options, "")
                if flag in "cm":
                    return flag == "m" and value == __name__
                break
    return False


def _interrupted_at_start(signum, frame):  # the words of interrupts.exit_at_once
    try:
        os.write(2, b"attention-workshop: interrupted; nothing was written\n")
    except OSError:  # standard error closed: the exit code still says it
        pass
    os._exit(128 + signum)


if started_as_program():
    for _number in (_signal.SIGINT, _signal.SIGTERM):
        _signal.signal(_number, _interrupted_at_start)

import importlib  # noqa: E402

__version__ = "0.1.0"

# name -> the module that defines it
_EXPORTS = {
    "AXES": ".embeddings", "EMBED": ".embeddings", "SENT_RIVER": ".embeddings",
    "SENT_MONEY": ".embeddings", "embed": ".embeddings",
    "softmax": ".attention", "causal_mask": ".attention",
    "scaled_dot_product_attention": ".attention", "simple_attention": ".attention",
    "W_Q_WIRED": ".attention", "W_K_WIRED": ".attention", "wired_attention": ".attention",
    "explore": ".explore.compute", "Options": ".explore.compute",
    "load_model": ".real",
}
__all__ = list(_EXPORTS)

# The subpackage attention_workshop.explore shares its name with the function explore. Import
# it now (its __init__ imports nothing heavy) and drop the name the import system bound to it,
# so `attention_workshop.explore` is the function, whatever is imported later:
# `from attention_workshop.explore import positions` still finds the subpackage in sys.modules.
from attention_workshop import explore as _explore_package  # noqa: E402, F401

globals().pop("explore")


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value  # looked up once
    return value


def __dir__():
    return sorted([*globals(), *_EXPORTS])
