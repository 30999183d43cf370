"""The model families this package runs: config.json's model_type -> the file that runs it.

Config reading (config.py), weight loading (checkpoint.py, gguf_checkpoint.py) and the
forward pass (model.Model.run) all look a family up here, and the `real --model` help lists
these names. Adding a family is one new file beside bert.py, gpt2.py and llama.py, plus its
line below (docs/contributing.md walks llama.py as the example).

What a family file must define (names are the checkpoint's and config.json's own):

    CONFIG_KEYS   {ModelConfig field: its config.json key, or a tuple of alternative keys,
                  the first present wins; a dotted key reads inside a table}, e.g.
                  {"d_model": "n_embd", "rope_theta": ("rope_theta",
                  "rope_parameters.rope_theta")}.
    DEFAULTS      {ModelConfig field: its value when config.json lacks the key, or when the
                  family has no key for it (norm "rms", positions "rotary", gated True)}.
                  A d_mlp of None means 4 x d_model; a d_head or n_kv_head of None the
                  usual (d_model / n_head; one key/value head per query head).
    REQUIRED      {config.json key (dotted for a table's): the one value this code
                  computes}; a file that sets another is refused by name, a file without
                  the key is taken to mean it (e.g. rope_scaling null, is_decoder false).
    PREFIX        the prefix a checkpoint may nest the model under ("bert.",
                  "transformer.", "model."); the loader drops it.
    CAUSAL        True if token i may attend only to tokens 0..i, False if to every token.
    tensor_shapes(cfg) -> {checkpoint name without PREFIX: shape}: exactly the tensors
                  forward reads; the loader reads these and no others, checks each shape.
    forward(weights, cfg, ids) -> {"hidden_states": [n_layer + 1, T, d_model] (the
                  embeddings, then each layer's output, as transformers reports them),
                  "attentions": [n_layer, n_head, T, T] (rows sum to 1),
                  "queries": [n_layer, n_head, T, d_head],
                  "keys", "values": [n_layer, n_kv_head, T, d_head] (the model's own
                  key/value heads: grouped-query attention shares each among
                  n_head / n_kv_head query heads)}, in the weights' dtype, written on the
                  core's attention.scaled_dot_product_attention. trace.Trace fills it.
    A causal family also defines logits(weights, cfg, hidden [T, d_model]) -> [T, n_vocab]
    (the next token's scores) and may take `past` (a decode.Cache) in forward, to run only
    the new tokens against the cached keys and values.

The sizes every family has are ModelConfig's (config.py): n_layer, n_head, n_kv_head,
d_model, d_head, d_mlp, n_ctx, n_vocab, eps, activation, norm ("layer" or "rms"),
positions ("learned" or "rotary" with rope_theta), gated (SwiGLU's down(silu(gate x) *
up x)), tied (output head = token embedding), bias.

Speed is not here: real/fast/ registers accelerators per family, proved equal to these
files (tests/test_fast_equals_readable.py); a family without one runs its readable forward.
tests/test_real_families.py checks every family here against this contract.
"""

import importlib
import threading

# module names, not modules: `attention-workshop --help` reads this dict without numpy
FAMILIES = {
    "bert": "attention_workshop.real.bert",  # bidirectional encoder (MiniLM)
    "gpt2": "attention_workshop.real.gpt2",  # causal decoder, learned positions
    "llama": "attention_workshop.real.llama",  # causal decoder: rotary, grouped-query, SwiGLU
}


def family(model_type):  # "gpt2" -> the module attention_workshop.real.gpt2
    return importlib.import_module(FAMILIES[model_type])


_running = threading.local()  # .layer: the layer whose tensors were last handed out


def layer_weights(weights, prefix):  # {name: array}, "h.0." -> {short name: array}
    """One layer's tensors, by their names inside the layer; also notes that layer as the one
    running (running_layer), so an overflow can be named by its layer.

    Example: layer_weights(w, "h.0.")["attn.c_attn.weight"] is w["h.0.attn.c_attn.weight"]."""
    _running.layer = int(prefix.rstrip(".").rpartition(".")[2])
    return {name[len(prefix):]: value for name, value in weights.items()
            if name.startswith(prefix)}


def running_layer(reset=False):  # -> the layer a forward pass is in (None: the embeddings)
    """Example: after layer_weights(w, "layers.7."), running_layer() -> 7."""
    if reset:
        _running.layer = None
    return getattr(_running, "layer", None)
