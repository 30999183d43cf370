"""`attention-workshop heads --kind KIND`: every head of a model scored by a pattern, ranked.

The definitions (the test sequence, the cells each kind averages, the copy loss) are in
real/analysis/head_patterns.py's docstring and docs/heads.md.
"""

import shlex
import textwrap

from attention_workshop.commands.real import model_help, progress
from attention_workshop.real.catalog import DEFAULT

# head_patterns.KINDS' keys, spelled out: importing it brings numpy, and `--help` stays
# light (tests/test_heads_command.py checks that the two agree)
KINDS = ("induction", "previous", "sink")
DECODER_KINDS = ("induction", "previous")  # a decoder's patterns: with no --model, smollm2
DECODER = "smollm2"
SEEDS = 5  # head_patterns.SEEDS, spelled out for the same reason
HELP = ("score every head of a real model by a pattern (induction, previous-token, sink) on "
        "repeated random sequences, and rank them by the mean, with the spread")


def add_arguments(parser):
    parser.add_argument("--model", metavar="NAME_OR_PATH",
                        help=f"{model_help(None)} (default: {DECODER} for --kind induction or "
                             f"previous, a decoder's patterns; {DEFAULT} for sink)")
    parser.add_argument("--kind", required=True, choices=KINDS,
                        help="induction: the token after the previous occurrence of this one; "
                             "previous: the token just before; sink: the first position")
    parser.add_argument("--top", type=int, default=10, metavar="K",
                        help="how many heads the ranked table shows (default 10)")
    parser.add_argument("--seeds", type=int, default=SEEDS, metavar="N",
                        help=f"average over N random sequences, seeds 0 to N - 1 (default "
                             f"{SEEDS}; 1: seed 0 alone, Module 4's)")
    parser.add_argument("--grid", action="store_true",
                        help="also print every head's mean score as a layers x heads grid")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="a ranked table (default), or JSON with the ids and every score")
    parser.add_argument("--download", action="store_true",
                        help="allow downloading gpt2 from the Hugging Face Hub (needs a network)")


def model_for(kind, model=None):  # -> the model to score: the one asked for, else the default
    """Example: model_for("induction") -> "smollm2" (an encoder has no induction head to
    find); model_for("sink") -> "minilm"; model_for("sink", "gpt2") -> "gpt2"."""
    return model or (DECODER if kind in DECODER_KINDS else DEFAULT)


def main(args):
    """--top and --seeds are checked before the model loads; the report is printed only once
    complete."""
    from attention_workshop.errors import WorkshopError
    from attention_workshop.real import load_model
    from attention_workshop.real.analysis.head_patterns import MAX_SEEDS, heads_over_seeds

    if args.top < 1:
        raise WorkshopError(f"--top {args.top} shows no head; give a number of heads, at least 1")
    if not 1 <= args.seeds <= MAX_SEEDS:
        raise WorkshopError(f"--seeds {args.seeds} is out of range: give 1 to {MAX_SEEDS} "
                            "random sequences")
    model = load_model(model_for(args.kind, args.model), download=args.download, say=progress)
    cfg = model.config
    progress(f"scoring {cfg.n_layer} layers x {cfg.n_head} heads by '{args.kind}' on "
             f"{args.seeds} sequence{'s' * (args.seeds != 1)} ...")
    found = heads_over_seeds(model, args.kind, min(args.top, cfg.n_layer * cfg.n_head),
                             args.seeds)
    print(json_report(model, found) if args.format == "json" else
          "\n".join(text_report(model, found, args.grid)))
    return 0


def json_report(model, found):  # Model, HeadSpread -> str
    """"scores" is the mean over the sequences, "spread" their standard deviation (layers x
    heads each); "ids" the one sequence, or a list of them when there are several."""
    import json

    L, H = found.scores.shape
    ids = [r.ids for r in found.runs]
    return json.dumps({
        "model": model.name, "kind": found.kind, "ids": ids if len(ids) > 1 else ids[0],
        "seeds": found.seeds, "layers": L, "heads": H, "chance": chance_of(model, found),
        "scores": found.scores.tolist(), "spread": found.spread.tolist(),
        "top": [{"layer": lay, "head": h, "score": s, "spread": float(found.spread[lay, h]),
                 "top_on": dict(found.top_counts(0)).get((lay, h), 0)}
                for lay, h, s in found.top],
        "loss_first": found.loss_first, "loss_second": found.loss_second})


def text_report(model, found, grid=False):  # Model, HeadSpread -> list of lines
    """Example (the first lines): 'minilm: bert, 6 layers x 12 heads, ...', 'induction: each
    token of the repeat -> the token after its previous occurrence', the sequences, then
    '  rank  layer  head  score  spread' and one row per head; the grid only with `grid`."""
    from attention_workshop.commands.real_report import describe
    from attention_workshop.real.analysis.head_patterns import HALF
    from attention_workshop.real.analysis.head_patterns import KINDS as DEFINED
    from attention_workshop.report import matrix_lines

    L, H = found.scores.shape
    ids = found.runs[0].ids
    lead = len(ids) - 2 * HALF
    start = f"{model.tokenizer.id_to_token(ids[0])} + " if lead else ""
    n = len(found.seeds)
    seeds = f"seed {found.seeds[0]}" if n == 1 else f"{n} sequences, seeds 0-{n - 1}"
    lines = [describe(model), f"{found.kind}: {DEFINED[found.kind]}",
             f"on {start}{HALF} random tokens repeated once ({seeds}): {len(ids)} ids each "
             "(--format json lists them)", *absent_line(model, found), "",
             f"chance (a head spreading every row evenly over what it sees): "
             f"{chance_of(model, found):.3f}", ""]
    if n == 1:
        lines += [f"the top {len(found.top)} of {L * H} heads:", "  rank  layer  head  score"]
        lines += [f"  {k:>4}  {lay:>5}  {h:>4}  {s:.3f}" for k, (lay, h, s) in
                  enumerate(found.top, 1)]
    else:
        lines += [f"the top {len(found.top)} of {L * H} heads by their mean over the {n} "
                  "sequences; spread: the standard deviation between them",
                  "  rank  layer  head  score  spread"]
        lines += [f"  {k:>4}  {lay:>5}  {h:>4}  {s:.3f}  {found.spread[lay, h]:6.3f}"
                  for k, (lay, h, s) in enumerate(found.top, 1)]
        lines += ["", *textwrap.wrap(steadiness_line(found), 100)]
    if grid:
        lines += ["", "every head (rows: layers, columns: heads"
                  f"{'; the mean over the sequences' if n > 1 else ''}):"]
        lines += matrix_lines([f"L{i}" for i in range(L)], [f"H{j}" for j in range(H)],
                              found.scores, indent=2, label_width=4, width=7)
    lay, h, _ = found.top[0]
    return lines + ["", *textwrap.wrap(copy_line(model, found), 100),
                    f"one head on a sentence: attention-workshop real \"the river bank\" "
                    f"--model {shlex.quote(model.name)} --layer {lay} --head {h}",
                    *(["every head as a grid: add --grid"] if not grid else [])]


def steadiness_line(found):  # HeadSpread -> how often the ranking holds, in words
    """Example: 'on its own, each sequence's top head: L18 H6 on 5 of 5; second: L17 H4 on
    3, L17 H3 on 2'."""
    n = len(found.runs)
    parts = []
    for rank, name in ((0, "top head"), (1, "second")):
        counts = found.top_counts(rank)
        if counts:
            parts.append(f"{name}: " + ", ".join(
                f"L{lay} H{h} on {c}{f' of {n}' if k == 0 else ''}"
                for k, ((lay, h), c) in enumerate(counts)))
    return "each sequence on its own, its " + "; its ".join(parts)


def absent_line(model, found):  # -> [a note when the kind cannot exist in this model]
    if found.kind == "induction" and not model.config.causal:
        return [f"note: {model.name} is an encoder, with no induction head to find (every "
                "token sees the whole sequence, the repeat included): its best is near chance; "
                "a decoder's are: --model smollm2"]
    return []


def chance_of(model, found):  # -> the score of a head with no pattern, on these ids
    from attention_workshop.real.analysis.head_patterns import HALF, chance

    ids = found.runs[0].ids  # every sequence has the same length and lead
    return chance(found.kind, len(ids), len(ids) - 2 * HALF, model.config.causal)


def copy_line(model, found):  # -> does the model predict the repeat?
    if found.loss_first is not None:
        over = f" (means over the {len(found.runs)} sequences)" if len(found.runs) > 1 else ""
        return (f"copying: next-token loss {found.loss_first:.2f} nats on the first half (new "
                f"tokens), {found.loss_second:.2f} on the repeat (each token seen before)"
                f"{over}")
    if not model.config.causal:
        return (f"no copy loss: {model.name} is an encoder (every token sees the whole "
                "sequence, the repeat included), so its outputs are no next-token forecast")
    return f"no copy loss: {model.name} gives no next-token logits"
