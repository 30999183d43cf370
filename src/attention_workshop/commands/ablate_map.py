"""`attention-workshop ablate --map`: every head of a decoder switched off in turn, alone, and
what each costs the next-token forecast (real/analysis/effect_map.py): the strongest heads
overall and in each layer (text), the whole layer x head grid (JSON), the map drawn with --out.

On Module 4's repeated sequence the loss is the repeat's, so the induction heads of
results.log [S18] stand out; --text measures every next token of a text instead.
"""

from attention_workshop.commands.real import progress, say
from attention_workshop.reading import printable

TOP = 10  # heads named overall
PER_LAYER = 3  # heads named in each layer's line


def figure_name(fmt):  # "png" -> "effect_map.png"
    return f"effect_map.{fmt}"


def main(args):
    """Inputs checked (ablate.check_choice, --out's folder, the model, --text) before the
    ablated runs; the report printed once the figure is in place."""
    import contextlib

    from attention_workshop.commands.head_options import check_decoder, text_ids
    from attention_workshop.real import load_model
    from attention_workshop.real.analysis.effect_map import effect_map
    from attention_workshop.real.analysis.head_patterns import sequence_for

    with contextlib.ExitStack() as stack:
        stage = None
        if args.out is not None:
            from attention_workshop.staging import staged

            stage = stack.enter_context(staged(args.out, "ablate",
                                               expect=(figure_name(args.figure_format),)))
        # the model's own precision (float32 from a GGUF file): the accelerator runs
        model = load_model(args.model, download=args.download, say=progress)
        check_decoder(model)
        if args.text is None:
            ids, lead = sequence_for(model)
        else:
            ids, lead = text_ids(model, args.text), None
        cfg = model.config
        progress(f"switching each of {model.name}'s {cfg.n_layer * cfg.n_head} heads off in "
                 "turn, alone (each run starts at its head's layer) ...")
        found = effect_map(model, ids, lead, args.how, say=progress)
        report = json_report(found, ids, args) if args.format == "json" else \
            "\n".join(text_report(model, found, ids, args))
        if stage is not None:
            from attention_workshop.figures.interventions import effect_map_figure

            path = effect_map_figure(found, stage.path / figure_name(args.figure_format))
    print(report)
    if stage is not None:
        say(f"wrote {printable(stage.final(path))}")
    return 0


def json_report(found, ids, args):  # EffectMap, ids -> str
    import json

    return json.dumps({
        "model": found.model, "how": found.how, "text": args.text, "part": found.part,
        "ids": [int(i) for i in ids], "loss_before": found.before,
        "loss_after": found.after.tolist(),  # [layer][head]: nats with that head alone off
        "effect": found.effect.tolist(),  # loss_after - loss_before
        "top": [{"layer": lay, "head": h, "effect": e} for lay, h, e in found.top(TOP)],
        "seconds": round(found.seconds, 1), "cpu_seconds": round(found.cpu_seconds, 1)},
        allow_nan=False)


def signed(nats):  # 1.7912 -> '+1.79', -0.004 -> '-0.00'
    return f"{nats:+.2f}"


def text_report(model, found, ids, args):  # -> list of lines
    """Example: 'every head on: 1.99 nats on the repeat', then 'the 10 heads whose loss hurts
    most: L18H6 +1.79, ...', then one line a layer: 'L18  H6 +1.79  H7 +0.60  H1 +0.35'."""
    from attention_workshop.commands.real_report import describe

    cfg = model.config
    part = ("on the repeat of 50 random tokens (seed 0) repeated once" if found.part == "repeat"
            else f"on every next token of the text given ({len(ids)} tokens)")
    named = lambda top: "  ".join(f"L{lay}H{h} {signed(e)}" for lay, h, e in top)  # noqa: E731
    top = found.top(TOP)
    lines = [describe(model),
             f"each head switched off alone ({found.how}), {cfg.n_layer * cfg.n_head} runs; "
             f"next-token loss {part}",
             f"every head on: {found.before:.2f} nats; a head's number is how much it rises "
             "with that head off", "",
             f"the {len(top)} heads the forecast misses most:", "  " + named(top[:5]),
             *(["  " + named(top[5:])] if top[5:] else []), "",
             f"each layer's {PER_LAYER} strongest (layer: head and rise in nats):"]
    for layer in range(cfg.n_layer):
        row = found.effect[layer]  # [n_head]
        best = sorted(range(cfg.n_head), key=lambda h: (-row[h], h))[:PER_LAYER]
        lines.append(f"  L{layer:<3}" + "  ".join(f"H{h} {signed(row[h])}" for h in best))
    lines += ["", f"{cfg.n_layer * cfg.n_head} ablated runs in {found.seconds:.1f} s "
              f"({found.cpu_seconds:.1f} s of CPU); each starts at its head's layer from the "
              "plain run's residual stream"]
    return lines
