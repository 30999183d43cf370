"""Module 3's figures: every head of one layer, and bank's row across every layer and head.

Axes are labelled with the model's own tokens, as the tokenizer writes them.
"""


import numpy as np

from attention_workshop.embeddings import SENT_MONEY, SENT_RIVER
from attention_workshop.figures import Drawing
from attention_workshop.figures.canvas import label, new_figure, save, styled
from attention_workshop.figures.glyphs import annotate_cells, edge_labels
from attention_workshop.figures.head_view import head_view_html
from attention_workshop.modules import module3
from attention_workshop.writing import write_atomic


@styled
def head_grid(tokens, weights, title, path, cols=4):  # list[str], [H, T, T], str, Path -> Path
    """One small heatmap per head (row = looking token, column = looked at), one colour scale.

    Every head is an image in one Axes measured in inches from the top left, where a grid of
    subplots would place it: 12 Axes built and drawn for nothing but their images took a
    quarter of the figure's time (their axes are off: no lines, no ticks)."""
    H, T = weights.shape[0], len(tokens)
    tokens = [label(t) for t in tokens]  # plain text, at most MAX_LABEL characters
    rows, cols = -(-H // cols), min(cols, H)
    cell = float(np.clip(0.25 * T + 1.2, 2.6, 7.0))  # inches per head panel
    space = 0.6 + 0.07 * max(len(t) for t in tokens)  # inches a rotated token label needs
    wspace, hspace = space / cell + 0.1, space / cell + 0.25  # between panels, x panel size
    left, right, bottom = 0.5 + space, 1.4, 0.3 + space  # inches
    top = 0.75 + 0.25 * title.count("\n")
    # at least a 1-inch panel whatever the labels take (50-character tokens once left none)
    width = max(cell * cols + 1.6, left + right + cols + (cols - 1) * wspace)
    height = max(cell * rows + 1.0, bottom + top + rows + (rows - 1) * hspace)
    fig, ax = new_figure(width, height, margins={"left": 0, "right": 1, "bottom": 0, "top": 1})
    ax.set(xlim=(0, width), ylim=(height, 0))  # inches, y down the page
    ax.set_axis_off()
    font = float(np.clip(0.6 * 72 * (cell - 1.0) / T, 4, 8))  # points: a label per row fits
    squares = panel_squares(H, rows, cols, (left, top, width - left - right,
                                             height - top - bottom), (wspace, hspace))
    for h, (x, y, side) in enumerate(squares):
        image = ax.imshow(weights[h], cmap="Blues", vmin=0, vmax=1, aspect="auto",
                          extent=(x, x + side, y + side, y))
        if T <= 7:
            annotate_cells(image, fmt="{:.2f}", threshold=0.5, fontsize=7)
        # the tokens where ticks would put them, without tick marks (one beside "0.36"
        # would read as a minus sign) and without 2 x T ticks a panel (half the drawing)
        edge_labels(image, tokens, font)
        ax.text(x + side / 2, y - 6 / 72, f"head {h}", ha="center", va="baseline",
                fontsize=10, fontweight="bold")  # an axes title's place: 6 points above
    fig.suptitle(title, fontweight="bold", y=1 - 0.15 / height, va="top")
    fig.supxlabel("looked at (key)", fontsize=10)
    fig.supylabel("looking (query)", fontsize=10)
    bar = fig.add_axes((1 - 1.0 / width, 0.25, 0.18 / width, 0.5))  # [left, bottom, w, h]
    fig.colorbar(image, cax=bar, label="attention weight (rows sum to 1)")
    return save(fig, path)


def panel_squares(n, rows, cols, box, spaces):  # -> [(left, top, side)], inches, per panel
    """Where fig.subplots(rows, cols) inside `box` (left, top, width, height), with
    subplots_adjust's wspace and hspace (fractions of a panel), puts the first n panels, each
    shrunk to a centred square as imshow's equal aspect shrinks it.
    Example: panel_squares(2, 1, 2, (0, 0, 2.2, 1.0), (0.2, 0)) -> [(0, 0, 1), (1.2, 0, 1)]."""
    x0, y0, width, height = box
    wspace, hspace = spaces
    box_w, box_h = width / (cols + (cols - 1) * wspace), height / (rows + (rows - 1) * hspace)
    side = min(box_w, box_h)
    return [(x0 + col * box_w * (1 + wspace) + (box_w - side) / 2,
             y0 + row * box_h * (1 + hspace) + (box_h - side) / 2, side)
            for row, col in (divmod(h, cols) for h in range(n))]


@styled
def layer_by_head(panels, title, path):  # [(subtitle, [L, H] weights)], str, Path -> Path
    """Heatmaps one above the other, layers down and heads across, every cell annotated in
    type as large as the axis labels' (10 pt: readable at the PNG's own size)."""
    L, H = panels[0][1].shape
    cell, n = 0.62, len(panels)  # inches a side: room for "0.00" at 10 pt
    gap = 0.95  # inches between panels: the lower one's title, the upper one's axis labels
    width, height = cell * H + 2.3, n * cell * L + (n - 1) * gap + 1.55  # inches
    fig, axes = new_figure(width, height, nrows=n, squeeze=False, margins={
        "left": 0.7 / width, "right": 1 - 1.6 / width, "bottom": 0.65 / height,
        "top": 1 - 0.9 / height, "hspace": gap / (cell * L)})
    for ax, (subtitle, grid) in zip(axes.flat, panels, strict=True):
        image = ax.imshow(grid, cmap="Reds", vmin=0, vmax=1)
        annotate_cells(image, fmt="{:.2f}", threshold=0.5, fontsize=10)
        ax.set_xticks(range(H), range(H))
        ax.set_yticks(range(L), range(L))
        ax.tick_params(length=0, pad=3)
        ax.set(xlabel="head", ylabel="layer")
        ax.set_title(subtitle, fontsize=10)
        ax.spines[:].set_visible(False)
    fig.suptitle(title, fontweight="bold")
    bar = fig.add_axes((1 - 1.25 / width, 0.65 / height, 0.15 / width, 1 - 1.55 / height))
    fig.colorbar(image, cax=bar, label="attention weight")
    return save(fig, path)


def heads_layer(m3, path):  # module3.Result, Path -> Path
    """Every head of the layer holding bank's strongest look at river."""
    layer = m3.strongest[0]
    title = f'{module3.MODEL_NAME}, layer {layer}: every head\'s weights, "{SENT_RIVER}"'
    return head_grid(m3.river.tokens, m3.river.attentions[layer], title, path)


def bank_heads(m3, path):  # module3.Result, Path -> Path
    """Bank's weight on river / money in every layer and head."""
    panels = [(f'"bank" -> "river" in "{SENT_RIVER}"', m3.to_river),
              (f'"bank" -> "money" in "{SENT_MONEY}"', m3.to_money)]
    return layer_by_head(panels, f"{module3.MODEL_NAME}: how much bank looks at its topic word, "
                         "in every layer and head", path)


def head_view_page(m3, path):  # module3.Result, Path -> Path
    """The interactive page of every head, opened on the strongest head's layer."""
    return write_atomic(path, head_view_html(
        f'{module3.MODEL_NAME}: every head, "{SENT_RIVER}"', m3.river.tokens,
        m3.river.attentions, *m3.strongest))


# costs: measured seconds to draw (medians of 3 runs), so parallel.py's halves come out even
FIGURES = {  # file name -> Drawing(results it reads, rough seconds to draw, draw, about=...)
    "real_heads_layer.png": Drawing((module3.Result,), 0.14, heads_layer, about=(
        "Module 3 (log [S7] lines 6-19): every head of the layer where bank looks most at "
        "river")),
    "real_bank_heads.png": Drawing((module3.Result,), 0.16, bank_heads, about=(
        "Module 3 (log [S7] lines 2-5): bank's weight on river / money in every layer and head")),
    "real_head_view.html": Drawing((module3.Result,), 0.01, head_view_page, about=(
        "Module 3: every MiniLM head as lines between tokens (open it in a browser)")),
}


def draw_sentence(model, result, out, chosen, fmt="png"):  # for `real --out`
    """The head grid of each layer holding a head the text report shows
    (printout.chosen_heads: [(layer, head)]), as real_layerL.png (or .svg, .pdf: `fmt`),
    and head_view.html opened on the first of those heads."""
    sentence = " ".join(result.tokens)
    layers = sorted({lay for lay, _ in chosen})
    page = write_atomic(out / "head_view.html", head_view_html(
        f"{model.name}: {sentence}", result.tokens, result.attentions, *chosen[0]))
    name, shown = label(model.name, 60), label(sentence, 120)
    return [head_grid(result.tokens, result.attentions[lay],
                      f"{name}, layer {lay}: every head's weights\n{shown}",
                      out / f"real_layer{lay}.{fmt}") for lay in layers] + [page]


def draw_from_to(model, result, out, asked, fmt="png"):  # `real --from A --to B --out DIR`
    """One word's share of attention on another in every layer and head, like
    real_bank_heads.png, as real_A_B_heads.png (or .svg, .pdf: `fmt`); and the head view page."""
    from attention_workshop.figures.exploration import file_name  # short and safe for any word

    words = asked.words
    safe = "_".join(file_name(w) for w in words)
    sentence = " ".join(result.tokens)
    a, b, name = label(words[0]), label(words[1]), label(model.name, 60)  # plain text, cut
    figure = layer_by_head([(f'"{a}" -> "{b}" in "{label(sentence, 60)}"', asked.grid)],
                           f"{name}: how much {a} looks at {b}, in every layer and head",
                           out / f"real_{safe}_heads.{fmt}")
    layer, head = np.unravel_index(int(np.argmax(asked.grid)), asked.grid.shape)
    page = write_atomic(out / "head_view.html", head_view_html(
        f"{model.name}: {sentence}", result.tokens, result.attentions, layer, head))
    return [figure, page]
