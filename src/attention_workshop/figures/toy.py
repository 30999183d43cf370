"""Modules 1-2's figures: bank's split, the weight heatmaps, bank's three lives,
the pipeline diagram and the [S5] scaling curves.
"""

import matplotlib
import numpy as np

from attention_workshop.embeddings import AXES, EMBED, SENT_MONEY, SENT_RIVER, tokenize
from attention_workshop.figures import Drawing
from attention_workshop.figures.canvas import label, new_figure, save, styled
from attention_workshop.figures.glyphs import annotate_cells
from attention_workshop.modules import module1, module2

RED, BLUE, GRAY = "#c0392b", "#2468b4", "#7f7f7f"


@styled
def bank_split(m1, path):  # module1.Result, Path -> Path
    """Bank's one lookup point (gray) and its two simple-attention outputs (red diamonds)."""
    fig, ax = new_figure(6.4, 5.6, margins={"left": 0.11, "right": 0.97, "bottom": 0.1,
                                            "top": 0.9})
    for word in ("the", "river", "money"):
        x, y = EMBED[word][0], EMBED[word][1]
        ax.scatter(x, y, s=60, color="black", zorder=3)
        ax.annotate(f'"{word}" ({x:.1f}, {y:.1f})', (x, y), textcoords="offset points",
                    xytext=(8, 6))
    bank = EMBED["bank"]
    ax.scatter(bank[0], bank[1], s=160, color=GRAY, zorder=3,
               label="bank's lookup row (same in both)")
    ax.annotate(f"lookup ({bank[0]:.2f}, {bank[1]:.2f})", (bank[0], bank[1]),
                textcoords="offset points", xytext=(-8, -10), ha="right", va="top", color=GRAY)
    for sentence, topic, outputs in ((SENT_RIVER, "river", m1.outputs_river),
                                     (SENT_MONEY, "money", m1.outputs_money)):
        z = outputs[2]
        ax.annotate("", xy=(z[0], z[1]), xytext=(bank[0], bank[1]),
                    arrowprops={"arrowstyle": "->", "color": RED, "lw": 1.5})
        ax.scatter(z[0], z[1], marker="D", s=90, color=RED, zorder=4)
        ax.annotate(f'in "{sentence}"\n({z[0]:.3f}, {z[1]:.3f}), pulled toward "{topic}"',
                    (z[0], z[1]), textcoords="offset points", xytext=(10, -4), color=RED,
                    fontsize=9)
    ax.scatter([], [], marker="D", color=RED, label="bank after simple attention")
    ax.set(xlim=(-0.1, 1.2), ylim=(-0.1, 1.1), xlabel="water", ylabel="money",
           title="One lookup row, two meanings:\nbank on the water/money plane")
    ax.set_aspect("equal")
    ax.legend(loc="upper right", fontsize=8)
    return save(fig, path)


@styled
def weight_grid(panels, title, path, ncols=2):  # [(subtitle, tokens, [T, T])], str, Path -> Path
    """Attention weights as heatmaps, one panel each; every cell annotated while they fit."""
    panels = [(subtitle, [label(t) for t in tokens], w) for subtitle, tokens, w in panels]
    T = max(len(tokens) for _, tokens, _ in panels)
    long = max(len(t) for _, tokens, _ in panels for t in tokens) > 8  # a table's own words
    nrows = -(-len(panels) // ncols)
    cell = min(max(3.2, 0.42 * T + 1.0), 12.0)  # inches of heatmap per panel (50 words: 12)
    width, height = ncols * cell * 1.3 + 0.9, nrows * cell * 1.3 + 0.9
    # fixed margins fit words of up to 8 letters; longer labels get constrained layout's room
    fig, axes = new_figure(width, height, nrows=nrows, ncols=ncols, squeeze=False,
                           margins=None if long else {
                               "left": 0.9 / width, "right": 1 - 0.15 / width,
                               "bottom": 0.75 / height, "top": 1 - 0.75 / height,
                               "wspace": 0.3, "hspace": 0.35})
    top = max(float(w.max()) for _, _, w in panels)  # one shared colour scale, 0 to the top
    turn = T > 5 or long  # x labels turned 45 degrees so neighbours do not overlap
    for ax, (subtitle, tokens, w) in zip(axes.flat, panels, strict=False):
        image = ax.imshow(w, cmap="Blues", vmin=0, vmax=top)
        if T <= 12:  # as glyph outlines, one collection a panel (glyphs.py): less drawing
            annotate_cells(image, "{:.3f}" if T <= 6 else "{:.2f}", threshold=0.6 * top,
                           fontsize=9 if T <= 6 else 7)
        ax.set_xticks(range(len(tokens)), tokens, rotation=45 if turn else 0,
                      ha="right" if turn else "center")
        ax.set_yticks(range(len(tokens)), tokens)
        ax.tick_params(length=0, pad=3)  # no tick mark to read as a minus sign beside a number
        ax.set(xlabel="looked at (key)", ylabel="looking (query)")
        ax.set_title(subtitle, fontsize=11)
        ax.spines[:].set_visible(False)
    for ax in axes.flat[len(panels):]:
        ax.set_axis_off()
    fig.suptitle(title, fontweight="bold")
    return save(fig, path)


def weights_heatmaps(m1, m2, path):  # module1.Result, module2.Result, Path -> Path
    """Raw (top) vs wired (bottom) attention weights for both sentences."""
    panels = [(f'{head}: "{sentence}"', tokenize(sentence), weights)
              for head, river, money in (("simple attention", m1.weights_river, m1.weights_money),
                                         ("wired head", m2.weights, m2.weights_money))
              for sentence, weights in ((SENT_RIVER, river), (SENT_MONEY, money))]
    return weight_grid(panels, "Attention weights (each row sums to 1): raw vs wired", path)


@styled
def three_lives(word, sentence, axes_names, lives, path):  # lives: [(label, [d_model])]
    """One word's vector before and after attention, as bars on the named axes."""
    colors = (GRAY, RED, BLUE)
    # matplotlib's own title placement: a user's table may put a "1e6" above the axis
    with matplotlib.rc_context({"axes.titley": None}):
        fig, ax = new_figure(8, 4.6, margins={"left": 0.08, "right": 0.98, "bottom": 0.12,
                                              "top": 0.92})
        ax.set_title(f'{label(word.capitalize())}\'s three lives in "{label(sentence, 60)}"')
    x = np.arange(len(axes_names))
    width = 0.8 / len(lives)
    for i, ((name, vector), color) in enumerate(zip(lives, colors, strict=False)):
        bars = ax.bar(x + (i - (len(lives) - 1) / 2) * width, vector, width, label=name,
                      color=color)
        ax.bar_label(bars, fmt="%.3f", fontsize=8, padding=2)
    ax.set_xticks(x, axes_names)
    top = max(1.0, max(float(np.max(v)) for _, v in lives))
    ax.set(xlabel="named axis", ylabel="value", ylim=(min(0.0, min(float(np.min(v)) for _, v in
                                                                    lives)), top * 1.05))
    ax.legend(loc="upper left")
    return save(fig, path)


def bank_three_lives(m1, m2, path):  # module1.Result, module2.Result, Path -> Path
    """Bank in "the river bank": lookup row, simple-attention output, wired-head output."""
    lives = [("lookup row", EMBED["bank"]), ("simple attention", m1.outputs_river[2]),
             ("wired head", m2.outputs[2])]
    return three_lives("bank", SENT_RIVER, AXES, lives, path)


@styled
def pipeline(m2, path):  # module2.Result, Path -> Path
    """The attention pipeline as boxes, with the wired head's shapes for "the river bank"."""
    T, d = m2.outputs.shape
    d_k = m2.Q.shape[1]
    fig, ax = new_figure(11, 3.8, margins={"left": 0.01, "right": 0.99, "bottom": 0.02, "top": 0.9})
    ax.set_axis_off()
    ax.set(xlim=(0, 11), ylim=(0, 4))
    boxes = {
        "X": (0.8, 2, f"X\nembedding rows\n[{T} x {d}]"),
        "Q": (3.0, 3.3, f"Q = X @ W_Q\nqueries [{T} x {d_k}]"),
        "K": (3.0, 2.0, f"K = X @ W_K\nkeys [{T} x {d_k}]"),
        "V": (3.0, 0.7, f"V = X @ W_V\nvalues [{T} x {d}]"),
        "S": (5.2, 2.65, f"Q @ K.T\nscores [{T} x {T}]"),
        "D": (7.0, 2.65, f"/ sqrt(d_k)\nd_k = {d_k}"),
        "P": (9.1, 2.65, "softmax\neach row sums to 1"),
        "O": (9.1, 0.7, f"weights @ V\noutput [{T} x {d}]"),
    }
    artists = {
        key: ax.text(x, y, text, ha="center", va="center", fontsize=9,
                     bbox={"boxstyle": "round,pad=0.5", "fc": "#eef3fa", "ec": BLUE})
        for key, (x, y, text) in boxes.items()
    }
    right, left, bottom, top = (1, 0.5), (0, 0.5), (0.5, 0), (0.5, 1)
    edges = (("X", right, "Q", left), ("X", right, "K", left), ("X", right, "V", left),
             ("Q", right, "S", left), ("K", right, "S", left), ("S", right, "D", left),
             ("D", right, "P", left), ("P", bottom, "O", top), ("V", right, "O", left))
    for a, anchor_a, b, anchor_b in edges:
        ax.annotate("", xy=anchor_b, xycoords=artists[b], xytext=anchor_a,
                    textcoords=artists[a],
                    arrowprops={"arrowstyle": "->", "color": "#333333", "shrinkA": 2,
                                "shrinkB": 2})
    ax.set_title("Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, step by step "
                 f'(shapes for "{SENT_RIVER}")')
    return save(fig, path)


@styled
def scaling(m2, path):  # module2.Result, Path -> Path
    """[S5]: average top softmax weight vs d, unscaled (red) and scaled by 1/sqrt(d) (blue)."""
    s5 = m2.scaling
    dims = np.array(s5.dims)
    std, unscaled, scaled = np.array(s5.std), np.array(s5.unscaled), np.array(s5.scaled)
    fig, (ax, ax_std) = new_figure(11, 4.4, ncols=2, gridspec_kw={"width_ratios": [3, 2]}, margins={
        "left": 0.06, "right": 0.95, "bottom": 0.12, "top": 0.91, "wspace": 0.22})
    for values, color, name in ((unscaled, RED, "unscaled: softmax(q.k)"),
                                (scaled, BLUE, "scaled: softmax(q.k / sqrt(d))")):
        ax.plot(dims, values, "o-", color=color, label=name, lw=2)
        for d, v in zip(dims, values, strict=True):
            # above its point, unless it would reach the dashed 1.0 line: then below it
            below = v > 0.9
            ax.annotate(f"{v:.3f}", (d, v), textcoords="offset points",
                        xytext=(0, -8 if below else 8), va="top" if below else "bottom",
                        ha="center", color=color, fontsize=9)
    ax.axhline(1.0, color=GRAY, ls="--", lw=1)
    ax.text(dims[0], 1.02, "1.0 = one key takes everything", color=GRAY, fontsize=8,
            va="bottom")
    # d = 4, 16, 64, 256: each step multiplies d by 4, so the steps are drawn evenly spaced
    ax.set_xscale("log", base=2)
    ax.set_xticks(dims, [str(d) for d in dims])
    ax.set(xlabel="d (query/key width; log scale: each step is x4)",
           ylabel="average top weight (8 keys per row)",
           ylim=(0, 1.12), title="Without 1/sqrt(d), softmax turns winner-take-all")
    ax.legend(loc="center right")
    ax_std.plot(dims, np.sqrt(dims), "--", color=GRAY, label="sqrt(d)")
    ax_std.plot(dims, std, "o", color="black", label="measured std of q.k")
    for d, v in zip(dims, std, strict=True):
        ax_std.annotate(f"{v:.2f}", (d, v), textcoords="offset points", xytext=(8, -10),
                        ha="left", fontsize=9)
    # both axes log: sqrt(d) is then a straight line, x4 along d is x2 up the std
    ax_std.set_xscale("log", base=2)
    ax_std.set_yscale("log", base=2)
    ax_std.set_xticks(dims, [str(d) for d in dims])
    ax_std.set_yticks([2, 4, 8, 16], ["2", "4", "8", "16"])
    ax_std.minorticks_off()
    ax_std.set(xlabel="d (log scale: each step is x4)",
               ylabel="std of dot products (log scale: x2)",
               title="Scores grow like sqrt(d): x4 in d, x2 in std")
    ax_std.legend(loc="upper left")
    return save(fig, path)


M1, M2 = module1.Result, module2.Result
# costs: measured seconds to draw (medians of 3 runs), so parallel.py's halves come out even
FIGURES = {  # file name -> Drawing(results it reads, rough seconds to draw, draw, about=...)
    "bank_split.png": Drawing((M1,), 0.09, bank_split, about=(
        "Module 1, bank's output in both sentences (log 45-49): one lookup point splits in "
        "two")),
    "weights_heatmaps.png": Drawing((M1, M2), 0.13, weights_heatmaps, about=(
        "Modules 1-2, the weight tables (log 35-44, 64-71): simple attention above, wired "
        "below")),
    "bank_three_lives.png": Drawing((M1, M2), 0.08, bank_three_lives, about=(
        "Module 2, values (log 46, 72): bank's lookup row, simple and wired outputs on the "
        "axes")),
    "pipeline.png": Drawing((M2,), 0.06, pipeline, about=(
        "Module 2, the full pipeline: X -> Q, K, V -> scores -> softmax -> weights @ V, "
        "shapes")),
    "scaling.png": Drawing((M2,), 0.12, scaling, about=(
        "Module 2, [S5] (log 75-80): top weight vs d, unscaled climbing to 1, scaled flat")),
}
