"""Module 3's figures: every head of one layer, and bank's row across every layer and head.

Axes are labelled with the model's own tokens, as the tokenizer writes them.
"""

import numpy as np

from attention_workshop.figures.canvas import annotate_heatmap, new_figure, save, styled


@styled
def head_grid(tokens, weights, title, path, cols=4):  # list[str], [H, T, T], str, Path -> Path
    """One small heatmap per head (row = looking token, column = looked at), one colour scale."""
    H, T = weights.shape[0], len(tokens)
    rows = -(-H // cols)
    cell = float(np.clip(0.25 * T + 1.2, 2.6, 7.0))  # inches per head panel
    fig, axes = new_figure(cell * cols + 1.2, cell * rows + 0.9, nrows=rows, ncols=cols,
                           squeeze=False)
    font = float(np.clip(0.6 * 72 * (cell - 1.0) / T, 4, 8))  # points: a label per row fits
    for h, ax in enumerate(axes.flat):
        if h >= H:
            ax.axis("off")
            continue
        image = ax.imshow(weights[h], cmap="Blues", vmin=0, vmax=1)
        if T <= 7:
            annotate_heatmap(ax, weights[h], fmt="{:.2f}", threshold=0.5)
            for text in ax.texts:
                text.set_fontsize(7)
        ax.set_xticks(range(T), tokens, rotation=90, fontsize=font)
        ax.set_yticks(range(T), tokens, fontsize=font)
        ax.set_title(f"head {h}", fontsize=10)
        ax.spines[:].set_visible(False)
    fig.suptitle(title, fontweight="bold")
    fig.supxlabel("looked at (key)", fontsize=10)
    fig.supylabel("looking (query)", fontsize=10)
    fig.colorbar(image, ax=axes, shrink=0.6, label="attention weight (rows sum to 1)")
    return save(fig, path)


@styled
def layer_by_head(panels, title, path):  # [(subtitle, [L, H] weights)], str, Path -> Path
    """Side-by-side heatmaps, layers down and heads across, every cell annotated."""
    L, H = panels[0][1].shape
    fig, axes = new_figure(0.55 * H * len(panels) + 1.8, 0.5 * L + 2.0, ncols=len(panels),
                           squeeze=False)
    for ax, (subtitle, grid) in zip(axes.flat, panels, strict=True):
        image = ax.imshow(grid, cmap="Reds", vmin=0, vmax=1)
        annotate_heatmap(ax, grid, fmt="{:.2f}", threshold=0.5)
        for text in ax.texts:
            text.set_fontsize(7)
        ax.set_xticks(range(H), range(H))
        ax.set_yticks(range(L), range(L))
        ax.set(xlabel="head", ylabel="layer")
        ax.set_title(subtitle, fontsize=10)
        ax.spines[:].set_visible(False)
    fig.suptitle(title, fontweight="bold")
    fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
    return save(fig, path)


def draw_all(m3, out):  # Module 3's results, Path -> list[Path]
    """The head grid of the layer with bank's strongest look at its topic word, and bank's
    weight on river / money in every layer and head."""
    layer, name = m3["grid_layer"], m3["model_name"]
    river, money = m3["river"], m3["money"]
    paths = [head_grid(river.tokens, river.attentions[layer],
                       f'{name}, layer {layer}: every head\'s weights, "{m3["sentences"][0]}"',
                       out / "real_heads_layer.png")]
    b, r, m = m3["bank"], m3["river_index"], m3["money_index"]
    panels = [(f'"bank" -> "river" in "{m3["sentences"][0]}"', river.attentions[:, :, b, r]),
              (f'"bank" -> "money" in "{m3["sentences"][1]}"', money.attentions[:, :, b, m])]
    paths.append(layer_by_head(panels, f"{name}: how much bank looks at its topic word, "
                               "in every layer and head", out / "real_bank_heads.png"))
    return paths


def draw_sentence(model, result, out, layer=None, head=None):  # for `attention-workshop real`
    """The head grid of each layer the text report shows (the chosen one, or the top heads')."""
    from attention_workshop.real.heads import top_heads
    from attention_workshop.real.view import SHOWN

    if layer is None:
        found = top_heads(result.attentions, result.special, SHOWN, None, head)
        layers = sorted({lay for lay, *_ in found})
    else:
        layers = [layer]
    sentence = " ".join(result.tokens)
    return [head_grid(result.tokens, result.attentions[lay],
                      f"{model.name}, layer {lay}: every head's weights\n{sentence}",
                      out / f"real_layer{lay}.png") for lay in layers]

