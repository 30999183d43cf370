"""A run continued from layer l: the layers below it taken from an earlier run of the same ids.

A head switched off in layer 17 changes nothing in layers 0-16, so Module 5's ablations need
not run those layers again: their numbers are the plain run's. The rest runs as a model of
layers l .. n_layer - 1 alone (the same weight arrays, renumbered from 0), whose embeddings
are replaced (hook_embed) by the plain run's residual stream entering layer l. SmolLM2's
induction heads sit in layers 17-23 of 30: an ablation then costs under half a run.

Example: plain = model.run(ids); continued(model, plain, 17, hooks) has the numbers of
model.run(ids, hooks=hooks) when the hooks touch only layers 17 and later
(tests/test_interventions_resume.py checks it bit for bit, in every family).
"""

import dataclasses
import re

import numpy as np

from attention_workshop.real.hooks import Hooks

_LAYER = re.compile(r"^(\D*?)(\d+)\.(.*)$")  # "layers.17.mlp.up_proj.weight", "h.3.", ...
_POINT = re.compile(r"^blocks\.(\d+)\.(.*)$")
FIELDS = ("attentions", "hidden_states", "queries", "keys", "values", "head_outputs")


def layers_of(named, start, stop):  # {name: array}, l, m -> {name: array}: layers l..m-1
    """Layers start .. stop - 1, renumbered from 0; names of no layer kept. Example: start 2:
    "layers.3.mlp.up_proj.weight" -> "layers.1.mlp.up_proj.weight"; "layers.1. ..." is left
    out; "embed_tokens.weight" is kept."""
    kept = {}
    for name, value in named.items():
        m = _LAYER.match(name)
        if m is None:
            kept[name] = value
        elif start <= int(m[2]) < stop:
            kept[f"{m[1]}{int(m[2]) - start}.{m[3]}"] = value
    return kept


def part(model, start, stop):  # Model, l, m -> the Model of its layers l .. m - 1 alone
    cfg = dataclasses.replace(model.config, n_layer=stop - start)
    return dataclasses.replace(model, config=cfg, weights=layers_of(model.weights, start, stop),
                               blocks=layers_of(model.blocks, start, stop))


def lower(model, ids, stop):  # Model, ids, m -> RunResult of layers 0 .. m - 1 only
    """What continued() needs of a plain run, for starts up to stop - 1: the residual stream
    entering each of layers 0 .. stop - 1, and those layers' attentions, keys, values (the
    last hidden state is the final norm's, as in any run, so it is not one of them)."""
    return part(model, 0, stop).run(ids)


def shifted(hooks, start):  # Hooks on layers >= l -> the same Hooks, layers renumbered from l
    """Example: start 17: "blocks.18.attn.hook_z" -> "blocks.1.attn.hook_z"."""
    moved = {}
    for name, fns in (hooks.functions if hooks else {}).items():
        m = _POINT.match(name)
        if m is None or int(m[1]) < start:
            raise ValueError(f"hook {name!r} is below layer {start}: run the whole model")
        moved[f"blocks.{int(m[1]) - start}.{m[2]}"] = fns
    return Hooks(moved)


def first_layer(hooks):  # Hooks -> the lowest layer any hook is on (None: no layer hook)
    layers = [int(m[1]) for m in map(_POINT.match, hooks.functions if hooks else {}) if m]
    return min(layers, default=None)


def continued(model, plain, start, hooks):  # Model, RunResult, l, Hooks -> RunResult
    """`plain` (model.run of the same ids, no KV cache, or lower()'s part of it reaching
    past `start`) for layers below `start`; layers `start` and up run again under `hooks`.
    Every field spans all layers, as a whole run's."""
    if start == 0:
        return model.run(plain.ids, hooks=hooks)
    if start >= len(plain.attentions):
        raise ValueError(f"the plain run has layers 0-{len(plain.attentions) - 1}; it cannot "
                         f"enter layer {start}")
    top = part(model, start, model.config.n_layer)
    entering = np.array(plain.hidden_states[start])  # [T, d_model]: layer `start`'s input
    moved = shifted(hooks, start).then(Hooks({"hook_embed": lambda x: entering}))
    upper = top.run(plain.ids, hooks=moved)
    return dataclasses.replace(upper, tokens=plain.tokens, special=plain.special, **{
        name: np.concatenate([getattr(plain, name)[:start], getattr(upper, name)])
        for name in FIELDS})
