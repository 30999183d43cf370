"""One module per subcommand: each defines HELP, add_arguments(parser) and main(args) -> int.

Command modules import only the standard library and the light registries (modules.MODULES,
quiz.keys) at the top, so that building the parser (and `--help`) never loads numpy,
matplotlib or a model.
"""
