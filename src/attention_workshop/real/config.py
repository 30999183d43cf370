"""config.json -> one frozen ModelConfig, in one vocabulary whatever the family calls things.

hidden_size or n_embd, num_key_value_heads, rope_theta: each family file's CONFIG_KEYS says
which key of config.json fills which field, DEFAULTS what a missing one means, and REQUIRED
the options whose other values this package does not compute (refused by name, never run
wrongly). Every value is checked (folder_checks.config_value) before anything is allocated.
"""

from dataclasses import dataclass, fields

from attention_workshop.reading import refuse
from attention_workshop.real.families import FAMILIES, family
from attention_workshop.real.formats import folder_checks as checks
from attention_workshop.real.layers import ACTIVATION

MAX_TOKENS = 512  # [n_layer, n_head, T, T] weights are kept, printed and drawn: T stays modest
# a pass that keeps no weights (analysis/sliding_cache.py: one layer's scores at a time, the
# keys and values): SmolLM2 at 2,048 tokens holds 9 x 2,048 x 2,048 float64 scores, 302 MB
LONG_TOKENS = 2048

# how a field's value is checked; any other field is a size (a whole number >= 1)
KINDS = {"eps": "epsilon", "rope_theta": "number", "tied": "flag", "bias": "flag",
         "out_bias": "flag",
         "activation": tuple(ACTIVATION), "norm": ("layer", "rms"),
         "positions": ("learned", "rotary")}


@dataclass(frozen=True)
class ModelConfig:
    family: str  # config.json's model_type, a key of families.FAMILIES: "bert", "gpt2", "llama"
    causal: bool  # the family's CAUSAL: True if token i sees only tokens 0..i
    n_layer: int
    n_head: int  # query heads
    d_model: int
    d_mlp: int  # width of the MLP's hidden layer
    n_ctx: int  # how many positions the model has (embeddings, or rotary's trained length)
    n_vocab: int
    n_type: int  # BERT's token-type (segment) rows; 0 for the others
    eps: float  # the norm's epsilon
    activation: str  # a key of layers.ACTIVATION: "gelu" (erf), "gelu_new" (tanh), "silu"
    # What a modern decoder adds; each default is what BERT and GPT-2 do.
    n_kv_head: int = 0  # key/value heads; 0: as many as query heads (grouped-query: fewer)
    d_head: int = 0  # a head's width (d_k); 0: d_model // n_head
    norm: str = "layer"  # "layer" (centre, scale, shift) or "rms" (scale only)
    positions: str = "learned"  # "learned" (a row per position) or "rotary" (q, k turned)
    rope_theta: float = 10000.0  # rotary's base: pair i turns by position / theta^(2i/d_head)
    gated: bool = False  # the MLP is down(act(gate x) * up x) (SwiGLU), not W_2 act(W_1 x)
    tied: bool = True  # the output head is the token embedding (a decoder's logits)
    bias: bool = True  # the attention's q, k and v projections have biases
    out_bias: bool = True  # its output projection (W_O) has one (Qwen2: q, k, v do, o not)


def lookup(raw, key):  # dict, "rope_parameters.rope_theta" -> the value, or MISSING
    """Example: lookup({"a": {"b": 2}}, "a.b") -> 2; lookup({}, "a.b") -> MISSING."""
    value = raw
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


MISSING = object()


def config_from_dict(raw, where="config.json"):  # dict -> ModelConfig, every value checked
    """Example: {"model_type": "gpt2", "n_layer": 2, ...} -> ModelConfig(family='gpt2', ...);
    {"num_attention_heads": 0, ...} -> "cannot read model config 'config.json':
    num_attention_heads is 0; it must be a whole number, at least 1; ..."."""
    if not isinstance(raw, dict):
        raise refuse("model config", where, "expected a table of keys at the top", checks.TODO)
    model_type = raw.get("model_type")
    if not isinstance(model_type, str) or model_type not in FAMILIES:
        raise refuse("model config", where, f"model_type {checks.shown(model_type)} is not "
                     f"supported; this workshop reads {', '.join(FAMILIES)} models",
                     "give the folder of one of those")
    fam = family(model_type)
    for key, wanted in fam.required.items():
        value = lookup(raw, key)
        if value is not MISSING and value != wanted:
            raise refuse("model config", where, f"{key} is {checks.shown(value)}, which is "
                         f"not supported (needs {checks.shown(wanted)})", checks.TODO)
    values = {"family": model_type, "causal": fam.causal}
    for field in fields(ModelConfig)[2:]:
        keys = fam.config_keys.get(field.name, ())
        keys = (keys,) if isinstance(keys, str) else keys  # alternatives, the first found wins
        found = [(key, lookup(raw, key)) for key in keys if lookup(raw, key) is not MISSING]
        if found:
            key, value = found[0]
            values[field.name] = checks.config_value(
                where, key, value, KINDS.get(field.name, "size"),
                may_be_null=fam.defaults.get(field.name, MISSING) is None)
        elif field.name in fam.defaults:
            values[field.name] = fam.defaults[field.name]
        elif keys:
            raise refuse("model config", where, f"the key '{keys[0]}' is missing", checks.TODO)
        # else the field keeps ModelConfig's own default (a size other families do not have)
        if values.get(field.name) is None and field.name in values:  # null: the derived value
            values[field.name] = derived(field.name, values)
    return checked(ModelConfig(**values), where)


def derived(name, values):  # what a null (None) size means, from the sizes before it
    """Example: GPT-2's n_inner null -> 4 x n_embd; Llama's head_dim null -> d_model / n_head."""
    return {"d_mlp": 4 * values["d_model"], "d_head": 0, "n_kv_head": 0}[name]


def checked(cfg, where):  # ModelConfig with 0s for "as usual" -> the resolved ModelConfig
    from dataclasses import replace

    if not cfg.d_head and cfg.d_model % cfg.n_head:
        raise refuse("model config", where, f"d_model {cfg.d_model} is not a multiple of "
                     f"{cfg.n_head} heads", checks.TODO)
    cfg = replace(cfg, d_head=cfg.d_head or cfg.d_model // cfg.n_head,
                  n_kv_head=cfg.n_kv_head or cfg.n_head)
    if cfg.n_head % cfg.n_kv_head:
        raise refuse("model config", where, f"{cfg.n_head} query heads cannot share "
                     f"{cfg.n_kv_head} key/value heads evenly", checks.TODO)
    if cfg.positions == "rotary" and cfg.d_head % 2:
        raise refuse("model config", where, f"rotary positions turn pairs of features, but "
                     f"a head has {cfg.d_head}", checks.TODO)
    return cfg


def read_config(path):  # Path to config.json -> ModelConfig
    """Example: MiniLM's config.json -> ModelConfig(family='bert', n_layer=6, n_head=12, ...)."""
    from attention_workshop.reading import read_json

    return config_from_dict(read_json(path, "model config", checks.TODO), path)
