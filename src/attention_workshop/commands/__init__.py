"""One module per subcommand: each defines HELP, add_arguments(parser) and main(args) -> int.

HELP is a string, or a function returning one when the text lists a registry's entries
(read each time the parser is built, so it always matches the registry).

Command modules import only the standard library and the light registries (modules.MODULES,
quiz.keys) at the top, so that building the parser (and `--help`) never loads numpy,
matplotlib or a model.
"""
