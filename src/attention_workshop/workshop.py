"""Run every module in order: compute and log, then write results.log and draw the figures.

The log is written once, atomically, after every module has finished, so an
interrupted run leaves the previous results.log untouched.
"""

from pathlib import Path

from attention_workshop import modules as registry
from attention_workshop.errors import WorkshopError
from attention_workshop.files import writable_dir, write_atomic
from attention_workshop.report import Log


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


def run_workshop(out_dir, figures=True, real=True, say=print):
    """Write out_dir/results.log and (unless figures=False) the PNG figures; return their paths.

    real=False skips the modules that load a pretrained model (NEEDS_REAL: Module 3). Files
    are written only after every module has succeeded, each one atomically.
    """
    created = not Path(out_dir).exists()
    out = writable_dir(out_dir)
    try:
        log = Log()
        results = compute(log, real=real)
        written = [write_atomic(out / "results.log", log.text())]
        say(f"wrote {written[0]} ({len(log.lines)} lines)")
        if figures:
            from attention_workshop import figures as fig  # matplotlib only when drawing

            for path in fig.draw_all(results, out):
                say(f"wrote {path}")
                written.append(path)
        return written
    except BaseException:
        if created and not any(out.iterdir()):
            out.rmdir()  # a failed run leaves no trace, not even the folder it made
        raise
