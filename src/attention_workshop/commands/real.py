"""`attention-workshop real SENTENCE`: a real transformer's attention, computed by our own code."""

import contextlib
import sys

from attention_workshop.commands.figure_options import add_figure_format
from attention_workshop.reading import printable  # paths in messages: one line
from attention_workshop.real.catalog import DEFAULT, FILES, KNOWN  # no numpy: --help stays fast
from attention_workshop.real.families import FAMILIES

HELP = ("run a real pretrained transformer (MiniLM, GPT-2, SmolLM2) on a sentence and show "
        "its attention")


def add_arguments(parser):
    parser.add_argument("sentence", metavar="SENTENCE", help='e.g. "the river bank"')
    parser.add_argument("--model", default=DEFAULT, metavar="NAME_OR_PATH", help=model_help())
    parser.add_argument("--layer", type=int, metavar="L", help="show this layer (from 0)")
    parser.add_argument("--head", type=int, metavar="H", help="show this head (from 0)")
    parser.add_argument("--from", dest="source", metavar="WORD",
                        help="with --to: this word's share of attention on the --to word, in "
                             "every layer and head")
    parser.add_argument("--to", dest="target", metavar="WORD", help="see --from")
    parser.add_argument("--vs", metavar="OTHER",
                        help="with --word: how far the word's vector moves between SENTENCE "
                             "and OTHER, layer by layer")
    parser.add_argument("--word", metavar="WORD", help="see --vs")
    parser.add_argument("--ablate", metavar="HEADS",
                        help="switch these heads off (their outputs zeroed), e.g. L18H6,L17H4: "
                             "the weights shown (and --vs's vectors) are then the run without "
                             "them (see the ablate command)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text tables (default) or JSON with every layer's weights")
    parser.add_argument("--out", metavar="DIR",
                        help="also draw the figures, an interactive head_view.html and "
                             "explorer.html (this sentence beside the lesson's) into DIR")
    parser.add_argument("--download", action="store_true",
                        help="allow downloading gpt2 from the Hugging Face Hub (needs a network)")
    add_figure_format(parser)


def model_help(default=DEFAULT, only=None):  # the one wording of --model's help
    """Example: 'minilm (default, installed with pip), gpt2 (Hugging Face cache), smollm2
    (installed with pip), a folder with config.json, model.safetensors, tokenizer.json
    (model_type bert, gpt2, llama or qwen2; the weights may be sharded), or a .gguf file';
    model_help("smollm2", only=("gpt2", "smollm2")) names those two, smollm2 the default;
    model_help(None) marks no default (the command says its own)."""
    names = [f"{name} ({'default, ' if name == default else ''}{known.source})"
             for name, known in KNOWN.items() if only is None or name in only]
    *first, last = FAMILIES
    return (f"{', '.join(names)}, a folder with {', '.join(FILES)} (model_type "
            f"{', '.join(first)} or {last}; the weights may be sharded), or a .gguf file")


def say(message):  # where files went: stderr, so stdout stays clean for --format json
    print(message, file=sys.stderr, flush=True)


def progress(message):  # "loading ...", "running ...": only for a person watching a terminal
    if sys.stderr.isatty():
        say(message)


def check_range(option, value, count, what):
    from attention_workshop.errors import WorkshopError

    if value is not None and not 0 <= value < count:
        raise WorkshopError(f"{option} {value} is out of range: the model has {what} "
                            f"0-{count - 1}")


def check_pairs(args):  # options that come in pairs, before anything slow
    from attention_workshop.errors import WorkshopError
    from attention_workshop.sentences import check_sentence

    for one, other, a, b in (("--from", "--to", args.source, args.target),
                             ("--vs", "--word", args.vs, args.word)):
        if (a is None) != (b is None):
            given, missing = (one, other) if b is None else (other, one)
            raise WorkshopError(f"{given} needs {missing} too, e.g. real \"the river bank\" "
                                + ("--from bank --to river" if one == "--from" else
                                   "--vs \"the money bank\" --word bank"))
    if args.vs is not None:
        check_sentence(args.vs)


def ablated_heads(args):  # --ablate "L18H6,L17H4" -> [(18, 6), (17, 4)]; None: not given
    if args.ablate is None:
        return None
    from attention_workshop.commands.head_options import parse_heads
    from attention_workshop.errors import WorkshopError

    heads = parse_heads(args.ablate, "--ablate")
    if args.out:
        raise WorkshopError("--ablate shows the run with those heads off here (text or JSON); "
                            "--out draws the whole model's: give one of them")
    return heads


def switched_off_line(heads):  # [(layer, head)] -> the line that says the run is not whole
    """Example: [(18, 6), (17, 4)] -> 'switched off (outputs zeroed): L18H6, L17H4; every
    number below is the run without them'."""
    return (f"switched off (outputs zeroed): {', '.join(f'L{lay}H{h}' for lay, h in heads)}; "
            "every number below is the run without them")


def main(args):
    """Every input is checked (sentence, --out, model, --layer, --head) and the figures are
    in place before the report is printed: an error is one line and leaves stdout empty."""
    from attention_workshop.commands.real_report import (
        asked_for,
        chosen_heads,
        describe,
        json_report,
        previous_scores,
        text_report,
    )
    from attention_workshop.real import load_model
    from attention_workshop.sentences import check_sentence

    check_sentence(args.sentence)  # before the slow part, and before any progress line
    check_pairs(args)
    ablate = ablated_heads(args)
    with contextlib.ExitStack() as stack:
        stage = None
        if args.out:
            from attention_workshop.staging import staged

            stage = stack.enter_context(staged(args.out, "real"))  # checked before loading
        model = load_model(args.model, download=args.download, say=progress)
        cfg = model.config
        check_range("--layer", args.layer, cfg.n_layer, "layers")
        check_range("--head", args.head, cfg.n_head, "heads")
        if ablate:
            from attention_workshop.real.interventions import check_heads

            check_heads(cfg, ablate, "--ablate")
        progress(f"running {cfg.family} forward pass ({cfg.n_layer} layers x {cfg.n_head} "
                 "heads) ...")
        result = model.run(args.sentence, ablate=ablate)  # the one tokenization and pass
        previous = previous_scores(model)  # a decoder's [L, H] on random tokens; None
        asked = asked_for(model, result, args.sentence, (args.source, args.target),
                          (args.vs, args.word), previous, ablate)  # {"from_to", "vs"}
        heads = not asked or args.layer is not None or args.head is not None
        chosen, how = chosen_heads(model, result, args.layer, args.head, previous)
        if args.format == "json":
            report = json_report(model, result, {k: v.json for k, v in asked.items()} | (
                {"ablated": [list(h) for h in ablate]} if ablate else {}))
        else:
            lines = text_report(model, result, chosen, how, previous) if heads else [
                describe(model), f"tokens ({len(result.tokens)}): {' '.join(result.tokens)}"]
            if ablate:
                lines.insert(1, switched_off_line(ablate))
            for part in asked.values():
                lines += ["", *part.lines]
            report = "\n".join(lines)
        if stage is not None:
            from attention_workshop.figures.encoder import draw_from_to, draw_sentence
            from attention_workshop.figures.explorer import real_command_page

            fmt = args.figure_format
            paths = list(draw_from_to(model, result, stage.path, asked["from_to"], fmt)
                         if "from_to" in asked else
                         draw_sentence(model, result, stage.path, chosen, fmt))
            paths.append(real_command_page(model, args.sentence, result, stage.path))
    print(report)
    for path in paths if stage is not None else ():
        say(f"wrote {printable(stage.final(path))}")
    return 0
