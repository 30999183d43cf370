"""Every head's effect on its own: one ablation per head, and the next-token loss after each.

results.log [S18] switches off the top induction heads together; the map asks the question
head by head: switch off only L{l}H{h}, everything else on, and how much worse is the
forecast of the repeat? SmolLM2 has 30 x 9 = 270 heads, so 270 ablated runs. Two things make
that quick:

- an ablation in layer l changes nothing below it: the plain run is made once, and each
  ablated run starts at its layer from the residual stream the plain run had there
  (resume.py's part of the model, hook_embed = that stream), so layer 29's heads run one
  layer each and layer 0's all 30 (4,185 layers for the 270 heads: 140 runs' worth, not 270);
- the model's own working precision (float32 from a GGUF: the accelerator, real/fast/);
- the products on one BLAS thread: on this shared 2-core machine a two-thread BLAS on
  100-token products slowed to a tenth whenever the other core was busy. (Two runs at once
  on two Python threads, one BLAS thread each, were tried: the CPU time stayed (76 s against
  74 s one after another) and the wall time followed the machine's load more than the
  threads (76 s and 104 s at load 3-4; 20 s and 18 s for layers 24-29 at load 9), so the
  runs go one after another: simpler, and the same numbers to the bit.)

Example: m = load_model("smollm2"); ids, lead = head_patterns.sequence_for(m);
found = effect_map(m, ids, lead); found.after.shape -> (30, 9); found.top(1) ->
[(18, 6, 1.79)] (the loss on the repeat 1.99 -> 3.78 with L18H6 alone off, as [S18]'s top 1).
"""

import time
from dataclasses import dataclass

import numpy as np

from attention_workshop.errors import WorkshopError
from attention_workshop.real.analysis.head_effects import loss_rows, next_token_loss
from attention_workshop.real.blas_threads import one_blas_thread
from attention_workshop.real.hooks import Hooks
from attention_workshop.real.interventions import ablation, check_how
from attention_workshop.real.resume import part, shifted


@dataclass(frozen=True)
class EffectMap:
    model: str  # the model's name
    how: str  # "zero" or "mean"
    part: str  # the loss measured: "repeat" (the repeated part's second copy) or "text"
    before: float  # nats, every head on
    after: np.ndarray  # [n_layer, n_head]: nats with that head alone switched off
    seconds: float  # the runs' time, wall clock (not the model's loading)
    cpu_seconds: float  # and this process's CPU time in them (all its threads)

    @property
    def effect(self):  # [n_layer, n_head]: how much worse the forecast gets, nats
        return self.after - self.before

    def top(self, k):  # -> [(layer, head, effect)]: the k largest effects, largest first
        """Example: after [[2, 5], [1, 3]], before 1 -> top(2) [(0, 1, 4.0), (1, 1, 2.0)]."""
        order = np.argsort(-self.effect, axis=None, kind="stable")[:k]  # NaN (not run) last
        return [(int(i // self.after.shape[1]), int(i % self.after.shape[1]),
                 float(self.effect.flat[i])) for i in order]


def head_off(cfg, upper, plain, layer, head, how, rows):  # -> nats with that head alone off
    """Head (layer, head) of the model (`cfg`) switched off, the run from layer l up (`upper`:
    resume.part of the model from l; the layers below are the plain run's), its loss on
    `rows`."""
    entering = plain.hidden_states[layer]  # [T, d_model]: layer l's input in the plain run
    hooks = shifted(ablation(cfg, [(layer, head)], how), layer).then(
        Hooks({"hook_embed": lambda x: entering}))
    return next_token_loss(upper.run(plain.ids, hooks=hooks), rows)


def effect_map(model, ids, lead=None, how="zero", say=None, layers=None):
    # a decoder Model, [T] ids, head_patterns' lead (None: a plain text), how, progress(str),
    # the layers to map (None: all) -> EffectMap
    """`lead` given: ids are a lead token and a part repeated once (head_patterns.sequence_for)
    and the loss is the repeat's; otherwise the loss on every next token of the text.
    `say` (e.g. the command's progress) hears after each layer. With `layers`, the other
    layers' rows are NaN (not run)."""
    check_how(how)
    cfg = model.config
    if layers is not None and not all(isinstance(i, int) and 0 <= i < cfg.n_layer
                                      for i in layers):
        raise WorkshopError(f"layers: give layers 0-{cfg.n_layer - 1}, e.g. [17, 18]")
    part_name = "text" if lead is None else "repeat"
    rows = loss_rows(ids, lead)[part_name]  # the positions whose next token is scored
    start, cpu = time.perf_counter(), time.process_time()
    after = np.full((cfg.n_layer, cfg.n_head), np.nan)  # [n_layer, n_head]
    with one_blas_thread():
        plain = model.run(ids)
        for layer in range(cfg.n_layer) if layers is None else sorted(set(layers)):
            upper = part(model, layer, cfg.n_layer)  # layers l .. n_layer - 1, from 0
            after[layer] = [head_off(cfg, upper, plain, layer, h, how, rows)
                            for h in range(cfg.n_head)]
            if say is not None:
                say(f"layer {layer + 1}/{cfg.n_layer}: {cfg.n_head} heads switched off one at "
                    f"a time ({time.perf_counter() - start:.0f} s)")
    return EffectMap(model=model.name, how=how, part=part_name,
                     before=next_token_loss(plain, rows), after=after,
                     seconds=time.perf_counter() - start,
                     cpu_seconds=time.process_time() - cpu)
