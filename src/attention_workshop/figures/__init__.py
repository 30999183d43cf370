"""Every figure the workshop draws, with matplotlib's Agg backend (no screen needed).

Each figure file listed in FILES declares its figures in a dict FIGURES:

    FIGURES = {"bank_split.png": Drawing(reads=(module1.Result,), cost=0.3, draw=bank_split,
                                         about="Module 1 (log 45-49): bank's lookup point ...")}

`draw(*results, path)` gets the modules' results named in `reads`, in that order (then those
named in `optional`, or None for a module that did not run), and writes `path`; `cost` is a
rough draw time in seconds, for sharing the work between two processes (`parallel`); `about`
is one line for `run` to print: what the file shows, and the lesson section (module,
results.log lines: "log 75-80" for Modules 0-2, counted in the section from Module 3 on,
"log [S7] lines 6-19") it goes with. `run` draws every figure whose modules have run (so
`--no-real` draws none of Module 3's). This file imports nothing heavy; matplotlib loads
with the figure files.
"""

import importlib
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# figure files under figures/, in the order their figures are drawn (explorer: the HTML page)
FILES = ("toy", "encoder", "decoder", "interventions", "sinks", "training", "explorer")
FORMATS = ("png", "svg", "pdf")  # a figure's file formats (canvas.save), PNG the default


@dataclass(frozen=True)
class Drawing:
    reads: tuple  # the Result classes whose results `draw` takes, e.g. (module1.Result,)
    cost: float  # rough seconds to draw
    draw: Callable  # draw(*results, path) -> path
    optional: tuple = ()  # Result classes passed after `reads` when present, else None
    about: str = ""  # what it shows and which lesson section it belongs to, in one line

    def ready(self, results):  # {Result class: Result} -> bool
        return all(kind in results for kind in self.reads)

    def __call__(self, results, path):
        return self.draw(*(results[kind] for kind in self.reads),
                         *(results.get(kind) for kind in self.optional), path)


def registry():  # -> {file name: Drawing}, every figure file's FIGURES in the order of FILES
    figures = {}
    for name in FILES:
        figures.update(importlib.import_module(f"{__name__}.{name}").FIGURES)
    return figures


def preload():  # -> the Thread importing the figure files (matplotlib)
    """Import the figure files in a background thread while the caller computes: matplotlib's
    import (~0.35 s of Python) then overlaps the modules' numpy work (random draws, matrix
    products, Module 3's weights), which runs without holding Python's lock. draw_all waits
    for the thread to end before it draws (and forks)."""

    def load():
        try:
            registry()
        except Exception:  # a failed import is reported by draw_all's own import, once
            return

    thread = threading.Thread(target=load, name="import matplotlib", daemon=True)
    thread.start()
    return thread


def about(name, skipped=()):  # file name, Result classes not run -> its one line, or ""
    """What the file shows. A drawing made without one of its optional results names only
    the modules it drew from: explorer.html after `run --no-real` is "Modules 1-2 and 6: ...",
    not "Modules 1-6: ...". Example: about("scaling.png") -> 'Module 2, [S5] (log 75-80): ...'."""
    drawing = registry().get(Path(name).stem + ".png") or registry().get(name)
    if not drawing:
        return ""
    if not any(kind in skipped for kind in drawing.optional):
        return drawing.about
    match = re.match(r"Modules (\d+)-\d+", drawing.about)
    if not match:
        return drawing.about
    first, last = int(match[1]), max(module_number(kind) for kind in drawing.reads)
    drawn = {*range(first, last + 1),
             *(module_number(kind) for kind in drawing.optional if kind not in skipped)}
    return modules_named(drawn) + drawing.about[match.end():]


def modules_named(numbers):  # {module numbers} -> "Module 2" | "Modules 1-2 and 6"
    """Example: {1, 2, 6} -> "Modules 1-2 and 6"; {1, 2, 3, 4, 5, 6} -> "Modules 1-6"."""
    runs, ordered = [], sorted(numbers)
    for n in ordered:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    names = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs]
    head = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
    return f"Module {head}" if len(ordered) == 1 else f"Modules {head}"


def module_number(kind):  # a Result class -> its module's number (module2.Result -> 2)
    return int(kind.__module__.rpartition(".module")[2])


def draw_all(results, out, preloading=None, fmt="png"):  # {Result class: Result}, Path -> [Path]
    """Draw every figure whose results are present into folder `out`; return the paths.
    `preloading`: the thread preload() returned, if any: it ends before the drawing starts.
    `fmt`: "png", "svg" or "pdf", the format of the figures (scaling.png -> scaling.svg);
    the HTML pages stay HTML."""
    from attention_workshop.figures import parallel

    if preloading is not None:
        preloading.join()

    jobs = [(drawing.cost, path, lambda drawing=drawing, path=path: drawing(results, path))
            for name, drawing in registry().items() if drawing.ready(results)
            for path in [out / (Path(name).stem + f".{fmt}" if name.endswith(".png") else name)]]
    return parallel.draw_jobs(jobs)
