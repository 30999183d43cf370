"""The model families this package runs: config.json's model_type -> the file that runs it.

Config reading (checkpoint.read_config), weight loading (checkpoint.read_weights) and
the forward pass (model.Model.run) all look a family up here, and the `real --model`
help lists these names. Adding a family (say a LLaMA-style decoder) is one new file
beside bert.py and gpt2.py, plus its line below.

What a family file must define (names are the checkpoint's and config.json's own):

    CONFIG_KEYS   {ModelConfig field: its config.json key}, e.g. {"d_model": "n_embd", ...}
    DEFAULTS      {ModelConfig field: value when config.json lacks the key (or the family
                  has no key for it)}. Every ModelConfig field without a default of its own
                  is in CONFIG_KEYS or DEFAULTS. A d_mlp of None means 4 x d_model.
    REQUIRED      {config.json key: the one value this code supports}; a file that sets
                  another value is refused, a file without the key is taken to mean it.
    PREFIX        the prefix a checkpoint may nest every tensor under ("bert.",
                  "transformer."); the loader drops it.
    CAUSAL        True if token i may attend only to tokens 0..i (the layer loop then
                  hands each block causal_mask(T)), False if to every token.
    tensor_shapes(cfg) -> {checkpoint name without PREFIX: shape}: exactly the tensors
                  forward reads; the loader reads these and no others, checks each shape.
    forward(weights, cfg, ids) -> {"hidden_states": [n_layer + 1, T, d_model] (the
                  embeddings, then each layer's output, as transformers reports them),
                  "attentions": [n_layer, n_head, T, T] (rows sum to 1),
                  "queries", "keys", "values": [n_layer, n_head, T, d_head]}, in the
                  weights' dtype;
                  `weights` maps the names of tensor_shapes to arrays, ids is [T] ints.
                  fast_path.run_layers fills these from the family's one-layer function;
                  for float32, fast_loop.run_layers_fast from the same layer written as
                  fast_stages(layer, cfg, io) -> a list of fast_loop.Stage, one of them over
                  the heads calling io.heads(part, ...) (bert.py and gpt2.py show both).

tests/test_real_families.py checks every family here against this contract.
"""

import importlib

# module names, not modules: `attention-workshop --help` reads this dict without numpy
FAMILIES = {
    "bert": "attention_workshop.real.bert",  # bidirectional encoder (MiniLM)
    "gpt2": "attention_workshop.real.gpt2",  # causal decoder
}


def family(model_type):  # "gpt2" -> the module attention_workshop.real.gpt2
    return importlib.import_module(FAMILIES[model_type])
