"""`attention-workshop explorer [SENTENCE]`: the interactive page, one offline HTML file."""

import sys

from attention_workshop.commands.explore import add_own_files, own_files
from attention_workshop.reading import printable  # paths in messages: one line
from attention_workshop.writing import DEFAULT_OUT

HELP = ("write explorer.html: one offline page to build sentences, move W_Q, W_K and W_V, and "
        "watch attention change (open it in any browser)")


def add_arguments(parser):
    parser.add_argument("sentence", nargs="?", default="the river bank", metavar="SENTENCE",
                        help='the sentence the page starts with, words from the table '
                             '(default: "%(default)s"); Module 3 shows it too')
    parser.add_argument("--word", default="bank", metavar="WORD",
                        help="the word the page follows first (default: %(default)s; the last "
                             "word if the sentence has no such word)")
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                        help="folder to write explorer.html into (default: %(default)s)")
    parser.add_argument("--no-real", action="store_true",
                        help="leave out Module 3 (the real model's heads)")
    add_own_files(parser)  # the page starts with the learner's words and wiring


def minilm_section(sentence):  # MiniLM on `sentence` and the lesson's, as Module 3 runs it
    import numpy as np

    from attention_workshop.figures.explorer import FLOAT64, real_section
    from attention_workshop.modules.module3 import MODEL, MODEL_NAME
    from attention_workshop.real import load_model

    model = load_model(MODEL, dtype=np.float64)  # float64, as Module 3: the log's digits
    return real_section(MODEL_NAME, model, [sentence], FLOAT64)


def main(args):
    from attention_workshop.errors import WorkshopError
    from attention_workshop.explore import Options, explore
    from attention_workshop.figures.explorer import write_page
    from attention_workshop.modules.module2 import scaling_experiment
    from attention_workshop.staging import staged

    own = own_files(args)  # (table, W_Q, W_K, W_V): each file read and checked
    table, w_q, w_k, w_v = own  # an unknown word, or a wiring that does not fit, stops here:
    sentence = " ".join(explore(args.sentence, table, w_q, w_k, Options(w_v=w_v)).tokens)
    with staged(args.out, "explorer", expect=("explorer.html",)) as stage:  # before the model
        real = None
        if not args.no_real:
            try:
                real = minilm_section(sentence)
            except WorkshopError as exc:  # no model here: the page still teaches Modules 1-2
                print(f"attention-workshop: note: leaving out Module 3 ({exc})", file=sys.stderr)
        path = write_page(stage.path, scaling_experiment(), real, sentence, args.word.lower(),
                          own)
    print(f"wrote {printable(stage.final(path))}: open it in any browser (double-click it); it "
          "needs no network, so you can also copy it to any web host")
    return 0
