"""Module 5's figure: the loss on the repeat as SmolLM2's top induction heads are switched
off, one, three, five, ten, against as many random heads (results.log [S18])."""

import numpy as np

from attention_workshop.figures import Drawing
from attention_workshop.figures.canvas import new_figure, save, styled
from attention_workshop.modules import module4, module5


@styled
def heads_off(m5, m4, path):  # module5.Result, module4.Result, Path -> Path
    """x: heads switched off; y: nats on the repeat. The top heads' line climbs toward the
    new tokens' loss; the random draws (each a dot, their mean a bar) stay near the start."""
    s = m5.smollm2
    ks = sorted(s.loss_top)
    fig, ax = new_figure(6.4, 4.2)
    first = m4.patterns["induction"].loss_first
    ax.axhline(first, color="0.6", linestyle="--", linewidth=1)
    ax.text(ks[-1], first, "first half: new tokens", ha="right", va="bottom", fontsize=8,
            color="0.35")
    ax.plot([0, *ks], [s.loss_plain, *(s.loss_top[k] for k in ks)], marker="o",
            color="#7b3294", label="top induction heads off")
    for k, loss in zip([0, *ks], [s.loss_plain, *(s.loss_top[k] for k in ks)], strict=True):
        ax.annotate(f"{loss:.2f}", (k, loss), textcoords="offset points", xytext=(6, -10),
                    fontsize=8)
    random = [loss for _, loss in s.loss_random]
    n = len(s.loss_random[0][0])
    ax.scatter([n] * len(random), random, color="#008837", zorder=3,
               label=f"{n} random heads off (one dot a draw)")
    ax.hlines(np.mean(random), n - 0.35, n + 0.35, color="#008837", linewidth=2)
    ax.set(xlabel="heads switched off", ylabel="next-token loss on the repeat (nats)",
           xticks=[0, *ks], xlim=(-0.5, ks[-1] + 1), ylim=(0, first * 1.08))
    ax.set_title(f"{module4.MODEL_NAME}: the repeat is predicted by a few heads", fontsize=11)
    ax.legend(loc="center right", fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return save(fig, path)


ANNOTATED = 8  # the strongest cells that carry their number


@styled
def effect_map_figure(found, path):  # effect_map.EffectMap, Path | None -> Path | Figure
    """`ablate --map`'s figure: one cell per head (rows layers from 0 at the top, columns
    heads), coloured by how many nats the loss rises with that head alone switched off (red;
    blue where it falls), the strongest ANNOTATED cells with their number."""
    effect = found.effect  # [n_layer, n_head]
    L, H = effect.shape
    fig, ax = new_figure(max(4.2, 0.42 * H + 2.4), max(3.2, 0.2 * L + 1.5))
    edge = max(float(np.abs(effect).max()), 1e-6)  # the scale is symmetric: 0 is white
    im = ax.imshow(effect, cmap="RdBu_r", vmin=-edge, vmax=edge, aspect="auto",
                   interpolation="nearest")
    for lay, h, e in found.top(ANNOTATED):
        if e > 0:
            ax.text(h, lay, f"{e:.2f}", ha="center", va="center", fontsize=6.5,
                    color="white" if e > 0.55 * edge else "black")
    ax.set(xlabel="head (from 0)", ylabel="layer (from 0)", xticks=range(H),
           yticks=range(0, L, 1 if L <= 12 else 2))
    ax.tick_params(labelsize=7)
    part = "the repeat" if found.part == "repeat" else "the text"
    ax.set_title(f"{found.model}: each head switched off alone ({found.how})\nhow much the "
                 f"loss on {part} rises (every head on: {found.before:.2f} nats)", fontsize=10)
    bar = fig.colorbar(im, ax=ax, shrink=0.8)
    bar.set_label("rise in next-token loss (nats)")
    return save(fig, path)


FIGURES = {
    "heads_off.png": Drawing((module5.Result, module4.Result), 0.4, heads_off, about=(
        "Module 5 (log [S18] lines 2-7): SmolLM2's loss on the repeat as its top induction "
        "heads are switched off, beside random heads")),
}
