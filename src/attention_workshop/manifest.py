"""Which files each command last wrote into an output folder: the hidden NAME file in it.

    {"run": ["bank_split.png", "results.log", ...], "explore": ["explore_weights.png"]}

staging.py reads it to know a command's previous set (the files its new set replaces as a
whole), and writes the new list with every commit. It is read through userfiles, like any
file a user could have edited; one that does not look like this is taken as empty (the
files of the previous set are then replaced by name, and none is removed).
"""

import json

from attention_workshop.errors import WorkshopError

NAME = ".attention-workshop.json"
REMOVALS = ".removals.json"  # inside a stage being committed: the previous set's extra files


def read(folder):  # Path -> {command: [file name]}
    """Example: after `run --out out`, read(Path("out"))["run"] -> ["bank_split.png", ...]."""
    sets = _read_json(folder / NAME)
    if not isinstance(sets, dict):
        return {}
    return {command: names for command, names in sets.items()
            if isinstance(names, list) and all(map(is_plain_name, names))}


def write(stage, sets):  # Path, {command: [file name]} -> None
    (stage / NAME).write_text(json.dumps(sets, indent=1, sort_keys=True) + "\n",
                              encoding="utf-8")


def write_removals(stage, names):
    (stage / REMOVALS).write_text(json.dumps(names), encoding="utf-8")


def read_removals(stage):  # -> [file name]; a damaged list removes nothing
    names = _read_json(stage / REMOVALS)
    return names if isinstance(names, list) and all(map(is_plain_name, names)) else []


def is_plain_name(name):
    """A file name in the folder itself: never a path, never hidden (so never our own files).
    Example: "results.log" -> True; "../x", ".attention-workshop.json" -> False."""
    return (isinstance(name, str) and name == name.strip() and name not in ("", ".", "..")
            and not name.startswith(".") and "/" not in name and "\\" not in name
            and "\0" not in name)


def _read_json(path):
    from attention_workshop.userfiles import read_json

    try:
        return read_json(path, "file list", "it is rewritten by the next run")
    except WorkshopError:  # missing or damaged: no previous set is known
        return None
