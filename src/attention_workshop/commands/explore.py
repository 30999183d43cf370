"""`attention-workshop explore SENTENCE`: the raw and the wired head on any sentence."""

import sys

from attention_workshop.commands.figure_options import add_figure_format
from attention_workshop.explore.views import VIEWS, help_text
from attention_workshop.reading import printable  # paths in messages: one line

HELP = "show the raw and the wired attention head on any sentence, side by side"


def add_arguments(parser):
    parser.add_argument("sentence", metavar="SENTENCE",
                        help='words from the embedding table, e.g. "the river bank"')
    add_own_files(parser)
    parser.add_argument("--no-scale", action="store_true",
                        help="wired head: do not divide the scores by sqrt(d_k)")
    parser.add_argument("--causal", action="store_true",
                        help="wired head: each word sees only itself and the words before it")
    parser.add_argument("--word", metavar="WORD",
                        help="also show this word's blend in slow motion, term by term")
    parser.add_argument("--format", choices=tuple(VIEWS), default=next(iter(VIEWS)),
                        help=help_text())
    parser.add_argument("--out", metavar="DIR",
                        help="also draw the weights (and --word's three lives) into DIR")
    add_figure_format(parser)


def add_own_files(parser):  # the learner's own table and wiring (explore and explorer take them)
    parser.add_argument("--table", metavar="FILE",
                        help="your own words (.toml or .json; see docs/explore.md), added to the "
                             "built-in table; a word it already has takes your row")
    parser.add_argument("--replace-table", action="store_true",
                        help="use --table's words alone, instead of adding them to the built-in "
                             "ones (needed for a table with other axes)")
    parser.add_argument("--wq", metavar="FILE", help="your own W_Q wiring (.toml or .json)")
    parser.add_argument("--wk", metavar="FILE", help="your own W_K wiring (.toml or .json)")
    parser.add_argument("--wv", metavar="FILE",
                        help="a W_V for the wired head, axes x axes (default: the identity, "
                             "each word hands over its own row)")


def own_files(args):  # parsed --table, --replace-table, --wq, --wk, --wv -> (table, W_Q, W_K, W_V)
    """Each read and checked (None where not given). Example: no options -> 4 x None."""
    from attention_workshop.explore.tables import load_table, load_wiring

    if args.replace_table and not args.table:
        from attention_workshop.errors import WorkshopError

        raise WorkshopError("--replace-table needs --table FILE: the table to use instead")
    table = load_table(args.table, replace=args.replace_table) if args.table else None
    return (table, *(load_wiring(path, name) if path else None
                     for path, name in ((args.wq, "W_Q"), (args.wk, "W_K"), (args.wv, "W_V"))))


def main(args):
    from attention_workshop.explore import Options, explore
    from attention_workshop.explore.views import render

    table, w_q, w_k, w_v = own_files(args)
    options = Options(scale=not args.no_scale, causal=args.causal, w_v=w_v)
    ex = explore(args.sentence, table, w_q, w_k, options)
    # Build the whole output, and write the figures, before printing: an error leaves
    # stdout empty and --out's previous figures as they were.
    out = render(args.format, ex, args.word)
    written = []
    if args.out:
        from attention_workshop.figures.exploration import draw_exploration
        from attention_workshop.staging import staged

        with staged(args.out, "explore") as stage:
            paths = draw_exploration(ex, stage.path, args.word, args.figure_format)
        written = [stage.final(path) for path in paths]
    print(out)
    for path in written:
        print(f"wrote {printable(path)}", file=sys.stderr)  # stderr: stdout stays pure JSON
    return 0
