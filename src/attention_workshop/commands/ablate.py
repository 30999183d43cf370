"""`attention-workshop ablate --heads L18H6,L17H4` (or `--kind induction --top 3`): switch heads
off and see what the next-token loss does, beside as many random heads of the same layers.

On Module 4's test sequence (50 random tokens repeated once; real/analysis/head_patterns.py)
the loss is shown per half: the first half is new to the model, the repeat was seen once. `--text`
takes any text instead (one loss, every next token). The numbers come from
real/analysis/head_effects.py; results.log [S18] shows them for SmolLM2's top induction heads.
`--map` switches every head off in turn, alone, and draws the layer x head map of what each
costs (commands/ablate_map.py).
"""

from attention_workshop.commands.figure_options import add_figure_format
from attention_workshop.commands.head_options import check_decoder, parse_heads, text_ids
from attention_workshop.commands.real import model_help, progress

HELP = ("switch heads of a language model off (or to their mean) and measure the next-token "
        "loss before and after, beside random heads of the same layers")
DEFAULT_MODEL = "smollm2"
DECODERS = ("gpt2", "smollm2")
KINDS = ("induction", "previous", "sink")  # head_patterns.KINDS' keys (no numpy for --help)
DRAWS = 5  # draws of as many random heads: their mean and spread


def add_arguments(parser):
    parser.add_argument("--model", default=DEFAULT_MODEL, metavar="NAME_OR_PATH",
                        help=f"a decoder: {model_help(DEFAULT_MODEL, only=DECODERS)}")
    parser.add_argument("--heads", metavar="LIST",
                        help="the heads to switch off, layer and head from 0: e.g. L18H6,L17H4")
    parser.add_argument("--kind", choices=KINDS,
                        help="instead of --heads: the --top heads of this pattern (see the "
                             "heads command)")
    parser.add_argument("--top", type=int, metavar="K", help="with --kind: how many heads")
    parser.add_argument("--text", metavar="TEXT",
                        help="measure on this text instead of the repeated random sequence")
    parser.add_argument("--how", choices=("zero", "mean"), default="zero",
                        help="zero: the heads' outputs become 0 (default); mean: each becomes its "
                             "mean over the positions")
    parser.add_argument("--map", action="store_true",
                        help="instead of --heads or --kind: switch every head off in turn, "
                             "alone, and show what each costs (SmolLM2: 270 runs, about 90 s "
                             "of CPU)")
    parser.add_argument("--out", metavar="DIR",
                        help="with --map: also draw the layer x head map into DIR "
                             "(effect_map.png)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="a table (default) or JSON (with --map: the whole grid)")
    parser.add_argument("--download", action="store_true",
                        help="allow downloading gpt2 from the Hugging Face Hub (needs a network)")
    add_figure_format(parser)


def check_choice(args):  # -> None, or WorkshopError: --heads or --kind with --top, not both
    from attention_workshop.errors import WorkshopError

    if args.map and (args.heads is not None or args.kind or args.top is not None):
        raise WorkshopError("--map switches every head off in turn: give it without --heads, "
                            "--kind or --top")
    if args.out is not None and not args.map:
        raise WorkshopError("--out draws the layer x head map: give it with --map")
    if not args.map:
        check_heads_asked(args)
    if args.text is not None:
        from attention_workshop.sentences import check_sentence

        check_sentence(args.text)


def check_heads_asked(args):  # without --map: --heads, or --kind with --top K >= 1
    from attention_workshop.errors import WorkshopError

    if args.heads is not None and (args.kind or args.top is not None):
        raise WorkshopError("give either --heads or --kind with --top, not both")
    if args.heads is None and not args.kind:
        raise WorkshopError("say which heads: --heads L18H6,L17H4, or --kind induction --top 3")
    if args.kind and args.top is None:
        raise WorkshopError(f"--kind {args.kind} needs --top K: how many of its heads to "
                            "switch off, e.g. --top 3")
    if args.top is not None and args.top < 1:
        raise WorkshopError(f"--top {args.top} switches no head off; give at least 1")


def main(args):
    """Every input is checked before the model loads, the heads against the model once it has;
    the report is printed only once complete."""
    if args.map:
        from attention_workshop.commands.ablate_map import main as map_main

        check_choice(args)
        return map_main(args)
    import numpy as np

    from attention_workshop.real import load_model
    from attention_workshop.real.analysis.head_effects import effect
    from attention_workshop.real.analysis.head_patterns import heads as scored
    from attention_workshop.real.analysis.head_patterns import sequence_for
    from attention_workshop.real.interventions import check_control, check_heads

    check_choice(args)
    wanted = parse_heads(args.heads) if args.heads is not None else None
    # float64, one BLAS thread: the numbers of results.log [S18], on every machine
    model = load_model(args.model, download=args.download, say=progress, dtype=np.float64)
    cfg = model.config
    check_decoder(model)
    # the random control draws as many other heads
    check_control(cfg, len(wanted) if wanted is not None else args.top, model.name)
    sequence, lead = sequence_for(model)
    repeated = model.run(sequence) if args.text is None or wanted is None else None
    if wanted is None:  # the kind's top heads, scored on the repeated sequence
        found = scored(model, args.kind, min(args.top, cfg.n_layer * cfg.n_head), repeated)
        wanted = [(lay, h) for lay, h, _ in found.top]
    check_heads(cfg, wanted, "--heads")
    if args.text is not None:
        ids, lead = text_ids(model, args.text), None
        plain = model.run(ids)
    else:
        ids, plain = sequence, repeated
    progress(f"switching {len(wanted)} heads off, and {DRAWS} draws of random ones ...")
    found = effect(model, plain, wanted, args.how, DRAWS, lead=lead)
    print(json_report(model, found, ids, args) if args.format == "json" else
          "\n".join(text_report(model, found, ids, args)))
    return 0


def json_report(model, found, ids, args):  # -> str
    import json

    return json.dumps({
        "model": model.name, "how": found.how, "kind": args.kind, "text": args.text,
        "heads": [list(h) for h in found.heads], "ids": [int(i) for i in ids],
        "loss_before": found.before, "loss_after": found.after,
        "random_heads": [[list(h) for h in drawn] for drawn, _ in found.random],
        "random_loss_after": [losses for _, losses in found.random]}, allow_nan=False)


def text_report(model, found, ids, args):  # -> list of lines
    """Example (the table): '  next-token loss (nats)        first half    repeat', '  every
    head on                       14.13      1.99', '  these 3 heads off ...', then the
    random draws' mean and range, and each draw."""
    import numpy as np

    from attention_workshop.commands.real_report import describe

    names = ", ".join(f"L{lay}H{h}" for lay, h in found.heads)
    n = len(found.heads)
    chosen = f" (the top {n} {args.kind} heads)" if args.kind else ""
    where = (f"on the text given: {len(ids)} tokens" if args.text is not None else
             f"on 50 random tokens (seed 0) repeated once: {len(ids)} ids")
    parts = list(found.before)
    label = {"first": "first half", "repeat": "repeat", "text": "the text"}
    row = lambda name, values: f"  {name:<34}" + "".join(  # noqa: E731
        f"{v:>12}" for v in values)
    random = np.array([[lo[p] for p in parts] for _, lo in found.random])  # [draws, parts]
    lines = [describe(model), f"switched off ({found.how}): {names}{chosen}", where, "",
             row("next-token loss (nats)", [label[p] for p in parts]),
             row("every head on", [f"{found.before[p]:.2f}" for p in parts]),
             row(f"these {n} heads off", [f"{found.after[p]:.2f}" for p in parts]),
             row(f"{n} random heads, mean of {len(random)}", [f"{v:.2f}" for v in
                                                             random.mean(axis=0)]),
             row("  their range", [f"{a:.2f}-{b:.2f}" for a, b in zip(
                 random.min(axis=0), random.max(axis=0), strict=True)]), ""]
    lines.append("random heads: as many, from the same layers give or take 2 (seed 0), never "
                 "the heads above:")
    lines += [row("  " + ", ".join(f"L{lay}H{h}" for lay, h in drawn),
                  [f"{lo[p]:.2f}" for p in parts]) for drawn, lo in found.random]
    return lines
