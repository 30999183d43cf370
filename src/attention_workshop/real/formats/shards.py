"""A model's weights: one model.safetensors, or shards that model.safetensors.index.json lists.

The index is Hugging Face's: {"weight_map": {tensor name: shard file name}, ...}. Every shard
must be a file inside the model folder (no "..", no absolute path, no symlink out of it),
and a tensor may live in one shard only. Nothing is loaded here: each shard's header is read
and its bytes mapped (safetensors_file.py).

Example: stored_tensors(folder / "model.safetensors.index.json")["model.norm.weight"].shape
-> (576,), from whichever shard holds it.
"""

import errno
from pathlib import Path

from attention_workshop.errors import WorkshopError
from attention_workshop.reading import (
    UnreadablePath,
    os_reason,
    path_kind,
    printable,
    read_json,
    refuse,
    stat_kind,
)
from attention_workshop.real.formats.folder_checks import TODO

SINGLE = "model.safetensors"
INDEX = "model.safetensors.index.json"


def weights_file(folder):  # Path -> the single file, or the index of the shards
    folder = Path(folder)
    return folder / SINGLE if path_kind(folder / SINGLE, "model weights") == "file" \
        else folder / INDEX


def stored_tensors(path):  # Path of a .safetensors or of an index -> {name: Stored}
    if path.name != INDEX:
        return one_file(path)
    shards = shard_map(path)
    merged = ShardTensors()
    owner = {}
    for shard in sorted(set(shards.values())):
        for name, stored in one_file(shard).items():
            if name in owner:
                raise refuse("model weights", path, f"tensor '{printable(name, 80)}' is in two "
                             f"shards ({owner[name].name} and {shard.name})", TODO)
            owner[name] = shard
            merged[name] = stored
    for name, shard in shards.items():
        if owner.get(name) != shard:
            raise refuse("model weights", path, f"the index puts '{printable(name, 80)}' in "
                         f"{shard.name}, which does not hold it", TODO)
    return merged


class ShardTensors(dict):
    """{name: Stored} from several files: no one run of bytes holds them all (data None)."""

    data = None


def one_file(path):  # Path -> safetensors_file.Tensors, or WorkshopError
    from attention_workshop.real.formats.safetensors_file import tensors

    try:
        return tensors(path)  # the header read and checked; nothing loaded yet
    except OSError as exc:
        if exc.errno != errno.ENOMEM:
            raise _corrupt(path, exc) from None
        raise refuse("model weights", path, *os_reason(exc)) from None  # mmap: no memory left
    except (ValueError, RecursionError) as exc:
        raise _corrupt(path, exc) from None


def _corrupt(path, exc):  # -> the refusal of a file that is not safetensors
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return WorkshopError(f"cannot read {printable(path)} as safetensors "
                         f"({printable(reason, 200)}); the file is corrupt or incomplete: "
                         "download or install it again")


def shard_map(index):  # Path of the index -> {tensor name: Path of its shard}, checked
    """Example: {"weight_map": {"a": "model-00001-of-00002.safetensors"}} -> {"a": folder /
    "model-00001-of-00002.safetensors"}."""
    raw = read_json(index, "model weights index", TODO)
    weight_map = raw.get("weight_map") if isinstance(raw, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise refuse("model weights index", index, "it has no \"weight_map\" of tensor names "
                     "to shard files", TODO)
    folder = index.parent.resolve()
    shards = {}
    for name, shard in weight_map.items():
        if not isinstance(shard, str) or not shard:
            raise refuse("model weights index", index, f"the shard of '{printable(name, 80)}' "
                         "is not a file name", TODO)
        path = index.parent / shard
        try:  # the name itself first: a NUL byte, or too long for the file system
            kind = stat_kind(path)
        except UnreadablePath as exc:
            raise refuse("model weights index", index, f"shard '{printable(shard, 80)}' "
                         f"cannot be looked at: {exc}", TODO) from None
        inside = Path(shard).name == shard and path.resolve().parent == folder
        if not inside:
            raise refuse("model weights index", index, f"shard '{printable(shard, 80)}' is "
                         "not a file inside the model folder", TODO)
        if kind != "file":
            raise refuse("model weights index", index, f"shard '{printable(shard, 80)}' is "
                         + ("missing" if kind is None else "not a regular file"), TODO)
        shards[name] = path
    return shards
