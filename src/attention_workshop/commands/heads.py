"""`attention-workshop heads --kind KIND`: every head of a model scored by a pattern, ranked.

The definitions (the test sequence, the cells each kind averages, the copy loss) are in
real/head_patterns.py's docstring and docs/heads.md.
"""

import shlex
import textwrap

from attention_workshop.commands.real import model_help, progress
from attention_workshop.real.catalog import DEFAULT

# head_patterns.KINDS' keys, spelled out: importing it brings numpy, and `--help` stays
# light (tests/test_heads_command.py checks that the two agree)
KINDS = ("induction", "previous", "sink")
HELP = ("score every head of a real model by a pattern (induction, previous-token, sink) on a "
        "repeated random sequence, and rank them")


def add_arguments(parser):
    parser.add_argument("--model", default=DEFAULT, metavar="NAME_OR_PATH", help=model_help())
    parser.add_argument("--kind", required=True, choices=KINDS,
                        help="induction: the token after the previous occurrence of this one; "
                             "previous: the token just before; sink: the first position")
    parser.add_argument("--top", type=int, default=10, metavar="K",
                        help="how many heads the ranked table shows (default 10)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="a ranked table and a layers x heads grid (default), or JSON with "
                             "the ids and every score")
    parser.add_argument("--download", action="store_true",
                        help="allow downloading gpt2 from the Hugging Face Hub (needs a network)")


def main(args):
    """--top is checked before the model loads; the report is printed only once complete."""
    from attention_workshop.errors import WorkshopError
    from attention_workshop.real import load_model
    from attention_workshop.real.head_patterns import heads

    if args.top < 1:
        raise WorkshopError(f"--top {args.top} shows no head; give a number of heads, at least 1")
    model = load_model(args.model, download=args.download, say=progress)
    cfg = model.config
    progress(f"scoring {cfg.n_layer} layers x {cfg.n_head} heads by '{args.kind}' ...")
    found = heads(model, args.kind, top=min(args.top, cfg.n_layer * cfg.n_head))
    print(json_report(model, found) if args.format == "json" else
          "\n".join(text_report(model, found)))
    return 0


def json_report(model, found):  # Model, HeadScores -> str
    import json

    L, H = found.scores.shape
    return json.dumps({
        "model": model.name, "kind": found.kind, "ids": found.ids, "layers": L, "heads": H,
        "chance": chance_of(model, found), "scores": found.scores.tolist(),
        "top": [{"layer": lay, "head": h, "score": s} for lay, h, s in found.top],
        "loss_first": found.loss_first, "loss_second": found.loss_second})


def text_report(model, found):  # Model, HeadScores -> list of lines
    """Example (the first lines): 'minilm: bert, 6 layers x 12 heads, ...', 'induction: each
    token of the repeat -> the token after its previous occurrence', the sequence, then
    '  rank  layer  head  score' and one row per head."""
    from attention_workshop.real.head_patterns import HALF
    from attention_workshop.real.head_patterns import KINDS as DEFINED
    from attention_workshop.real.printout import describe
    from attention_workshop.report import matrix_lines

    L, H = found.scores.shape
    lead = len(found.ids) - 2 * HALF
    start = f"{model.tokenizer.id_to_token(found.ids[0])} + " if lead else ""
    lines = [describe(model), f"{found.kind}: {DEFINED[found.kind]}",
             f"on {start}{HALF} random tokens (seed 0) repeated once: {len(found.ids)} ids "
             "(--format json lists them)", "",
             f"chance (a head spreading every row evenly over what it sees): "
             f"{chance_of(model, found):.3f}", "",
             f"the top {len(found.top)} of {L * H} heads:", "  rank  layer  head  score"]
    lines += [f"  {n:>4}  {lay:>5}  {h:>4}  {s:.3f}" for n, (lay, h, s) in
              enumerate(found.top, 1)]
    lines += ["", "every head (rows: layers, columns: heads):"]
    lines += matrix_lines([f"L{i}" for i in range(L)], [f"H{j}" for j in range(H)],
                          found.scores, indent=2, label_width=4, width=7)
    lay, h, _ = found.top[0]
    return lines + ["", *textwrap.wrap(copy_line(model, found), 100),
                    f"one head on a sentence: attention-workshop real \"the river bank\" "
                    f"--model {shlex.quote(model.name)} --layer {lay} --head {h}"]


def chance_of(model, found):  # -> the score of a head with no pattern, on these ids
    from attention_workshop.real.head_patterns import HALF, chance

    return chance(found.kind, len(found.ids), len(found.ids) - 2 * HALF, model.config.causal)


def copy_line(model, found):  # -> does the model predict the repeat?
    if found.loss_first is not None:
        return (f"copying: next-token loss {found.loss_first:.2f} nats on the first half (new "
                f"tokens), {found.loss_second:.2f} on the repeat (each token seen before)")
    if not model.config.causal:
        return (f"no copy loss: {model.name} is an encoder (every token sees the whole "
                "sequence, the repeat included), so its outputs are no next-token forecast")
    return f"no copy loss: {model.name} gives no next-token logits"
