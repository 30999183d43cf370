"""The model families this package runs: config.json's model_type -> one record, Family.

Config reading (config.py), weight loading (checkpoint.py, gguf_checkpoint.py) and the
forward pass (model.Model.run) all read a family's record from here and from nowhere else,
and the `real --model` help and the errors list FAMILIES' names. Adding a family is one new
file that ends in `FAMILY = Family(...)`, plus its line in FAMILIES (docs/contributing.md
walks qwen2.py, a Llama with biases on q, k and v, as the example).

A record's fields (names are the checkpoint's and config.json's own):

    config_keys   {ModelConfig field: its config.json key, or a tuple of alternative keys,
                  the first present wins; a dotted key reads inside a table}, e.g.
                  {"d_model": "n_embd", "rope_theta": ("rope_theta",
                  "rope_parameters.rope_theta")}.
    defaults      {ModelConfig field: its value when config.json lacks the key, or when the
                  family has no key for it (norm "rms", positions "rotary", gated True)}.
                  A d_mlp of None means 4 x d_model; a d_head or n_kv_head of None the
                  usual (d_model / n_head; one key/value head per query head).
    required      {config.json key (dotted for a table's): the one value this code
                  computes}; a file that sets another is refused by name, a file without
                  the key is taken to mean it (e.g. rope_scaling null, is_decoder false).
    prefix        the prefix a checkpoint may nest the model under ("bert.",
                  "transformer.", "model."); the loader drops it.
    causal        True if token i may attend only to tokens 0..i, False if to every token.
    tensor_shapes(cfg) -> {checkpoint name without prefix: shape}: exactly the tensors
                  forward reads, as the config's options say (a bias is read where
                  cfg.bias / cfg.out_bias say so, and the forward adds it on the same flag);
                  the loader reads these and no others, checks each shape.
    forward(weights, cfg, ids, hooks=None) -> {"hidden_states": [n_layer + 1, T, d_model]
                  (the embeddings, then each layer's output, as transformers reports them),
                  "attentions": [n_layer, n_head, T, T] (rows sum to 1),
                  "queries", "head_outputs": [n_layer, n_head, T, d_head],
                  "keys", "values": [n_layer, n_kv_head, T, d_head] (the model's own
                  key/value heads: grouped-query attention shares each among
                  n_head / n_kv_head query heads)}, in the weights' dtype, written on the
                  core's attention.scaled_dot_product_attention, calling the named hook
                  points of hooks.py; trace.Trace, a hook consumer, fills the dict. A
                  decoder's forward may take `past` (an earlier result: the KV cache).
    logits(weights, cfg, hidden [T, d_model]) -> [T, n_vocab] (a decoder's next-token
                  scores), or None for an encoder.
    gguf_layer, gguf_outside, layer_prefix: a GGUF file's tensor names mapped to ours
                  (gguf_checkpoint.py reads them; one list of names per family).

The sizes every family has are ModelConfig's (config.py): n_layer, n_head, n_kv_head,
d_model, d_head, d_mlp, n_ctx, n_vocab, eps, activation, norm ("layer" or "rms"),
positions ("learned" or "rotary" with rope_theta), gated (SwiGLU's down(silu(gate x) *
up x)), tied (output head = token embedding), bias (on q, k, v), out_bias (on W_O).

Speed is not here: real/fast/ registers accelerators per family, proved equal to these
files (tests/test_fast_equals_readable.py); a family without one (or with real/fast/
deleted) runs its readable forward. tests/test_real_families.py checks every family here
against this contract.
"""

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

# model_type -> the module whose FAMILY is its record (names, not modules: `attention-workshop
# --help` reads this dict without numpy). A new family: its file, and one line here.
FAMILIES = {
    "bert": "attention_workshop.real.families.bert",  # bidirectional encoder (MiniLM)
    "gpt2": "attention_workshop.real.families.gpt2",  # causal decoder, learned positions
    "llama": "attention_workshop.real.families.llama",  # decoder: rotary, grouped-query, SwiGLU
    "qwen2": "attention_workshop.real.families.qwen2",  # a Llama with biases on q, k, v (not on o)
}


@dataclass(frozen=True)
class Family:
    """One model family: what it reads from a config and a checkpoint, and how it runs.

    Example: family("gpt2").prefix -> "transformer."; family("llama").causal -> True."""

    model_type: str  # config.json's model_type, a key of FAMILIES
    config_keys: dict  # {ModelConfig field: config.json key, or alternatives} (module doc)
    defaults: dict  # {ModelConfig field: value when config.json lacks the key}
    required: dict  # {config.json key: the one value this code computes}
    prefix: str  # what a checkpoint may nest the model under; the loader drops it
    causal: bool  # token i attends to tokens 0..i only
    tensor_shapes: Callable  # cfg -> {name: shape}: exactly the tensors forward reads
    forward: Callable  # (weights, cfg, ids, [past,] hooks=None) -> dict of arrays
    logits: Callable | None = None  # (weights, cfg, hidden [T, d_model]) -> [T, n_vocab]
    # a GGUF file's tensor names: {"blk.N." suffix: ours after the layer prefix} and
    # {GGUF name outside the layers: ours}; empty: this family is not read from GGUF here
    gguf_layer: dict = field(default_factory=dict)
    gguf_outside: dict = field(default_factory=dict)
    layer_prefix: str = ""  # "layers." : layer i's tensors are under layer_prefix + "i."


def family(model_type):  # "gpt2" -> gpt2.py's FAMILY record
    return importlib.import_module(FAMILIES[model_type]).FAMILY
_running = threading.local()  # .layer: the layer whose tensors were last handed out


class Weights(dict):
    """A checkpoint's {name: array} that splits out each layer's tensors once, then hands the
    same split out again (splitting SmolLM2's 272 names into 30 layers on every generated
    token took 2-3.5 ms of a ~10 ms token). Changing an entry forgets the splits."""

    def layer(self, prefix):  # "layers.3." -> {short name: array}
        return self.kept(("layer", prefix), lambda weights: split_layer(weights, prefix))

    def kept(self, key, make):  # -> make(self), made once and kept until an entry changes
        """Example: w.kept("decode plan", plan) (fast/decode_step.py: the addresses of
        every layer's weights, gathered once, not on every generated token)."""
        made = self.__dict__.setdefault("made", {})
        if key not in made:
            made[key] = make(self)
        return made[key]

    def __setitem__(self, name, value):
        self.__dict__.pop("made", None)
        super().__setitem__(name, value)

    def __delitem__(self, name):
        self.__dict__.pop("made", None)
        super().__delitem__(name)


def split_layer(weights, prefix):  # {name: array}, "h.0." -> {short name: array}
    return {name[len(prefix):]: value for name, value in weights.items()
            if name.startswith(prefix)}


def layer_weights(weights, prefix):  # {name: array}, "h.0." -> {short name: array}
    """One layer's tensors, by their names inside the layer (a Weights keeps its splits);
    also notes that layer as the one running (running_layer), so an overflow can be named
    by its layer.

    Example: layer_weights(w, "h.0.")["attn.c_attn.weight"] is w["h.0.attn.c_attn.weight"]."""
    _running.layer = int(prefix.rstrip(".").rpartition(".")[2])
    if isinstance(weights, Weights):
        return weights.layer(prefix)
    return split_layer(weights, prefix)


def running_layer(reset=False):  # -> the layer a forward pass is in (None: the embeddings)
    """Example: after layer_weights(w, "layers.7."), running_layer() -> 7."""
    if reset:
        _running.layer = None
    return getattr(_running, "layer", None)
