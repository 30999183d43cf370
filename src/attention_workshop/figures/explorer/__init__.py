"""The explorer page: one offline HTML file where the learner builds a sentence, moves W_Q, W_K
and W_V, and watches attention change; [S5] and a real model's heads beside them.

`data.py` gathers the engine's numbers, `page.py` inlines them with the template, the style and
the scripts (package data in this folder; engine.js holds the attention math, tested equal to
the Python engine in a real browser). `run` writes the page through FIGURES, the `explorer`
command through write_explorer, `real --out` through real_command_page.
"""

from pathlib import Path

from attention_workshop.embeddings import EMBED, SENT_MONEY, SENT_RIVER, tokenize
from attention_workshop.figures import Drawing
from attention_workshop.figures.explorer.data import explorer_data, model_runs, real_data
from attention_workshop.figures.explorer.page import explorer_html
from attention_workshop.files import write_atomic
from attention_workshop.modules import module2, module3

__all__ = ["FIGURES", "explorer_data", "explorer_html", "model_runs", "real_command_page",
           "real_data", "write_explorer"]

FILENAME = "explorer.html"
FLOAT64 = "computed in float64 by the workshop's own NumPy code, as Module 3 of run"


def write_explorer(folder, data):  # Path, dict -> Path
    return write_atomic(Path(folder) / FILENAME, explorer_html(data))


def workshop_page(m2, m3, path):  # module2.Result, module3.Result | None, Path -> Path
    """The page `run` writes: [S5] as the log measured it, Module 3's float64 runs if it ran."""
    real = None if m3 is None else real_data(
        module3.MODEL_NAME, {SENT_RIVER: m3.river, SENT_MONEY: m3.money}, FLOAT64)
    return write_atomic(path, explorer_html(explorer_data(m2.scaling, real)))


def real_command_page(model, sentence, result, folder):  # for `attention-workshop real --out`
    """explorer.html with this run first, then the lesson sentences run by the same model in
    the same precision; Modules 1-2 start from the sentence when the table knows its words."""
    from attention_workshop.modules.module2 import scaling_experiment

    runs = model_runs(model, [sentence], {sentence: result})
    source = (f"computed in {result.attentions.dtype} by the workshop's own NumPy code "
              "(attention-workshop real)")
    words = tokenize(sentence)
    start = " ".join(words) if words and all(w in EMBED for w in words) else SENT_RIVER
    data = explorer_data(scaling_experiment(), real_data(model.name, runs, source), start)
    return write_explorer(folder, data)


FIGURES = {FILENAME: Drawing(
    (module2.Result,), 0.05, workshop_page, optional=(module3.Result,),
    about="Modules 1-3: build a sentence, move W_Q, W_K and W_V, watch the weights change "
          "(open it in a browser)")}
