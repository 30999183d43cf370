"""Module 6's figures: the learned wiring against the hand wiring, and an induction head forming.

Every number drawn is one the module measured (modules/module6.py's Result).
"""

import numpy as np

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED
from attention_workshop.embeddings import AXES, SENT_MONEY, SENT_RIVER
from attention_workshop.figures import Drawing
from attention_workshop.figures.canvas import new_figure, save, styled
from attention_workshop.figures.glyphs import annotate_cells
from attention_workshop.modules import module6
from attention_workshop.real.analysis.head_patterns import repeated_ids
from attention_workshop.training import induction, scale_aside


@styled
def learned_wiring(m6, path):  # module6.Result, Path -> Path
    """W_Q @ W_K.T learned and wired, bank's weights under each, and the training curves."""
    fig, axes = new_figure(13.4, 3.6, ncols=4, margins={
        "left": 0.06, "right": 0.97, "bottom": 0.16, "top": 0.8, "wspace": 0.42})
    forms = (("learned", m6.W_Q @ m6.W_K.T), ("wired by hand (Module 2)", W_Q_WIRED @ W_K_WIRED.T))
    top = max(np.abs(f).max() for _, f in forms)
    for ax, (name, form) in zip(axes[:2], forms, strict=True):
        image = ax.imshow(form, cmap="RdBu_r", vmin=-top, vmax=top)
        annotate_cells(image, fmt="{:.1f}", threshold=top * 0.6, fontsize=8)
        ax.set_xticks(range(4), AXES, fontsize=8)
        ax.set_yticks(range(4), AXES, fontsize=8)
        ax.set(xlabel="key's axis", ylabel="query's axis")
        ax.set_title(f"W_Q @ W_K.T, {name}", fontsize=10)
        ax.spines[:].set_visible(False)
    ax = axes[2]
    x = np.arange(3)
    for i, (s, color) in enumerate(((SENT_RIVER, "tab:blue"), (SENT_MONEY, "tab:green"))):
        ax.bar(x + i * 0.4 - 0.3, m6.bank_wired[s], 0.18, color=color, alpha=0.45,
               label=f'"{s}", wired')
        ax.bar(x + i * 0.4 - 0.1, m6.bank_learned[s], 0.18, color=color,
               label=f'"{s}", learned')
    ax.set_xticks(x, ["the", "river | money", "bank"])
    ax.set(ylim=(0, 1.05), ylabel="bank's weight")
    ax.set_title("bank's weights (held-out sentences)", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", frameon=False)
    ax = axes[3]
    ax.plot(m6.wiring_losses, color="black", label="toy, d_k = 2")
    for scaled, color in ((True, "tab:blue"), (False, "tab:red")) if m6.aside else ():
        for seed, curve in enumerate(m6.aside[scaled].losses):
            name = f"d_k = {scale_aside.D}, {'/ sqrt(d_k)' if scaled else 'unscaled'}"
            ax.plot(curve, color=color, lw=1, alpha=0.8, label=name if seed == 0 else None)
    ax.axhline(np.log(2), color="gray", lw=0.8, ls=":")
    ax.text(len(m6.wiring_losses) - 1, np.log(2) + 0.005, "log 2: no idea", ha="right", va="bottom",
            fontsize=7, color="gray")
    ax.set(xlabel="gradient descent step", ylabel="training loss (nats)")
    starts = f" ({len(m6.aside[True].losses)} starts each at {scale_aside.D})" if m6.aside else ""
    ax.set_title(f"training loss{starts}", fontsize=10)
    ax.legend(fontsize=7, frameon=False, loc="center right")
    fig.suptitle("Module 6: the toy's wiring learned by gradient descent, beside Module 2's "
                 "hand wiring", fontweight="bold")
    return save(fig, path)


@styled
def induction_forms(m6, path):  # module6.Result, Path -> Path
    """Loss on each copy and every head's scores against the step; the phase change shaded."""
    snaps = m6.snapshots
    steps = [s.step for s in snaps]
    fig, (ax0, ax1) = new_figure(11, 3.8, ncols=2, margins={
        "left": 0.07, "right": 0.8, "bottom": 0.14, "top": 0.83, "wspace": 0.25})
    ax0.plot(steps, [s.first_copy for s in snaps], "o-", ms=3, color="gray", label="first copy")
    ax0.plot(steps, [s.second_copy for s in snaps], "o-", ms=3, color="black",
             label="second copy")
    ax0.set(xlabel="training step", ylabel="held-out loss (nats)", ylim=(0, None))
    ax0.set_title("next-token loss on each copy", fontsize=10)
    ax0.legend(fontsize=8, frameon=False, loc="lower left")
    L, H = snaps[0].induction.shape
    colors = iter(("tab:purple", "tab:pink", "tab:orange", "tab:olive"))
    for kind, layer, ls in (("induction", L - 1, "-"), ("previous", 0, "--")):
        for h in range(H):
            ax1.plot(steps, [getattr(s, kind)[layer, h] for s in snaps], ls, marker="o", ms=3,
                     color=next(colors), label=f"L{layer} H{h} {kind}")
    ax1.set(xlabel="training step", ylabel="score (Module 4's definition)", ylim=(0, 1))
    ax1.set_title("induction (layer 1) and previous-token (layer 0) scores", fontsize=10)
    ax1.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1))
    for ax in (ax0, ax1):
        ax.axvspan(*m6.phase, color="gold", alpha=0.3, lw=0)
    ax0.text(np.mean(m6.phase), 0.15, "phase\nchange", ha="center", fontsize=8)
    fig.suptitle("Module 6: an induction head forms (2-layer attention-only transformer, our "
                 "backprop and Adam)", fontweight="bold")
    return save(fig, path)


@styled
def induction_patterns(m6, path):  # module6.Result, Path -> Path
    """Every head's weights on the pattern sequence, before the phase change and at the end."""
    at = {s.step: s for s in m6.snapshots}
    rows = (at[m6.phase[0]], m6.snapshots[-1])
    L, H = rows[0].induction.shape
    ids = repeated_ids(induction.CONFIG.n_vocab, half=induction.CONFIG.n_ctx // 2)
    fig, axes = new_figure(2.6 * L * H + 0.6, 5.6, nrows=2, ncols=L * H, margins={
        "left": 0.05, "right": 0.99, "bottom": 0.08, "top": 0.86, "wspace": 0.25,
        "hspace": 0.45})
    for r, snap in enumerate(rows):
        for i in range(L * H):
            lay, h = divmod(i, H)
            ax = axes[r, i]
            ax.imshow(snap.attentions[lay, h], cmap="Purples", vmin=0, vmax=1)
            ax.set_xticks(range(len(ids)), ids if r == 1 else [], fontsize=5)
            ax.set_yticks(range(len(ids)), ids if i == 0 else [], fontsize=5)
            ax.tick_params(length=0, pad=1)
            ax.set_title(f"step {snap.step}, L{lay} H{h}\ninduction {snap.induction[lay, h]:.2f}"
                         f", previous {snap.previous[lay, h]:.2f}", fontsize=8)
    axes[0, 0].set_ylabel("query token (row)")
    axes[1, 0].set_ylabel("query token (row)")
    fig.suptitle(f"Module 6: every head's weights on {len(ids) // 2} random tokens repeated once, "
                 "before the phase change (top) and at the end (bottom)", fontweight="bold",
                 fontsize=11)
    return save(fig, path)


FIGURES = {  # file name -> Drawing(results it reads, rough seconds to draw, draw, about=...)
    "learned_wiring.png": Drawing((module6.Result,), 0.7, learned_wiring, about=(
        "Module 6 (log [S20]-[S22]): W_Q @ W_K.T learned vs wired, bank's weights, the "
        "training losses with and without sqrt(d_k)")),
    "induction_forms.png": Drawing((module6.Result,), 0.4, induction_forms, about=(
        "Module 6 (log [S23]): the loss on each copy and the heads' scores, step by step")),
    "induction_patterns.png": Drawing((module6.Result,), 1.0, induction_patterns, about=(
        "Module 6 (log [S23]): every head's weights before the phase change and at the end")),
}
