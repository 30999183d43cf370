"""A real pretrained transformer's attention, computed by this package's own NumPy code.

    from attention_workshop.real import load_model
    model = load_model("minilm")          # or "gpt2", or a folder path
    result = model.run("the river bank")
    result.tokens       # ['[CLS]', 'the', 'river', 'bank', '[SEP]']
    result.attentions   # [n_layer, n_head, T, T]
    result.hidden       # [T, d_model]
"""

import numpy as np

from attention_workshop.real.model import Model, RunResult
from attention_workshop.real.models import DEFAULT, KNOWN

__all__ = ["DEFAULT", "KNOWN", "Model", "RunResult", "load_model"]


def load_model(name=DEFAULT, download=False, dtype=np.float32, say=None):  # str | Path -> Model
    """Load a model by name ("minilm", "gpt2") or from a folder with config.json,
    model.safetensors and tokenizer.json. Only download=True may use the network.
    `say`, if given, is told when the (slow) loading starts, once the name has resolved."""
    from attention_workshop.real.load import load_folder
    from attention_workshop.real.models import resolve

    folder = resolve(name, download=download)
    if say:
        say(f"loading model '{name}' from {folder} ...")
    config, weights, tokenizer = load_folder(folder, dtype=dtype)
    return Model(name=str(name), config=config, weights=weights, tokenizer=tokenizer)
