"""Which files each command last wrote into an output folder, and what it wrote: the hidden
NAME file in it.

    {"run": {"bank_split.png": {"bytes": 51234, "sha256": "9f2c..."}, ...},
     "explore": {"explore_weights.png": {...}}}

staging.py reads it to know a command's previous set (the files its new set replaces as a
whole), and writes the new list with every commit. It is read through reading.py, like any
file a user could have edited; one that does not look like this is taken as empty (no
file is then ours: none is replaced or removed). A file is replaced (`ours`) or removed
with the previous set only if it is still what was written (`matches`: same size, same
SHA-256): a file the learner saved over it, or a name a copied list claims, is kept. An
older list of names alone ({"run": ["results.log"]}) makes no file ours.
"""

import hashlib
import json
import os
import stat

from attention_workshop.errors import WorkshopError

NAME = ".attention-workshop.json"
REMOVALS = ".removals.json"  # inside a stage being committed: the previous set's extra files


def read(folder):  # Path -> {command: {file name: fingerprint, or None if not recorded}}
    """Example: after `run --out out`, sorted(read(Path("out"))["run"]) -> ["bank_split.png",
    ...]."""
    sets = _read_json(folder / NAME)
    if not isinstance(sets, dict):
        return {}
    return {command: files for command, files in ((c, _files(f)) for c, f in sets.items())
            if files is not None}


def write(stage, sets):  # Path, {command: {file name: fingerprint}} -> None
    (stage / NAME).write_text(json.dumps(sets, indent=1, sort_keys=True) + "\n",
                              encoding="utf-8")


def fingerprint(path):  # a file we wrote -> {"bytes": size, "sha256": hex digest}
    with open(path, "rb") as f:
        return {"bytes": os.fstat(f.fileno()).st_size, "sha256": hashlib.file_digest(
            f, "sha256").hexdigest()}


def matches(path, recorded):  # -> True if `path` is a regular file, still what was recorded
    """Example: a results.log the learner edited since `run` wrote it -> False."""
    if not isinstance(recorded, dict):
        return False
    try:
        info = os.lstat(path)
        return stat.S_ISREG(info.st_mode) and info.st_size == recorded.get("bytes") and \
            fingerprint(path) == recorded
    except OSError:
        return False


def ours(path, sets):  # -> True if `path` is a file some command's set still holds as written
    """A file of that name that no list holds, or that changed since (a learner's own page,
    a link), is not ours to replace. Example: results.log after `run`, untouched -> True;
    the same after the learner added a line -> False."""
    return any(matches(path, files.get(os.path.basename(path))) for files in sets.values())


def write_removals(stage, files):  # {file name: fingerprint}
    (stage / REMOVALS).write_text(json.dumps(files), encoding="utf-8")


def read_removals(stage):  # -> {file name: fingerprint}; a damaged list removes nothing
    return _files(_read_json(stage / REMOVALS)) or {}


def _files(files):  # a command's entry -> {name: fingerprint | None}, or None if malformed
    if isinstance(files, list) and all(map(is_plain_name, files)):
        return dict.fromkeys(files)  # an older list: names without fingerprints
    if isinstance(files, dict) and all(map(is_plain_name, files)):
        return {name: fp if _is_fingerprint(fp) else None for name, fp in files.items()}
    return None


def _is_fingerprint(fp):
    return isinstance(fp, dict) and type(fp.get("bytes")) is int and \
        isinstance(fp.get("sha256"), str)


def is_plain_name(name):
    """A file name in the folder itself: never a path, never hidden (so never our own files).
    Example: "results.log" -> True; "../x", ".attention-workshop.json" -> False."""
    return (isinstance(name, str) and name == name.strip() and name not in ("", ".", "..")
            and not name.startswith(".") and "/" not in name and "\\" not in name
            and "\0" not in name)


def _read_json(path):
    from attention_workshop.reading import read_json

    try:
        return read_json(path, "file list", "it is rewritten by the next run")
    except WorkshopError:  # missing or damaged: no previous set is known
        return None
