"""`explore`: the raw and the wired head on any sentence, number for number.

The parts, one job each:

    compute.py     explore(sentence, table, w_q, w_k, options) -> Exploration; Options (no
                   division, a causal mask, a W_V); positions, slow_motion
    tables.py      the embedding table and the W_Q / W_K wiring: built in, or the learner's
                   TOML/JSON files (read through attention_workshop.reading)
    views.py       the registry of views: --format NAME -> the module that renders it
    text_view.py   the text tables (the default view)
    json_view.py   JSON at full precision
    figures        with --out DIR: attention_workshop/figures/exploration.py draws them, called
                   once, from commands/explore.py

Adding a view (say `--format csv`) is one new file and one registry line:

1. `explore/csv_view.py` with `render(ex, word=None) -> str`, the whole output for an
   Exploration `ex` (raise WorkshopError for bad input; `positions(ex.tokens, word)` finds
   the word);
2. in `views.py`, `"csv": (".csv_view", "CSV, one matrix a block")` in VIEWS.

`--format` then offers it, and tests/test_explore_views.py runs every registered view.

Example: explore("the river bank").wired["weights"][2] -> [0.159, 0.500, 0.341] (rounded);
render("text", that exploration) prints it as `attention-workshop explore "the river bank"` does.
"""

import importlib

# Exported names, imported on first use so that building the command line (`--help`, and
# views.py's registry) does not import numpy.
_EXPORTS = {"explore": ".compute", "Exploration": ".compute", "Options": ".compute",
            "lookup": ".compute", "positions": ".compute", "slow_motion": ".compute"}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)


def __dir__():
    return sorted([*globals(), *_EXPORTS])
