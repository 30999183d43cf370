"""Switch heads off, or swap them in from another run: ablation and patching as hooks.

A head's output z (hook_z, [T, d_head] per head, before W_O mixes the heads into d_model)
is all a head adds to the residual stream; W_O's bias is the layer's, not a head's. So:

    zero   z = 0: the head adds nothing
    mean   z = z averaged over the input's own positions, the same row at every position:
           the head still adds its usual amount, but no longer says which token it read
    patch  z = the head's z from another run of the same length (activation patching):
           the head says what it said there

Heads are (layer, head), both counted from 0, query heads (a grouped-query model's KV head
is shared, but each query head has its own z). Example:

    hooks = ablation(cfg, [(18, 6), (17, 4)], "zero")   # -> hooks.Hooks on 2 layers' hook_z
    model.run(ids, ablate=[(18, 6)])                    # model.py builds the same hooks
"""

from numbers import Integral

import numpy as np

from attention_workshop.errors import WorkshopError
from attention_workshop.real.hooks import Hooks

HOWS = ("zero", "mean")


def shown(value, limit=40):  # any value a caller gave -> its repr on one short line
    """Example: shown((18, 6)) -> '(18, 6)'; shown("x" * 10**6) -> "'xxx…" (40 characters);
    shown(10**5000) -> '<a number of ~5001 digits>' (Python will not write out more than 4300
    digits)."""
    from attention_workshop.reading import printable

    if isinstance(value, Integral) and abs(int(value)) >= 10 ** limit:
        return f"<a number of ~{int(abs(int(value)).bit_length() * 0.30103) + 1} digits>"
    try:
        text = repr(value)
    except ValueError:  # a container holding such a number
        text = f"a {type(value).__name__} with a huge number"
    return printable(text, limit)


def head_name(head):  # (layer, head) -> "L18H6", the spelling the log and `ablate` use
    return f"L{shown(head[0], 12)}H{shown(head[1], 12)}"


def check_heads(cfg, heads, what="ablate"):  # ModelConfig, [(layer, head)] -> [(int, int)]
    """Each head a pair of whole numbers inside the model, none twice; pairs as tuples, lists
    or a numpy array's rows (np.array([[18, 6]])). Example (SmolLM2, 30 layers of 9 heads):
    [(18, 6)] -> [(18, 6)]; [(30, 0)] -> WorkshopError "head L30H0 is past the model: ...";
    [(18, 6), (18, 6)] -> "head L18H6 is listed twice; ..."."""
    if isinstance(heads, str | bytes) or not hasattr(heads, "__iter__") or (
            isinstance(heads, np.ndarray) and heads.ndim == 0):
        raise WorkshopError(f"{what} takes a list of (layer, head) pairs, e.g. [(18, 6)]; got "
                            f"{shown(heads)}")
    checked = []
    for item in heads:
        pair = tuple(item) if isinstance(item, list | tuple | np.ndarray) else None
        if pair is None or len(pair) != 2 or not all(
                isinstance(n, Integral) and not isinstance(n, bool | np.bool_) for n in pair):
            raise WorkshopError(f"{what}: give each head as (layer, head), two whole numbers, "
                                f"e.g. (18, 6); got {shown(item)}")
        layer, head = (int(n) for n in pair)
        if layer < 0 or head < 0:
            raise WorkshopError(f"{what}: head {head_name(pair)} has a negative number; layers "
                                "and heads count from 0")
        if layer >= cfg.n_layer or head >= cfg.n_head:
            raise WorkshopError(f"{what}: head {head_name(pair)} is past the model: it has "
                                f"layers 0-{cfg.n_layer - 1} and heads 0-{cfg.n_head - 1}")
        if (layer, head) in checked:
            raise WorkshopError(f"{what}: head {head_name(pair)} is listed twice; list each "
                                "head once")
        checked.append((layer, head))
    return checked


def check_how(how):  # -> None, or WorkshopError
    if not isinstance(how, str) or how not in HOWS:
        raise WorkshopError(f"unknown ablation how={shown(how)}; choose one of "
                            f"{', '.join(HOWS)}")


def by_layer(heads):  # [(layer, head)] -> {layer: [head, ...]}, layers in order
    """Example: [(3, 1), (0, 2), (3, 0)] -> {0: [2], 3: [1, 0]}."""
    layers = {}
    for layer, head in sorted(heads, key=lambda lh: lh[0]):
        layers.setdefault(layer, []).append(head)
    return layers


def replaced(heads, how):  # [head], "zero" | "mean" -> hook_z fn [n_head, T, d] -> new z
    def switch_off(z):  # [n_head, T, d_head] -> a copy with the heads replaced
        z = z.copy()
        if how == "zero":
            z[heads] = 0.0
        else:  # each head's mean over the positions, broadcast back to every position
            z[heads] = z[heads].mean(axis=1, keepdims=True)
        return z
    return switch_off


def ablation(cfg, heads, how="zero"):  # ModelConfig, [(layer, head)], how -> Hooks
    """Hooks that switch the heads off at their layers' hook_z; no heads -> Hooks() (a plain
    run). Example: ablation(cfg, [(0, 1)]).functions -> {"blocks.0.attn.hook_z": [fn]}."""
    check_how(how)
    return Hooks({f"blocks.{layer}.attn.hook_z": replaced(heads_, how)
                  for layer, heads_ in by_layer(check_heads(cfg, heads)).items()})


def patching(cfg, patch, T):  # ModelConfig, {(layer, head): RunResult}, tokens -> Hooks
    """Hooks that put each listed head's output from its other run (RunResult.head_outputs
    [L, H, T, d_head]) in place of this run's. A run of another length is refused: position
    i of one would be given the head output of a different position of the other."""
    if not isinstance(patch, dict):
        raise WorkshopError("patch takes a dict {(layer, head): another run's result}")
    heads = check_heads(cfg, list(patch), "patch")
    sources = {}
    for (layer, head), other in zip(heads, patch.values(), strict=True):
        outputs = getattr(other, "head_outputs", None)
        if outputs is None or outputs.shape[:2] != (cfg.n_layer, cfg.n_head):
            raise WorkshopError(f"patch: {head_name((layer, head))}'s source is not a run of "
                                "this model; give model.run(...)'s result")
        if outputs.shape[2] != T:
            raise WorkshopError(f"patch: {head_name((layer, head))}'s source run has "
                                f"{outputs.shape[2]} tokens, this one {T}; patching takes a "
                                "head's output position by position, so give runs of the same "
                                "length")
        sources.setdefault(layer, []).append((head, outputs[layer, head]))

    def swapped(pairs):  # [(head, [T, d_head])] -> hook_z fn
        def patch_in(z):  # [n_head, T, d_head] -> a copy with the heads' outputs swapped
            z = z.copy()
            for head, given in pairs:
                z[head] = given
            return z
        return patch_in
    return Hooks({f"blocks.{layer}.attn.hook_z": swapped(pairs)
                  for layer, pairs in sorted(sources.items())})


def interventions(cfg, T, ablate=None, how="zero", patch=None, cached=False):
    # ModelConfig, tokens run, heads, how, {head: RunResult}, a KV cache in use -> Hooks
    """What Model.run(ablate=..., how=..., patch=...) runs with: both kinds at once, as long
    as no head is in both. With a KV cache (decoding) only zero ablation makes sense: the
    new token alone runs, so it has no other positions to average over or to match."""
    check_how(how)
    ablate = [] if ablate is None else check_heads(cfg, ablate)  # an array has no truth value
    patch = {} if patch is None else patch
    if not isinstance(patch, dict):
        raise WorkshopError("patch takes a dict {(layer, head): another run's result}")
    if cached and (patch or (ablate and how != "zero")):
        raise WorkshopError("with a KV cache only the new tokens run: mean ablation and "
                            "patching need the whole sequence; run it without past")
    hooks = ablation(cfg, ablate, how)
    if patch:
        both = set(check_heads(cfg, ablate)) & set(check_heads(cfg, list(patch), "patch"))
        if both:
            raise WorkshopError(f"head {head_name(min(both))} is both ablated and patched; "
                                "give it to one of them")
        hooks = hooks.then(patching(cfg, patch, T))
    return hooks


def check_control(cfg, n, name="the model"):  # ModelConfig, heads chosen -> None, or error
    """The random control draws as many heads as were chosen, none of them, so at most half
    of the model's heads can be chosen. Example (SmolLM2, 270 heads): n 135 -> None; n 136 ->
    WorkshopError "136 heads switched off leave 134 others ...; give at most 135"."""
    total = cfg.n_layer * cfg.n_head
    if n > total:  # e.g. --top 10**21: not "leave -999... others"
        raise WorkshopError(f"{n} heads are more than {name}'s {total}, and the random control "
                            f"draws as many others: give at most {total // 2}")
    if n > total // 2:
        raise WorkshopError(f"{n} heads switched off leave {total - n} others to draw the "
                            f"random control of as many from: {name} has {total} heads; give "
                            f"at most {total // 2}")


def random_heads(cfg, chosen, draws, seed=0, around=2):
    # ModelConfig, [(layer, head)], n draws -> [[(layer, head)] * len(chosen)] * draws
    """The control: as many heads as `chosen`, drawn at random (np.random.default_rng(seed),
    without replacement in a draw) from the same layers give or take `around`, never one of
    the chosen. Example: chosen [(18, 6), (17, 4)] in a 30-layer model -> draws from layers
    15-20, e.g. [[(16, 2), (19, 0)], ...]: the same on every call. More than half of the
    model's heads chosen leave too few others for a draw: WorkshopError (check_control)."""
    chosen = check_heads(cfg, chosen)
    check_control(cfg, len(chosen))
    layers = [layer for layer, _ in chosen]
    lo, hi = max(min(layers) - around, 0), min(max(layers) + around, cfg.n_layer - 1)
    pool = [(lay, h) for lay in range(lo, hi + 1) for h in range(cfg.n_head)
            if (lay, h) not in chosen]
    if len(pool) < len(chosen):
        pool = [(lay, h) for lay in range(cfg.n_layer) for h in range(cfg.n_head)
                if (lay, h) not in chosen]
    rng = np.random.default_rng(seed)
    return [sorted(pool[int(i)] for i in rng.choice(len(pool), len(chosen), replace=False))
            for _ in range(draws)]

