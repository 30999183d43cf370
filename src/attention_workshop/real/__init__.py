"""A real pretrained transformer's attention, computed by this package's own NumPy code.

    from attention_workshop.real import load_model
    model = load_model("minilm")          # or "gpt2", or a folder path
    result = model.run("the river bank")
    result.tokens       # ['[CLS]', 'the', 'river', 'bank', '[SEP]']
    result.attentions   # [n_layer, n_head, T, T]
    result.hidden       # [T, d_model]

The files, in the order a run uses them:

    catalog.py      a name (minilm, gpt2) or a path -> a checked model folder
    checkpoint.py   the folder -> ModelConfig, weights by checkpoint name, tokenizer
    families.py     config.json's model_type -> its family file; what a family must define
    bert.py         BERT (MiniLM): config keys, weight names and shapes, forward pass
    gpt2.py         GPT-2: the same for a causal decoder
    transformer.py  the pieces both are made of: layer_norm, gelu, heads split and merged
    fast_path.py    attention on buffers, in place (tested against the core's formula),
                    the layer loop that fills the outputs, row blocks
    model.py        Model.run: text -> tokens -> forward pass -> RunResult
    head_search.py  which heads matter: where a word looks hardest at another word
    printout.py     what `attention-workshop real` prints: text tables or JSON

It never draws: the head grids and the HTML head view are in figures/.
"""

from attention_workshop.real.catalog import DEFAULT, KNOWN

__all__ = ["DEFAULT", "KNOWN", "Model", "RunResult", "load_model"]


def load_model(name=DEFAULT, download=False, dtype="float32", say=None):  # str | Path -> Model
    """Load a model by name ("minilm", "gpt2") or from a folder with config.json,
    model.safetensors and tokenizer.json. Only download=True may use the network.
    `dtype` is the working precision (np.float64 for digits that never change).
    `say`, if given, is told when the (slow) loading starts, once the name has resolved."""
    from attention_workshop.real.catalog import resolve
    from attention_workshop.real.checkpoint import load_folder
    from attention_workshop.real.model import Model

    folder = resolve(name, download=download)
    if say:
        say(f"loading model '{name}' from {folder} ...")
    config, weights, tokenizer = load_folder(folder, dtype=dtype)
    return Model(name=str(name), config=config, weights=weights, tokenizer=tokenizer)


def __getattr__(name):  # Model and RunResult bring numpy: imported when first asked for,
    if name in ("Model", "RunResult"):  # so that `--help`, which reads KNOWN, stays light
        from attention_workshop.real import model

        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
