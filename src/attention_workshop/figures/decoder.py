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


@styled
def pattern_grids(m4, path):  # module4.Result, Path -> Path
    """Three layer x head heatmaps side by side, one per pattern, every cell's score written."""
    cfg = m4.model.config
    L, H = cfg.n_layer, cfg.n_head
    cw, ch = 0.42, 0.24  # inches a cell: room for "0.93" at 7 pt
    width, height = 3 * H * cw + 3.4, L * ch + 1.9
    fig, axes = new_figure(width, height, ncols=3, margins={
        "left": 0.75 / width, "right": 1 - 1.05 / width, "bottom": 0.6 / height,
        "top": 1 - 1.1 / height, "wspace": 0.5 / (H * cw)})
    for ax, kind in zip(axes, KINDS, strict=True):
        found = m4.patterns[kind]
        image = ax.imshow(found.scores, cmap="Purples", vmin=0, vmax=1, aspect="auto")
        annotate_cells(image, fmt="{:.2f}", threshold=0.55, fontsize=7)
        ax.set_xticks(range(H), range(H))
        ax.set_yticks(range(L), range(L), fontsize=8)
        ax.tick_params(length=0, pad=2)
        ax.set(xlabel="head")
        lay, head, score = found.top[0]
        ax.set_title(f"{KINDS[kind]}\nbest L{lay} H{head} = {score:.2f}", fontsize=10)
        ax.spines[:].set_visible(False)
    axes[0].set_ylabel("layer")
    fig.suptitle(f"{module4.MODEL_NAME}: every head scored by a pattern, on 50 random tokens "
                 "repeated once", fontweight="bold")
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
    width, height = 0.5 * S + 2.6, 0.36 * n + 2.4
    fig, ax = new_figure(width, height, margins={
        "left": 1.4 / width, "right": 1 - 1.2 / width, "bottom": 1.1 / height,
        "top": 1 - 0.8 / height})
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="Blues", vmin=0, vmax=1, aspect="auto")
    annotate_cells(image, fmt="{:.2f}", threshold=0.55, fontsize=7)
    ax.set_xticks(range(S), tokens[:S], rotation=90, fontsize=8)
    ax.set_yticks(range(n), [f"{tokens[len(g.prompt_ids) + i]}" for i in range(n)], fontsize=8)
    ax.tick_params(length=0, pad=2)
    ax.set(xlabel="every token before it (the prompt, then what it wrote; Ġ marks a space)",
           ylabel="the token it wrote")
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
