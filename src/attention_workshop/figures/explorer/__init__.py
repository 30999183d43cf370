"""The explorer page: one offline HTML file where the learner builds a sentence, moves W_Q, W_K
and W_V, and watches attention change; [S5] and a real model's heads beside them.

`data.py` gathers the engine's numbers, `page.py` inlines them with the template, the style and
the scripts (package data in this folder; engine.js holds the attention math, tested equal to
the Python engine in a real browser; docs/explorer.md lists every script). One function,
write_page, builds the page for all three commands: `run` through FIGURES (workshop_page),
`explorer` (commands/explorer_page.py) and `real --out` (real_command_page). The head view
(figures/head_view.py) keeps its template and script here too, beside the helpers it shares.
"""

from pathlib import Path

from attention_workshop.embeddings import SENT_MONEY, SENT_RIVER
from attention_workshop.figures import Drawing
from attention_workshop.figures.explorer.data import (
    decoder_section,
    explorer_data,
    model_runs,
    real_data,
)
from attention_workshop.figures.explorer.data_module5 import switch_section
from attention_workshop.figures.explorer.data_module6 import training_section
from attention_workshop.figures.explorer.page import explorer_html
from attention_workshop.modules import module2, module3, module4, module5, module6
from attention_workshop.writing import write_atomic

__all__ = ["FIGURES", "decoder_section", "explorer_data", "explorer_html", "model_runs",
           "real_command_page", "real_data", "real_section", "write_explorer", "write_page"]

FILENAME = "explorer.html"
FLOAT64 = "computed in float64 by the workshop's own NumPy code, as Module 3 of run"
RUN_TRAINING = ("Module 6 of run (results.log [S20]-[S23]): trained in float64 by the "
                "workshop's own backpropagation, the log's seeds and steps")


def write_explorer(folder, data):  # Path, dict (explorer_data) -> Path of explorer.html
    return write_atomic(Path(folder) / FILENAME, explorer_html(data))


def write_page(folder, scaling, real=None, sentence=SENT_RIVER, word="bank", own=(None,) * 4,
               decoder=None, training=None, switch=None):
    # Path, module2.Scaling, real_section(...) | None -> Path; own: explore's (Table, W_Q, W_K,
    # W_V) from the learner's files, None for the built-in ones; decoder: decoder_section(...);
    # training: data_module6.training_section(...); switch: data_module5.switch_section(...)
    """The one builder of explorer.html: [S5] as `scaling` measured it, Module 3 from `real`,
    Module 4 from `decoder` and Module 6 from `training` (None: left out), starting from
    `sentence` and following `word`."""
    return write_explorer(folder, explorer_data(scaling, real, sentence, word, own, decoder,
                                                training, switch))


def real_section(name, model, sentences, source, done=None):  # -> the page's Module 3
    """`sentences`, then the lesson sentences, run by `model` (runs in `done` reused)."""
    return real_data(name, model_runs(model, sentences, done), source)


def workshop_page(m2, m3, m4, m5, m6, path):
    # module2.Result, module3.Result | None, module4.Result | None, module5.Result | None,
    # module6.Result | None, Path -> Path
    """The page `run` writes: [S5] as the log measured it, Module 3's float64 runs and Module
    4's SmolLM2 if they ran (`run --no-real` runs neither), Module 6's trainings replayed."""
    real = None if m3 is None else real_data(
        module3.MODEL_NAME, {SENT_RIVER: m3.river, SENT_MONEY: m3.money}, FLOAT64)
    decoder = None if m4 is None else decoder_section(m4)
    training = None if m6 is None else training_section(m6, RUN_TRAINING)
    return write_page(Path(path).parent, m2.scaling, real, decoder=decoder, training=training,
                      switch=switch_section(m5, m4))


def real_command_page(model, sentence, result, folder):  # for `attention-workshop real --out`
    """explorer.html with this run first, then the lesson sentences run by the same model in
    the same precision; Modules 1-2 start from the sentence when the table knows its words."""
    from attention_workshop.explore.compute import words_of
    from attention_workshop.explore.tables import builtin_table
    from attention_workshop.modules.module2 import scaling_experiment

    source = (f"computed in {result.attentions.dtype} by the workshop's own NumPy code "
              "(attention-workshop real)")
    real = real_section(model.name, model, [sentence], source, {sentence: result})
    table = builtin_table()
    words = words_of(sentence, table)
    start = " ".join(words) if words and all(w in table.words for w in words) else SENT_RIVER
    return write_page(folder, scaling_experiment(), real, start)


FIGURES = {FILENAME: Drawing(
    (module2.Result,), 0.05, workshop_page,
    optional=(module3.Result, module4.Result, module5.Result, module6.Result),
    about="Modules 1-6: build a sentence, move W_Q, W_K and W_V, watch the weights change; "
          "the real models' heads, SmolLM2 writing and with heads switched off, and Module 6's "
          "trainings replayed step by step (open it in a browser)")}
