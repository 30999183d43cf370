"""The ways `explore` can show an exploration (`--format NAME`): one file each, registered here.

A view is a module in this package with `render(ex, word=None) -> str`: the whole
output for one Exploration (and, with `word`, that word's blend in slow motion),
built before anything is printed so a bad --word leaves stdout empty. This file
imports no view until one is asked for, so `attention-workshop --help` stays
quick (no numpy).
"""

import importlib

# --format name -> (module beside this file, what --help says of it); the first is the default
VIEWS = {
    "text": (".text_view", "text tables (default)"),
    "json": (".json_view", "JSON with full-precision numbers"),
}


def render(name, ex, word=None):  # view name, Exploration, str | None -> str
    """Example: render("json", explore("bank")) -> the JSON document as text."""
    module, _ = VIEWS[name]
    return importlib.import_module(module, __package__).render(ex, word)


def help_text():
    """Example: 'text tables (default) or JSON with full-precision numbers'."""
    return " or ".join(about for _, about in VIEWS.values())
