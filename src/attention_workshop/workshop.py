"""Run every module in order: compute and log, then write results.log and draw the figures.

The log is written once, atomically, after every module has finished, so an
interrupted run leaves the previous results.log untouched.
"""

from pathlib import Path

from attention_workshop.files import writable_dir, write_atomic
from attention_workshop.modules import module0, module1, module2
from attention_workshop.report import Log


def compute(log, real=False):
    """Run Modules 0-2 (and Module 3 if `real`) into `log`; return results for the figures."""
    results = {"m0": module0.run(log)}
    results["m1"] = module1.run(log)
    results["m2"] = module2.run_wired(log, results["m1"])
    results["s5"] = module2.run_scaling(log)
    if real:
        from attention_workshop.modules import module3  # loads a real model: only when asked

        results["m3"] = module3.run(log)
    return results


def run_workshop(out_dir, figures=True, real=True, say=print):
    """Write out_dir/results.log and (unless figures=False) the PNG figures; return their paths.

    real=False skips Module 3 (the pretrained model). Files are written only after every
    module has succeeded, each one atomically.
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
