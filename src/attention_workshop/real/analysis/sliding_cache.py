"""A sliding KV cache: a decoder that keeps only the last W tokens' keys and values, with or
without the first few (the sinks), and the loss it pays on a long text (StreamingLLM, Xiao
et al. 2023).

Decoding with a cache that evicts token t - W when token t comes is one forward pass with a
banded causal mask: query t sees keys j with t - W < j <= t (and j < sinks, the first tokens
kept). Each cached key was computed when its own token ran, seeing that token's own window,
which is exactly what the band gives every layer (tests/test_sliding_cache.py checks it
against decoding token by token, ours and transformers', with the cache cut by hand).

Positions: the keys keep the rotary positions they were computed at, and each new token runs
at its place in the text, so within the window the distances are the true ones, and a sink
seen from token 600 is 600 positions away. (StreamingLLM numbers the positions inside the
cache instead, so its sinks are never more than W + 4 away; inside the window rotary sees
only distances, so the two differ only in the sinks' distance.)

The tokens before W see the same keys under every variant, so they run once and are the
cache the variants continue from; only tokens W .. T - 1 run again, and they are the ones
scored. No [T, T] weights are kept: a pass holds one layer's scores at a time.

Example: band(3, window=2, sinks=1) -> [[1 0 0], [1 1 0], [1 1 1]] (row 2 sees 1, 2 and the
sink 0); losses(model, ids, 128, {"full": None, "window": 0, "window + 4 sinks": 4}).
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.errors import WorkshopError
from attention_workshop.real.config import LONG_TOKENS
from attention_workshop.real.hooks import Hooks


@dataclass(frozen=True)
class Sliding:
    window: int  # W: the newest tokens the cache keeps
    scored: int  # the tokens scored: positions W .. T - 2, each predicting the next
    nats: dict  # {variant: [scored] -log p(next token)}, e.g. {"full": ..., "window": ...}
    cache_bytes: dict  # {variant: bytes of keys and values the cache holds at its largest}

    def perplexity(self, name):  # -> exp(mean nats) of that variant
        return float(np.exp(np.mean(self.nats[name])))


def band(T, window, sinks=0, start=0):  # -> [T, start + T] bool: which keys each query sees
    """Query i, at position start + i, sees key j when start + i - window < j <= start + i or
    j < sinks. Example: band(2, 1, start=1) -> [[0 1 0], [0 0 1]]."""
    t = np.arange(start, start + T)[:, None]  # [T, 1] each query's position
    j = np.arange(start + T)[None, :]  # [1, S] each key's
    return (j <= t) & ((j > t - window) | (j < sinks))


def banded(n_layer, mask):  # layers, [T, S] bool -> Hooks: every layer's scores masked
    def keep(scores):  # [n_head, T, S] -> the same, -inf where the cache has no key
        return np.where(mask, scores, -np.inf)
    return Hooks({f"blocks.{i}.attn.hook_scores": keep for i in range(n_layer)})


class KeptCache:
    """A hook consumer (hooks.py's protocol, as trace.Trace) that keeps only what a sliding
    cache needs: each layer's keys and values, and the final norm's output."""

    def __init__(self, cfg, T, dtype, T_keys=None):
        S = T if T_keys is None else T_keys
        shape = (cfg.n_layer, cfg.n_kv_head, S, cfg.d_head)
        self.out = {"keys": np.empty(shape, dtype), "values": np.empty(shape, dtype)}

    def hooks(self):
        return self

    def __call__(self, name, value):
        if name == "ln_final.hook_normalized":
            self.out["hidden"] = value  # [T, d_model]
        return value

    def wants(self, name):
        return False

    def layer(self, i):
        return KeptLayer(self.out, i)

    def result(self):  # -> {"keys", "values": [L, K, S, d_head], "hidden": [T, d_model]}
        return self.out


KEPT = {"attn.hook_k": "keys", "attn.hook_v": "values"}  # [K, S, d_head] each, S with the cache


class KeptLayer:
    def __init__(self, out, i):
        self.out, self.i = out, i

    def __call__(self, name, value):
        if name in KEPT:
            self.out[KEPT[name]][self.i] = value
        return value

    def wants(self, name):
        return False


def long_text():  # -> the workshop's own long text (package data), as it is stored
    """~950 words about the workshop, written for it and frozen with the package, so the
    log's numbers never move when the docs do. Example: long_text()[:13] -> 'This workshop'."""
    from importlib.resources import files

    return files("attention_workshop").joinpath(TEXT_FILE).read_text(encoding="utf-8")


TEXT_FILE = "data/long_text.txt"  # 1,085 SmolLM2 tokens


def in_float32(model):  # Model -> the same model on float32 copies of its weights
    """Twice as fast as float64 and the same perplexity to two decimals
    (tests/test_sliding_cache.py). Example: in_float32(smollm2_64).dtype -> 'float32'."""
    import dataclasses

    weights = {name: np.asarray(w, np.float32) for name, w in model.weights.items()}
    return dataclasses.replace(model, weights=weights, blocks={})


def forward(model, ids, past=None, hooks=None):  # Model, [T] ids -> KeptCache's dict
    """The family's readable forward (the scores hook asks for the formula in its steps, so
    an accelerator would add nothing), one BLAS thread: digits that never depend on it."""
    from attention_workshop.real.blas_threads import one_blas_thread
    from attention_workshop.real.families import family

    with np.errstate(over="raise", invalid="raise", divide="ignore"), one_blas_thread():
        return family(model.config.family).forward(
            model.weights, model.config, np.asarray(ids), past=past, hooks=hooks,
            trace=KeptCache)


def nats(model, hidden, targets):  # Model, [n, d_model], [n] ids -> [n] -log p(target)
    from attention_workshop.real.blas_threads import one_blas_thread

    with one_blas_thread():
        logits = np.asarray(model.head(False)(hidden), dtype=np.float64)  # [n, n_vocab]
    top = logits.max(axis=-1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.exp(logits - top).sum(axis=-1))
    return log_norm - logits[np.arange(len(targets)), targets]


def check(model, ids, window, variants):  # -> None, or WorkshopError naming the problem
    cfg = model.config
    if not cfg.causal or cfg.positions != "rotary":
        raise WorkshopError(f"{model.name} is not a decoder with rotary positions: a sliding "
                            "cache is measured on one, e.g. smollm2")
    room = min(cfg.n_ctx, LONG_TOKENS)
    if len(ids) > room:
        raise WorkshopError(f"the text is {len(ids)} tokens long, but a sliding cache runs at "
                            f"most {room} here; shorten it")
    if not 1 <= window < len(ids) - 1:
        raise WorkshopError(f"the window must be from 1 to {len(ids) - 2} tokens for a "
                            f"{len(ids)}-token text (got {window})")
    if any(s is not None and not 0 <= s < window for s in variants.values()):
        raise WorkshopError(f"sinks must be from 0 to {window - 1} with a {window}-token window")


def losses(model, ids, window, variants):  # Model, [T] ids, W, {name: sinks or None} -> Sliding
    """Each variant's loss on tokens W + 1 .. T - 1: None is the full cache, a number the
    window plus that many first tokens (0: the window alone)."""
    from attention_workshop.real.decode import cache_bytes

    ids = [int(i) for i in ids]
    check(model, ids, window, variants)
    T, per_token = len(ids), cache_bytes(model.config, itemsize=np.dtype(model.dtype).itemsize)
    first = forward(model, ids[:window])  # tokens 0 .. W - 1: the same under every variant
    past = {"keys": first["keys"], "values": first["values"]}
    scored, targets = ids[window:-1], np.asarray(ids[window + 1:])
    out, held = {}, {}
    for name, sinks in variants.items():
        hooks = None if sinks is None else banded(model.config.n_layer,
                                                  band(len(scored), window, sinks, window))
        out[name] = nats(model, forward(model, scored, past, hooks)["hidden"], targets)
        held[name] = per_token * (T if sinks is None else window + sinks)
    return Sliding(window=window, scored=len(scored), nats=out, cache_bytes=held)
