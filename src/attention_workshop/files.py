"""Writing output files safely: the folder is checked first, and every file is replaced atomically.

A file is written to a temporary name beside its target and renamed over it, so
an interrupted run never leaves a half-written file where a good one was.
"""

import os
import tempfile
from pathlib import Path

from attention_workshop.errors import WorkshopError

DEFAULT_OUT = "workshop-output"  # where `run` writes, and where check-lesson looks


def writable_dir(path):  # str | Path -> Path
    """Create `path` if needed and prove a file can be written there, or raise WorkshopError."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-"):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise WorkshopError(
            f"cannot write to output folder '{path}' ({reason}); choose another with --out DIR"
        ) from None
    return path


def write_atomic(path, data):  # Path, bytes | str -> Path
    """Write `data` to `path` through a temporary file and an atomic rename."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual permissions
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask():
    """The process's file-creation mask (reading it means setting it, so set it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
