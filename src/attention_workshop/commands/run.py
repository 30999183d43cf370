"""`attention-workshop run`: every module, its results.log and its figures."""

from attention_workshop import modules
from attention_workshop.commands.figure_options import add_figure_format
from attention_workshop.writing import DEFAULT_OUT


def HELP():  # upper case: the name every command defines
    first, last = modules.key(modules.MODULES[0]), modules.key(modules.MODULES[-1])
    return f"run every module ({first}-{last}), write results.log and the figures"


def summary(paths, skipped=()):  # written files, Result classes not run -> one line each
    """Each file's name, what it shows and its lesson section; a page drawn without a skipped
    module does not name it. Example: ['  results.log    every measurement ...',
    '  scaling.png    Module 2 ...']."""
    from attention_workshop.figures import about

    width = max(len(p.name) for p in paths) + 2
    return [f"  {p.name:<{width}}"
            f"{LOG_ABOUT if p.name == 'results.log' else about(p.name, skipped)}"
            for p in paths]


def add_arguments(parser):
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                        help="folder for results.log and the figures (default: %(default)s)")
    parser.add_argument("--no-figures", action="store_true",
                        help="write only results.log (skips matplotlib)")
    parser.add_argument("--no-real", action="store_true",
                        help="skip the modules that load a pretrained transformer")
    add_figure_format(parser)


LOG_ABOUT = "every measurement of the modules, at the line numbers the lessons cite"


def main(args):
    from attention_workshop.workshop import run_workshop

    written = run_workshop(args.out, figures=not args.no_figures, real=not args.no_real,
                           figure_format=args.figure_format)
    print("what each file shows, and the lesson section it goes with:")
    skipped = [m.Result for m in modules.load() if modules.needs_real(m)] if args.no_real else []
    print("\n".join(summary(written, skipped)))
    page = [p for p in written if p.name == "explorer.html"]
    if page:
        print(f"open {page[0]} in a browser to move W_Q and W_K yourself")
    print('next: attention-workshop explore "the money bank" --word bank, '
          "or attention-workshop quiz 1")
    return 0
