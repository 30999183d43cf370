"""Module 4's figures: every head scored by a pattern, and attention while the model writes.

Axes are labelled with the model's own tokens as the tokenizer spells them, as results.log
does: "Ġ" marks a space, "Ċ" a line break (the writing figure says so under its axis).
"""

import numpy as np

from attention_workshop.figures import Drawing
from attention_workshop.figures.canvas import label, new_figure, save, styled
from attention_workshop.figures.glyphs import annotate_cells
from attention_workshop.modules import module4

KINDS = {"induction": "induction: the token after its own token's last time",
         "previous": "previous-token: the token just before",
         "sink": "sink: the first token"}


def readable(token):  # a byte-level token, kept as the log spells it, cut to 14 characters
    return label(token or "", 14)


def hundredths(score, chance):  # -> what a grid cell says: '94' for 0.94, '·' at chance or less
    """Example: hundredths(0.935, 0.014) -> '93'; hundredths(1.0, 0.01) -> '100';
    hundredths(0.012, 0.014) -> '·' (no more than a head with no pattern gets)."""
    return "\u00b7" if score <= chance else f"{100 * score:.0f}"


class Hundredths:  # annotate_cells' fmt: .format(score) -> hundredths(score, chance)
    def __init__(self, chance):
        self.chance = chance

    def format(self, score):
        return hundredths(score, self.chance)


@styled
def pattern_grids(m4, path):  # module4.Result, Path -> Path
    """Three layer x head heatmaps side by side, one per pattern: each score in hundredths
    (two digits, legible at 100 %), '·' where it is no more than chance (a head spreading
    every row evenly; each title gives its kind's chance), the top 3 framed."""
    from matplotlib.patches import Rectangle

    from attention_workshop.real.analysis.head_patterns import chance
    cfg = m4.model.config
    L, H = cfg.n_layer, cfg.n_head
    cw, ch = 0.42, 0.24  # inches a cell: room for "0.93" at 7 pt
    width, height = 3 * H * cw + 3.4, L * ch + 1.9
    fig, axes = new_figure(width, height, ncols=3, margins={
        "left": 0.75 / width, "right": 1 - 1.05 / width, "bottom": 0.6 / height,
        "top": 1 - 1.1 / height, "wspace": 0.5 / (H * cw)})
    for ax, kind in zip(axes, KINDS, strict=True):
        found = m4.patterns[kind]
        level = chance(kind, len(found.ids))  # Module 4's model: nothing leads the ids
        image = ax.imshow(found.scores, cmap="Purples", vmin=0, vmax=1, aspect="auto")
        annotate_cells(image, fmt=Hundredths(level), threshold=0.55, fontsize=7.5)
        for lay, h, _ in found.top[:3]:  # the top cells, framed
            ax.add_patch(Rectangle((h - 0.5, lay - 0.5), 1, 1, fill=False, edgecolor="#e08000",
                                   linewidth=1.6))
        ax.set_xticks(range(H), range(H))
        ax.set_yticks(range(L), range(L), fontsize=8)
        ax.tick_params(length=0, pad=2)
        ax.set(xlabel="head")
        lay, head, score = found.top[0]
        ax.set_title(f"{KINDS[kind]}\nbest L{lay} H{head} = {score:.2f}; chance {level:.3f}",
                     fontsize=10)
        ax.spines[:].set_visible(False)
    axes[0].set_ylabel("layer")
    fig.suptitle(f"{module4.MODEL_NAME}: every head scored by a pattern, on 50 random tokens "
                 "repeated once\n(cells in hundredths: 93 = 0.93; \u00b7 = no more than chance; "
                 "framed: the top 3)", fontweight="bold")
    bar = fig.add_axes((1 - 0.8 / width, 0.6 / height, 0.14 / width, 1 - 1.7 / height))
    fig.colorbar(image, cax=bar, label="mean weight on the pattern's token")
    return save(fig, path)



def content_head(generation):  # -> (layer, head) that looked hardest beyond sink and self
    from attention_workshop.figures.generation_view import strongest_head

    return strongest_head(generation.steps)


@styled
def writing(m4, path):  # module4.Result, Path -> Path
    """Rows: the tokens it wrote; columns: every token before; the strongest content head."""
    g = m4.continuation
    layer, head = content_head(g)
    tokens = [readable(t) for t in g.prompt_tokens + [s.token for s in g.steps]]
    n, S = len(g.steps), len(g.prompt_ids) + len(g.steps) - 1  # position n - 1 wrote the last
    grid = np.full((n, S), np.nan)
    for i, step in enumerate(g.steps):
        row = step.attention[layer, head]  # [positions before it]
        grid[i, :len(row)] = row
    width, height = 0.5 * S + 3.6, 0.36 * n + 2.4
    fig, ax = new_figure(width, height, margins={
        "left": 2.4 / width, "right": 1 - 1.2 / width, "bottom": 1.1 / height,
        "top": 1 - 0.8 / height})
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="Blues", vmin=0, vmax=1, aspect="auto")
    annotate_cells(image, fmt="{:.2f}", threshold=0.55, fontsize=7)
    ax.set_xticks(range(S), tokens[:S], rotation=90, fontsize=8)
    P = len(g.prompt_ids)  # row i: position P + i - 1 looks, and writes token P + i
    ax.set_yticks(range(n), [f"{P + i - 1}: {tokens[P + i - 1]} \u2192 {tokens[P + i]}"
                             for i in range(n)], fontsize=8)
    ax.tick_params(length=0, pad=2)
    ax.set(xlabel="every token before it (the prompt, then what it wrote; Ġ marks a space)",
           ylabel="the position that looks \u2192 the token it writes")
    ax.spines[:].set_visible(False)
    fig.suptitle(f'{module4.MODEL_NAME} writes after "{module4.PROMPT}": layer {layer}, head '
                 f"{head}\n(the head that looked hardest past the first token and itself; "
                 "blank: not yet written)", fontsize=10, fontweight="bold")
    bar = fig.add_axes((1 - 0.9 / width, 1.1 / height, 0.14 / width, 1 - 1.9 / height))
    fig.colorbar(image, cax=bar, label="attention weight (rows sum to 1)")
    return save(fig, path)


FIGURES = {  # file name -> Drawing(results it reads, rough seconds to draw, draw, about=...)
    "decoder_heads.png": Drawing((module4.Result,), 0.6, pattern_grids, about=(
        "Module 4 (log [S14] lines 1-5): every SmolLM2 head's induction, previous-token and "
        "sink score")),
    "decoder_writing.png": Drawing((module4.Result,), 0.3, writing, about=(
        "Module 4 (log [S13] lines 1-9): where one head looked as each new token was written")),
}
