"""Module 5's sliding-cache figure: SmolLM2's perplexity along the text for each KV cache of
results.log [S19]'s last lines (full, the window alone, the window with the first tokens)."""

import numpy as np

from attention_workshop.figures import Drawing
from attention_workshop.figures.canvas import new_figure, save, styled
from attention_workshop.modules import module4, module5

COLOURS = ("0.25", "#d7191c", "#2c7bb6", "#008837")  # full, window only, + 1, + 4


def running_perplexity(nats):  # [n] nats, one a token -> [n]: exp(mean of the first k)
    """The perplexity of the tokens so far, so each line ends at the log's number.
    Example: nats [0, log 4] -> [1, 2] (exp of 0, then of log 4 / 2)."""
    nats = np.asarray(nats, dtype=np.float64)
    return np.exp(np.cumsum(nats) / np.arange(1, len(nats) + 1))


@styled
def sliding_cache(m5, m4, path):  # module5.Result, module4.Result, Path -> Path
    """x: the token predicted (its position in the text); y: the perplexity so far, on a log
    scale. The window-only line leaves the others at the window's end and stays far above."""
    s = m5.smollm2.sliding
    fig, ax = new_figure(6.4, 4.2)
    x = np.arange(s.window + 1, s.window + 1 + s.scored)  # the positions predicted
    top = 1.0
    for (name, nats), colour in zip(s.nats.items(), COLOURS, strict=True):
        y = running_perplexity(nats)
        top = max(top, float(y.max()))
        ax.plot(x, y, color=colour, linewidth=1.6,
                label=f"{name}: {module5.digits(y[-1])} at the end")
    ax.set_yscale("log")
    ticks = [t for t in (1, 3, 10, 30, 100, 300, 1000, 3000, 10000) if t <= top * 2]
    ax.set_yticks(ticks, [f"{t:,}" for t in ticks])  # plain numbers (the style parses no math)
    ax.minorticks_off()
    ax.set(xlabel="token predicted (its position in the text)",
           ylabel="perplexity of the tokens so far", xlim=(x[0], x[-1]))
    ax.set_title(f"{module4.MODEL_NAME}: a sliding KV cache of {s.window} tokens,\nwith and "
                 "without the text's first tokens (results.log [S19])", fontsize=10)
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    return save(fig, path)


FIGURES = {
    "sliding_cache.png": Drawing((module5.Result, module4.Result), 0.35, sliding_cache, about=(
        "Module 5 (log [S19] lines 13-16): SmolLM2's perplexity along the text with a sliding "
        "KV cache: full, the window alone, the window with its first tokens")),
}
