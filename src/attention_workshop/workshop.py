"""Run every module in order: compute and log, then write results.log and draw the figures.

Nothing is written until every module has finished, and then the whole set (the log and
the figures) is built apart and swapped in at once (staging.py): an interrupted or failed
run leaves the previous results.log and figures byte for byte as they were.
"""

from attention_workshop import modules as registry
from attention_workshop.errors import WorkshopError
from attention_workshop.reading import printable  # paths in messages: one line
from attention_workshop.report import Log
from attention_workshop.writing import OUT_TODO, write_atomic


def compute(log, real=False, modules=None, missing=None):
    """Run the modules (default: every one in modules.MODULES) in order into `log`.

    Returns {Result class: Result}. real=False skips the modules with NEEDS_REAL. `missing`,
    if given, is called as missing(module, error) when such a module cannot load its model
    (a WorkshopError), and the run goes on without it; otherwise the error propagates.
    Example: compute(Log())[module1.Result].weights_river[2] -> [0.185, 0.317, 0.498].
    """
    results = {}
    for module in registry.load() if modules is None else modules:
        if registry.needs_real(module) and not real:
            continue
        try:
            registry.run_module(module, log, results)
        except WorkshopError as exc:
            if missing is None or not registry.needs_real(module):
                raise
            missing(module, exc)
    return results


def run_workshop(out_dir, figures=True, real=True, say=print, todo=OUT_TODO, figure_format="png"):
    """Write out_dir/results.log and (unless figures=False) the figures (PNG, or
    figure_format "svg" or "pdf"); return their paths.

    real=False skips the modules that load a pretrained model (NEEDS_REAL: Module 3). The
    folder is checked first; the files are staged while the modules run and swapped in as one
    set once all of them have succeeded: `run`'s previous set is replaced whole, and files
    of an earlier run that this one does not write (with --no-real, --no-figures) are removed.
    `todo` ends the message when the folder cannot be written.
    """
    from attention_workshop.staging import staged

    with staged(out_dir, "run", todo, expect=("results.log",)) as stage:  # checked first
        preloading = None
        if figures:  # matplotlib only when drawing: imported while the modules compute
            from attention_workshop import figures as fig

            preloading = fig.preload()
        try:
            log = Log()
            results = compute(log, real=real)
            paths = [write_atomic(stage.path / "results.log", log.text())]
            if figures:
                paths += fig.draw_all(results, stage.path, preloading, figure_format)
        finally:  # after an error or an interrupt too: the process never ends mid-import
            if preloading is not None:
                preloading.join(timeout=10)
    written = [stage.final(path) for path in paths]
    say(f"wrote {printable(written[0])} ({len(log.lines)} lines)")
    for path in written[1:]:
        say(f"wrote {printable(path)}")
    for path in stage.removed:
        say(f"removed {printable(path)} (an earlier run wrote it; this one did not)")
    return written
