"""Draw some toy figures in a second Python process while the first computes and draws the rest.

Drawing is matplotlib-bound and single-threaded, so on a machine with two or more
cores a second process cuts `run`'s wall time. The child writes into a hidden
staging folder; its files are moved into place only after the run succeeded, so a
failed run overwrites nothing. If the child fails, the parent draws those figures itself.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


class BackgroundFigures:
    """Start at once; `finish(results, out)` returns the final paths; `cancel()` always."""

    def __init__(self, out, names):
        self.names = tuple(names)
        self.staging = Path(tempfile.mkdtemp(dir=out, prefix=".figures-"))
        cmd = [sys.executable, "-m", "attention_workshop.figures", str(self.staging), *self.names]
        self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)

    def finish(self, results, out):  # dict, Path -> list[Path]
        """Wait for the child and move its figures into `out`; draw them here if it failed."""
        staged = [self.staging / f"{name}.png" for name in self.names]
        if self.process.wait() != 0 or not all(p.exists() for p in staged):
            from attention_workshop.figures import toy

            return toy.draw_all(results, out, self.names)
        final = []
        for path in staged:
            os.replace(path, out / path.name)
            final.append(out / path.name)
        return final

    def cancel(self):
        """Stop the child if it still runs and remove the staging folder."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.staging, ignore_errors=True)
