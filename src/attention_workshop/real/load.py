"""Hugging Face model folder -> config, tokenizer and weights, each checked before use.

A folder holds config.json (sizes), model.safetensors (weights by name) and
tokenizer.json (text -> token ids). The loader only copies: every tensor keeps its
checkpoint name, and a missing or wrongly shaped one is an error that names it.
"""

from pathlib import Path

import numpy as np

from attention_workshop.errors import WorkshopError
from attention_workshop.real import bert, gpt2
from attention_workshop.real.config import read_config

FILES = ("config.json", "model.safetensors", "tokenizer.json")
FAMILIES = {"bert": bert, "gpt2": gpt2}


def check_folder(folder):  # str | Path -> Path
    """Return the folder if it holds the three files, else say which are missing."""
    folder = Path(folder)
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise WorkshopError(f"model folder '{folder}' lacks {', '.join(missing)}; a model folder "
                            f"needs {', '.join(FILES)} (Hugging Face layout)")
    return folder


def load_weights(path, cfg, dtype=np.float32):  # Path, ModelConfig -> {name: array}
    """Read exactly the tensors the family's forward pass needs, by their checkpoint names.

    Example: MiniLM's file names 'encoder.layer.0.attention.self.query.weight' [384, 384];
    a BertForMaskedLM file calls it 'bert.encoder.layer.0...': the 'bert.' prefix is dropped.
    Extra tensors (a language-model head, GPT-2's stored causal-mask buffers) are ignored.
    """
    from safetensors import SafetensorError, safe_open

    family = FAMILIES[cfg.family]
    expected = family.tensor_shapes(cfg)
    try:
        with safe_open(str(path), framework="np") as f:
            names = set(f.keys())
            prefix = family.PREFIX if any(n.startswith(family.PREFIX) for n in names) else ""
            for name, shape in expected.items():
                if prefix + name not in names:
                    raise WorkshopError(f"tensor '{prefix}{name}' is missing from {path}; "
                                        f"is this a {cfg.family} checkpoint matching config.json?")
                actual = tuple(f.get_slice(prefix + name).get_shape())
                if actual != shape:
                    raise WorkshopError(f"tensor '{prefix}{name}' in {path} has shape "
                                        f"{list(actual)}, but config.json implies {list(shape)}")
            weights = {name: f.get_tensor(prefix + name).astype(dtype, copy=False)
                       for name in expected}
    except (SafetensorError, OSError, ValueError, TypeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise WorkshopError(f"cannot read {path} as safetensors ({reason}); the file is corrupt "
                            f"or incomplete: download or install it again") from None
    for name, tensor in weights.items():  # a NaN or inf weight would poison every output
        if not np.isfinite(tensor).all():
            raise WorkshopError(f"tensor '{prefix}{name}' in {path} holds NaN or infinity; "
                                "the checkpoint is damaged: download or install it again")
    return weights


def load_folder(folder, dtype=np.float32):  # path -> (ModelConfig, weights, Tokenizer)
    """Check the folder, then read its config, weights and tokenizer."""
    from attention_workshop.real.tokenize import load_tokenizer

    folder = check_folder(folder)
    cfg = read_config(folder / "config.json")
    weights = load_weights(folder / "model.safetensors", cfg, dtype)
    return cfg, weights, load_tokenizer(folder / "tokenizer.json")
