"""Writing output files safely: every file is replaced atomically.

A file is written to a temporary name beside its target and renamed over it, so
an interrupted run never leaves a half-written file where a good one was. A command's
whole set of files goes through staging.py, which checks the folder first, builds the set
apart and swaps it in at once; `cannot_write_folder` is its one wording for a folder that
cannot be written.
"""

import os
import tempfile
from pathlib import Path

from attention_workshop.errors import WorkshopError

DEFAULT_OUT = "workshop-output"  # where `run` writes, and where check-lesson looks
OUT_TODO = "choose another with --out DIR"  # what to do when an --out folder cannot be written


def cannot_write_folder(path, exc, todo=OUT_TODO):  # Path, OSError -> WorkshopError
    """Example: "cannot write to output folder 'out' (Permission denied); choose another with
    --out DIR"."""
    reason = exc.strerror or str(exc)
    return WorkshopError(f"cannot write to output folder '{path}' ({reason}); {todo}")


def write_atomic(path, data):  # Path, bytes | str -> Path
    """Write `data` to `path` through a temporary file and an atomic rename.

    An OSError names `path` itself (not the temporary file), so a message can show it."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:80]}.", suffix=".tmp")
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual permissions
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
    return path


def _umask():
    """The process's file-creation mask (reading it means setting it, so set it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
