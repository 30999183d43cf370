"""The option every command that draws figures takes: `--figure-format png|svg|pdf`.

Not a subcommand (cli.COMMANDS does not list it): run, explore and real add it to their
parsers with add_figure_format(parser), and pass args.figure_format on to the figures.
"""

from attention_workshop.figures import FORMATS  # a light module: no matplotlib


def add_figure_format(parser):
    parser.add_argument("--figure-format", choices=FORMATS, default=FORMATS[0],
                        metavar="png|svg|pdf",
                        help="the figures' file format (default: png; svg and pdf keep the "
                             "text as text, for slides and print)")
