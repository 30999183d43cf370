"""One module per subcommand: each defines HELP, add_arguments(parser) and main(args) -> int.

Command modules import only the standard library at the top, so that building
the parser (and `--help`) never loads numpy, matplotlib or a model.
"""
