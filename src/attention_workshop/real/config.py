"""A model's sizes, read from its config.json into one frozen dataclass.

BERT and GPT-2 spell the same sizes differently (hidden_size vs n_embd); after
`read_config` every family uses one vocabulary: n_layer, n_head, d_model, d_head.
"""

import json
from dataclasses import dataclass, fields

from attention_workshop.errors import WorkshopError


@dataclass(frozen=True)
class ModelConfig:
    family: str  # "bert" (bidirectional encoder) or "gpt2" (causal decoder)
    n_layer: int
    n_head: int
    d_model: int
    d_mlp: int  # width of the MLP's hidden layer
    n_ctx: int  # how many positions the model has embeddings for
    n_vocab: int
    n_type: int  # BERT's token-type (segment) rows; 0 for GPT-2
    eps: float  # layer norm epsilon
    activation: str  # "gelu" (erf) or "gelu_new" (tanh approximation)

    @property
    def d_head(self):
        """Example: d_model 384 split over 12 heads -> d_head 32 (MiniLM's d_k)."""
        return self.d_model // self.n_head

    @property
    def causal(self):
        return self.family == "gpt2"


# config.json key for each field, per family
_KEYS = {
    "bert": {"n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
             "d_model": "hidden_size", "d_mlp": "intermediate_size",
             "n_ctx": "max_position_embeddings", "n_vocab": "vocab_size",
             "n_type": "type_vocab_size", "eps": "layer_norm_eps", "activation": "hidden_act"},
    "gpt2": {"n_layer": "n_layer", "n_head": "n_head", "d_model": "n_embd", "d_mlp": "n_inner",
             "n_ctx": "n_positions", "n_vocab": "vocab_size",
             "eps": "layer_norm_epsilon", "activation": "activation_function"},
}
_DEFAULTS = {
    "bert": {"n_type": 2, "eps": 1e-12, "activation": "gelu"},
    "gpt2": {"n_type": 0, "eps": 1e-5, "activation": "gelu_new", "d_mlp": None},
}
# options whose other values would need code this package does not have
_REQUIRED = {
    "bert": {"position_embedding_type": "absolute"},
    "gpt2": {"scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
             "reorder_and_upcast_attn": False},
}
ACTIVATIONS = ("gelu", "gelu_new")


def read_config(path):  # Path to config.json -> ModelConfig
    """Example: MiniLM's config.json -> ModelConfig(family='bert', n_layer=6, n_head=12, ...)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WorkshopError(f"cannot read {path} ({exc}); is the model folder complete?") from None
    return config_from_dict(raw, str(path))


def config_from_dict(raw, where="config.json"):  # dict -> ModelConfig
    family = raw.get("model_type") if isinstance(raw, dict) else None
    if family not in _KEYS:
        raise WorkshopError(f"{where}: model_type {family!r} is not supported; "
                            f"this workshop reads {' and '.join(_KEYS)} models")
    for key, wanted in _REQUIRED[family].items():
        if raw.get(key, wanted) != wanted:
            raise WorkshopError(f"{where}: {key} = {raw[key]!r} is not supported "
                                f"(needs {wanted!r})")
    values = {"family": family}
    for field in fields(ModelConfig)[1:]:
        key = _KEYS[family].get(field.name)
        value = raw.get(key, _DEFAULTS[family].get(field.name, KeyError))
        if value is KeyError:
            raise WorkshopError(f"{where}: the key '{key}' is missing")
        values[field.name] = value
    if values["d_mlp"] is None:  # GPT-2's n_inner: null means 4 x n_embd
        values["d_mlp"] = 4 * values["d_model"]
    if values["activation"] not in ACTIVATIONS:
        raise WorkshopError(f"{where}: activation {values['activation']!r} is not supported "
                            f"(known: {', '.join(ACTIVATIONS)})")
    config = ModelConfig(**values)
    if config.d_model % config.n_head:
        raise WorkshopError(f"{where}: d_model {config.d_model} is not a multiple of "
                            f"{config.n_head} heads")
    return config
