"""A model folder -> its config, weights and tokenizer, each checked before use.

config.json's sizes become one frozen ModelConfig in one vocabulary (n_layer, n_head,
d_model, d_head), whatever the family calls them (hidden_size vs n_embd: each family
file's CONFIG_KEYS says). The weight loader only copies: every tensor keeps its
checkpoint name, and a missing or wrongly shaped one is an error that names it.
"""

import json
from dataclasses import dataclass, fields

import numpy as np

from attention_workshop.errors import WorkshopError
from attention_workshop.real.catalog import check_folder
from attention_workshop.real.families import FAMILIES, family
from attention_workshop.real.transformer import ACTIVATION


@dataclass(frozen=True)
class ModelConfig:
    family: str  # config.json's model_type, a key of families.FAMILIES: "bert", "gpt2"
    causal: bool  # the family's CAUSAL: True if token i sees only tokens 0..i
    n_layer: int
    n_head: int
    d_model: int
    d_mlp: int  # width of the MLP's hidden layer
    n_ctx: int  # how many positions the model has embeddings for
    n_vocab: int
    n_type: int  # BERT's token-type (segment) rows; 0 for GPT-2
    eps: float  # layer norm epsilon
    activation: str  # a key of transformer.ACTIVATION: "gelu" (erf), "gelu_new" (tanh)
    # A size only a new family has goes below, with a default, so other families need not
    # declare it (e.g. a LLaMA-style n_kv_head: int = 0).

    @property
    def d_head(self):
        """Example: d_model 384 split over 12 heads -> d_head 32 (MiniLM's d_k)."""
        return self.d_model // self.n_head


def read_config(path):  # Path to config.json -> ModelConfig
    """Example: MiniLM's config.json -> ModelConfig(family='bert', n_layer=6, n_head=12, ...)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WorkshopError(f"cannot read {path} ({exc}); is the model folder complete?") from None
    return config_from_dict(raw, str(path))


def config_from_dict(raw, where="config.json"):  # dict -> ModelConfig
    model_type = raw.get("model_type") if isinstance(raw, dict) else None
    if model_type not in FAMILIES:
        raise WorkshopError(f"{where}: model_type {model_type!r} is not supported; "
                            f"this workshop reads {' and '.join(FAMILIES)} models")
    fam = family(model_type)
    for key, wanted in fam.REQUIRED.items():
        if raw.get(key, wanted) != wanted:
            raise WorkshopError(f"{where}: {key} = {raw[key]!r} is not supported "
                                f"(needs {wanted!r})")
    values = {"family": model_type, "causal": fam.CAUSAL}
    for field in fields(ModelConfig)[2:]:
        key = fam.CONFIG_KEYS.get(field.name)
        if key in raw:
            values[field.name] = raw[key]
        elif field.name in fam.DEFAULTS:
            values[field.name] = fam.DEFAULTS[field.name]
        elif key is not None:
            raise WorkshopError(f"{where}: the key '{key}' is missing")
        # else the field keeps ModelConfig's own default (a size other families do not have)
    if values["d_mlp"] is None:  # e.g. GPT-2's n_inner: null means 4 x n_embd
        values["d_mlp"] = 4 * values["d_model"]
    if values["activation"] not in ACTIVATION:
        raise WorkshopError(f"{where}: activation {values['activation']!r} is not supported "
                            f"(known: {', '.join(ACTIVATION)})")
    config = ModelConfig(**values)
    if config.d_model % config.n_head:
        raise WorkshopError(f"{where}: d_model {config.d_model} is not a multiple of "
                            f"{config.n_head} heads")
    return config


def load_weights(path, cfg, dtype="float32"):  # Path, ModelConfig -> {name: array}
    """Read exactly the tensors the family's forward pass needs, by their checkpoint names.

    Example: MiniLM's file names 'encoder.layer.0.attention.self.query.weight' [384, 384];
    a BertForMaskedLM file calls it 'bert.encoder.layer.0...': the 'bert.' prefix is dropped.
    Extra tensors (a language-model head, GPT-2's stored causal-mask buffers) are ignored.
    """
    from safetensors import SafetensorError, safe_open

    fam = family(cfg.family)
    expected = fam.tensor_shapes(cfg)
    try:
        with safe_open(str(path), framework="np") as f:
            names = set(f.keys())
            prefix = fam.PREFIX if any(n.startswith(fam.PREFIX) for n in names) else ""
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


def load_tokenizer(path):  # Path -> tokenizers.Tokenizer
    """The model's own tokenizer.json, exactly as it ships, but with padding and truncation
    switched off (MiniLM's pads every sentence to 128 tokens): model.encode then gives the
    sentence's tokens plus the special tokens the model itself adds ([CLS], [SEP])."""
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises plain Exception on a malformed file
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise WorkshopError(f"cannot read {path} ({reason}); the tokenizer file is corrupt") \
            from None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def load_folder(folder, dtype="float32"):  # path -> (ModelConfig, weights, Tokenizer)
    """Check the folder, then read its config, weights and tokenizer."""
    folder = check_folder(folder)
    cfg = read_config(folder / "config.json")
    weights = load_weights(folder / "model.safetensors", cfg, dtype)
    return cfg, weights, load_tokenizer(folder / "tokenizer.json")
