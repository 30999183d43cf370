"""Named hook points: the places where a forward pass lets its caller read or replace a value.

Every family's forward (bert.py, gpt2.py, llama.py, qwen2.py) calls `hooks(name, value)` at
the same points, named as TransformerLens names them (layer i counted from 0):

    hook_embed                  [T, d_model]          the embeddings, before layer 0
    blocks.{i}.attn.hook_q      [n_head, T, d_head]   queries (after rotary, if any)
    blocks.{i}.attn.hook_k      [n_kv_head, S, d_head] keys (S = cached + new tokens)
    blocks.{i}.attn.hook_v      [n_kv_head, S, d_head] values
    blocks.{i}.attn.hook_scores [n_head, T, S]        q k^T / sqrt(d_head), masked (-inf);
                                                      made only when a hook asks for it
    blocks.{i}.attn.hook_pattern [n_head, T, S]       the weights (rows sum to 1)
    blocks.{i}.attn.hook_z      [n_head, T, d_head]   each head's output, before W_O
    blocks.{i}.hook_attn_out    [T, d_model]          the attention block's output (after W_O)
    blocks.{i}.hook_mlp_out     [T, d_model]          the MLP's output
    blocks.{i}.hook_resid_post  [T, d_model]          the layer's output (the residual stream)
    ln_final.hook_normalized    [T, d_model]          a decoder's final norm

A hook is `fn(value) -> None` (it only reads) or `-> array` (the value from then on).
trace.Trace (what a RunResult keeps) reads these points; interventions replace hook_z.

Example: Hooks({"blocks.0.attn.hook_z": lambda z: z * 0})("blocks.0.attn.hook_z", z) -> zeros;
Hooks()("hook_embed", x) is x.
"""

import numpy as np

from attention_workshop.attention import scaled_dot_product_attention, softmax

NAMES = ("attn.hook_q", "attn.hook_k", "attn.hook_v", "attn.hook_scores", "attn.hook_pattern",
         "attn.hook_z", "hook_attn_out", "hook_mlp_out", "hook_resid_post")  # each layer's
GLOBAL = ("hook_embed", "ln_final.hook_normalized")


def point_names(n_layer):  # -> every hook name a forward of n_layer layers calls, in order
    """Example: point_names(1)[:2] -> ['hook_embed', 'blocks.0.attn.hook_q']."""
    first, last = GLOBAL
    return [first, *(f"blocks.{i}.{n}" for i in range(n_layer) for n in NAMES), last]


class Hooks:
    """{hook name: [fn, ...]}: each fn is called in turn on the value the one before gave."""

    def __init__(self, functions=None):  # {name: fn or [fn, ...]}
        self.functions = {name: list(fns) if isinstance(fns, list | tuple) else [fns]
                          for name, fns in (functions or {}).items()}

    def __call__(self, name, value):  # -> the value, as the hooks on `name` left it
        for fn in self.functions.get(name, ()):
            out = fn(value)
            value = value if out is None else out
        return value

    def __bool__(self):  # any hook at all
        return bool(self.functions)

    def wants(self, name):
        return name in self.functions

    def then(self, other):  # -> Hooks running self's functions, then other's, on each point
        """Example: user.then(trace): a replaced head output is what the trace keeps."""
        merged = {name: list(fns) for name, fns in self.functions.items()}
        for name, fns in (other.functions if other else {}).items():
            merged.setdefault(name, []).extend(fns)
        return Hooks(merged)

    def layer(self, i):  # -> LayerHooks: layer i's points by their short names
        return LayerHooks(self, f"blocks.{i}.")


class LayerHooks:
    """One layer's points: hook("attn.hook_z", z) calls the hooks on "blocks.{i}.attn.hook_z"."""

    def __init__(self, hooks, prefix):
        self.hooks, self.prefix = hooks, prefix

    def __call__(self, name, value):
        return self.hooks(self.prefix + name, value)

    def wants(self, name):
        return self.hooks.wants(self.prefix + name)


class Chain:
    """Two sets of hooks on every point, one after the other: what `first` leaves is what
    `second` sees (a caller's intervention, then the trace that keeps the result)."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def __call__(self, name, value):
        return self.second(name, self.first(name, value))

    def wants(self, name):
        return self.first.wants(name) or self.second.wants(name)

    def layer(self, i):
        return Chain(self.first.layer(i), self.second.layer(i))


def chain(first, second):  # Hooks or None, a hook set -> the two in turn (just `second` alone
    """when there is no first: a plain run pays for no extra call)."""
    return Chain(first, second) if first else second


def hooked_attention(q, k, v, mask, hook, attend=scaled_dot_product_attention):
    # [H, T, d], [H, S, d], [H, S, d], [T, S] bool or None, layer hook -> ([H, T, d], [H, T, S])
    """The formula with its hook points: q, k, v as the family shares them out to the query
    heads; hook_scores (only when asked for: otherwise `attend` runs the formula whole),
    hook_pattern (a replaced pattern blends the values again), hook_z."""
    if hook.wants("attn.hook_scores"):  # the formula in its steps, to show the scores
        scores = (q / np.sqrt(q.shape[-1], dtype=q.dtype)) @ np.swapaxes(k, -1, -2)  # [H, T, S]
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)  # as the core's formula masks
        pattern = softmax(hook("attn.hook_scores", scores))
        out = pattern @ v
    else:
        out, pattern = attend(q, k, v, mask)
    given = hook("attn.hook_pattern", pattern)
    if given is not pattern:
        out = given @ v
    return hook("attn.hook_z", out), given
