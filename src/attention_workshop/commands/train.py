"""`attention-workshop train wiring|induction`: Module 6's trainings, run again with your own
steps and seed, showing progress as they go.

wiring     the toy's W_Q and W_K by plain gradient descent (training/wiring.py)
induction  the 2-layer attention-only transformer by Adam: an induction head forms
           (training/induction.py)
"""

import sys

TASKS = ("wiring", "induction")
PAGE = "explorer.html"  # written beside the figures by --out
MAX_STEPS = 20000  # a bound on the work: 20000 induction steps take minutes
HELP = "train the toy's wiring or a small transformer with our own backprop (Module 6)"


def add_arguments(parser):
    parser.add_argument("task", choices=TASKS,
                        help="wiring: the toy's W_Q and W_K; induction: a 2-layer "
                             "attention-only transformer, in which an induction head forms")
    parser.add_argument("--steps", type=int, metavar="N",
                        help="training steps (default: the log's, 300 for wiring and 400 for "
                             f"induction; at most {MAX_STEPS})")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="the random start (and, for induction, the batches); default 0, "
                             "the log's")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="progress and a summary as it trains (default), or JSON at the end")
    parser.add_argument("--out", metavar="DIR",
                        help="also write the figures and explorer.html (this training "
                             "replayed step by step) into DIR")


def check(args):  # -> None, or WorkshopError naming the option and what to give
    from attention_workshop.errors import WorkshopError

    if args.steps is not None and not 1 <= args.steps <= MAX_STEPS:
        raise WorkshopError(f"--steps {args.steps} is out of range: give 1 to {MAX_STEPS} "
                            "training steps")
    if not 0 <= args.seed < 2**32:
        raise WorkshopError(f"--seed {args.seed} is out of range: give 0 to {2**32 - 1}")


def main(args):
    """Options are checked, and --out's folder opened, before any training."""
    import contextlib

    check(args)
    with contextlib.ExitStack() as stack:
        stage = None
        if args.out:
            from attention_workshop.staging import staged

            # a learner's own file of one of the figures' names: refused before training
            stage = stack.enter_context(staged(args.out, "train", expect=(
                *figure_names(args.task), PAGE)))
        say = print if args.format == "text" else (lambda line: None)
        run = train_wiring if args.task == "wiring" else train_induction
        report, result = run(args.steps, args.seed, say)
        paths = [*draw(args.task, result, stage.path), page(args, result, stage.path)
                 ] if stage else []
    if args.format == "json":
        import json

        print(json.dumps(report))
    from attention_workshop.reading import printable

    for path in paths:
        print(f"wrote {printable(stage.final(path))}",
              file=sys.stderr if args.format == "json" else sys.stdout)
    return 0


def train_wiring(steps, seed, say):  # -> (JSON report, module6.Result for the figure)
    import numpy as np

    from attention_workshop.attention import W_K_WIRED, W_Q_WIRED
    from attention_workshop.embeddings import SENT_MONEY, SENT_RIVER, embed
    from attention_workshop.modules import module6
    from attention_workshop.report import fmt_list
    from attention_workshop.training import wiring

    steps = steps or wiring.STEPS
    data = wiring.make_batch(wiring.sentences(wiring.TRAIN))
    path = []  # (W_Q, W_K) at every step: the page's replay
    w_q, w_k, losses, _ = wiring.train(*wiring.start(seed=seed), data, steps, path=path)
    for step in range(0, steps + 1, max(1, steps // 10)):
        say(f"step {step:5d}: loss {losses[step]:.3f}")
    say("notice: the loss waits while every weight is near even, then falls once bank "
        "starts to prefer one word")
    bank = {}
    for s in (SENT_RIVER, SENT_MONEY):
        X = embed(s)[None]
        bank[s] = (wiring.bank_weights(w_q, w_k, X)[0][0, 2],
                   wiring.bank_weights(W_Q_WIRED, W_K_WIRED, X)[0][0, 2])
        say(f'bank in "{s}": learned {fmt_list(bank[s][0])}, wired {fmt_list(bank[s][1])}')
    report = {"task": "wiring", "seed": seed, "step": list(range(steps + 1)),
              "loss": [float(x) for x in losses], "W_Q": w_q.tolist(), "W_K": w_k.tolist(),
              "bank": {s: {"learned": b[0].tolist(), "wired": b[1].tolist()}
                       for s, b in bank.items()}}
    result = module6.Result(W_Q=w_q, W_K=w_k, wiring_losses=np.asarray(losses),
                            bank_learned={s: b[0] for s, b in bank.items()},
                            bank_wired={s: b[1] for s, b in bank.items()}, aside={},
                            snapshots=[], phase=(), ablation={}, wiring_path=tuple(path))
    return report, result


def train_induction(steps, seed, say):  # -> (JSON report, module6.Result for the figures)
    from attention_workshop.modules import module6
    from attention_workshop.training import induction

    steps = steps or induction.STEPS
    say("step  first  second | best induction (layer 1) | best previous (layer 0)")

    def line(s):
        say(f"{s.step:4d}  {s.first_copy:5.2f}  {s.second_copy:5.2f} | "
            f"{s.induction[-1].max():24.2f} | {s.previous[0].max():23.2f}")

    _, snaps = induction.train(steps=steps, seed=seed, say=line)
    phase = induction.phase_change(snaps) if len(snaps) > 1 else (0, 0)
    say(f"notice: the second-copy loss fell most between steps {phase[0]} and {phase[1]}, "
        "as layer 1's induction score rose; the first copy stays near log 32 = 3.47")
    report = {"task": "induction", "seed": seed, "step": [s.step for s in snaps],
              "loss": [s.loss for s in snaps],
              "first_copy_loss": [s.first_copy for s in snaps],
              "second_copy_loss": [s.second_copy for s in snaps],
              "induction": [s.induction.tolist() for s in snaps],
              "previous": [s.previous.tolist() for s in snaps], "phase_change": list(phase)}
    result = module6.Result(W_Q=None, W_K=None, wiring_losses=None, bank_learned={},
                            bank_wired={}, aside={}, snapshots=snaps, phase=phase, ablation={})
    return report, result


def figure_names(task):  # "wiring" -> ("learned_wiring.png",)
    return ("learned_wiring.png",) if task == "wiring" else (
        "induction_forms.png", "induction_patterns.png")


def page(args, result, folder):  # -> explorer.html in the stage: this training replayed
    """The one builder of explorer.html (write_page) with Module 6's panel from this run;
    Modules 1-2 and [S5] as on every page, no real model."""
    from attention_workshop.figures.explorer import write_page
    from attention_workshop.figures.explorer.data_module6 import training_section
    from attention_workshop.modules.module2 import scaling_experiment

    steps = "" if args.steps is None else f" --steps {args.steps}"
    source = (f"attention-workshop train {args.task} --seed {args.seed}{steps}: trained in "
              "float64 by the workshop's own backpropagation, in this command")
    return write_page(folder, scaling_experiment(), training=training_section(result, source))


def draw(task, result, folder):  # -> the figure paths written into the stage
    from attention_workshop.figures import training

    return [training.FIGURES[name].draw(result, folder / name) for name in figure_names(task)]
