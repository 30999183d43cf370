"""attention-workshop: self-attention built from nothing, then found inside a real transformer.

The core is two small modules with no I/O: `embeddings` (the toy table) and
`attention` (softmax, scaled dot-product attention and the two toy heads).
The names a learner uses at a Python prompt or in a notebook come from here:

    from attention_workshop import embed, simple_attention, wired_attention, explore, load_model
    out, weights = simple_attention(embed("the river bank"))   # weights[2] -> bank's row
    explore("the river bank")                                   # both heads, every table
    load_model("minilm").run("the river bank")                  # a real model's attentions

Each is imported on first use, so `attention-workshop --help` imports no numpy.
"""

import importlib

__version__ = "0.1.0"

# name -> the module that defines it
_EXPORTS = {
    "AXES": ".embeddings", "EMBED": ".embeddings", "SENT_RIVER": ".embeddings",
    "SENT_MONEY": ".embeddings", "embed": ".embeddings",
    "softmax": ".attention", "causal_mask": ".attention",
    "scaled_dot_product_attention": ".attention", "simple_attention": ".attention",
    "W_Q_WIRED": ".attention", "W_K_WIRED": ".attention", "wired_attention": ".attention",
    "explore": ".explore.compute", "Options": ".explore.compute",
    "load_model": ".real",
}
__all__ = list(_EXPORTS)

# The subpackage attention_workshop.explore shares its name with the function explore. Import
# it now (its __init__ imports nothing heavy) and drop the name the import system bound to it,
# so `attention_workshop.explore` is the function, whatever is imported later:
# `from attention_workshop.explore import positions` still finds the subpackage in sys.modules.
from attention_workshop import explore as _explore_package  # noqa: E402, F401

globals().pop("explore")


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value  # looked up once
    return value


def __dir__():
    return sorted([*globals(), *_EXPORTS])
