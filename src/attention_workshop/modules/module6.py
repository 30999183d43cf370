"""Module 6: attention learns. Our own backpropagation (training/) trains the toy's W_Q and
W_K, measures Module 2's aside at d = 256, and grows an induction head.

Writes sections [S20]-[S24], after Module 5's. Training amplifies rounding, so everything
runs in float64 with one BLAS thread, and the log prints only digits that stay the same
when every starting weight moves by 1e-12 (tests/test_training_module.py).
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED
from attention_workshop.embeddings import AXES, SENT_MONEY, SENT_RIVER, embed, tokenize
from attention_workshop.real.analysis.head_patterns import ranked
from attention_workshop.real.blas_threads import one_blas_thread
from attention_workshop.report import fmt_list, matrix_lines
from attention_workshop.training import induction, scale_aside, wiring

TITLE = "Module 6: attention learns (our own backpropagation)"
LOGGED = (0, 25, 50, 100, 200, 300)  # [S20]'s loss curve: these steps


@dataclass(frozen=True)
class Result:
    """The learned wiring, the aside at d = 256, and the induction run."""

    W_Q: np.ndarray  # [4, 2] learned, rows the axes (water, money, place, filler)
    W_K: np.ndarray  # [4, 2]
    wiring_losses: np.ndarray  # [wiring.STEPS + 1] training loss at every step
    bank_learned: dict  # {lesson sentence: bank's weights [3] under the learned wiring}
    bank_wired: dict  # {lesson sentence: bank's weights [3] under Module 2's wiring}
    aside: dict  # {True: scale_aside.AsideRun scaled, False: unscaled}
    snapshots: list  # [induction.Snapshot] every induction.EVERY steps
    phase: tuple  # (step before, step after) the steepest fall of the second-copy loss
    ablation: dict  # {label: (first_copy, second_copy) loss with those heads off}
    wiring_path: tuple = ()  # ((W_Q, W_K) [4, 2] each) at every step 0 .. wiring.STEPS, copies


def log_wiring(log, w_q, w_k, losses):
    log.section(20, "Module 6: the toy's W_Q and W_K learned by gradient descent (d_k = 2)")
    train = wiring.sentences(wiring.TRAIN)
    log("  the task: bank's output vector must tell which kind of bank the sentence is about;")
    log("  its water and money numbers are two scores, and the loss is the cross entropy of")
    log("  the right kind (log 2 = 0.693 when it cannot tell)")
    for kind in wiring.KINDS:
        log(f"  {kind}-kind topic words: {', '.join(wiring.TRAIN[kind])}")
    log(f"  {len(train)} training sentences: each word in '" + "', '".join(
        t.format("...") for t in wiring.TEMPLATES) + "'")
    log(f"  start: entries N(0, {wiring.START}^2), seed {wiring.SEED}; plain gradient "
        f"descent, step {wiring.LR}, {wiring.STEPS} steps, on all sentences at once")
    log("  loss: " + ", ".join(f"step {s} {losses[s]:.3f}" for s in LOGGED))
    log("  learned W_Q and W_K (rows: the input axes; columns: channels 0 and 1):")
    log.extend(matrix_lines(AXES, ["Q ch0", "Q ch1", "K ch0", "K ch1"],
                            np.hstack([w_q, w_k]), decimals=2))
    log("  W_Q @ W_K.T (row: the query's axis; column: the key's): learned | wired")
    both = np.hstack([w_q @ w_k.T, W_Q_WIRED @ W_K_WIRED.T])
    log.extend(matrix_lines(AXES, [*AXES, *AXES], both, decimals=2))
    for c in range(w_q.shape[1]):
        log(f"  channel {c}: the query reads {_reads(w_q[:, c])}; the key reads "
            f"{_reads(w_k[:, c])}")
    log("  only W_Q @ W_K.T sets the scores: turning both channels together changes nothing")


def _reads(column):  # -> "place +3.09, water +1.06": the entries at least half the largest
    big = np.abs(column) >= np.abs(column).max() / 2
    order = np.argsort(-np.abs(column), kind="stable")
    return ", ".join(f"{AXES[i]} {column[i]:+.2f}" for i in order if big[i])


def log_bank(log, w_q, w_k):  # -> ({sentence: learned weights}, {sentence: wired weights})
    log.section(21, "learned against wired: bank's weights, and sentences never trained on")
    learned, wired = {}, {}
    for s in (SENT_RIVER, SENT_MONEY):
        X = embed(s)[None]
        learned[s] = wiring.bank_weights(w_q, w_k, X)[0][0, 2]
        wired[s] = wiring.bank_weights(W_Q_WIRED, W_K_WIRED, X)[0][0, 2]
        log(f'  "{s}", bank over ({", ".join(tokenize(s))}): learned {fmt_list(learned[s])}'
            f" | wired {fmt_list(wired[s])}")
    log("  (river and money never appear in training: both lesson sentences are held out)")
    for label, topics in (("training", wiring.TRAIN), ("held-out", wiring.HELD_OUT)):
        data = wiring.make_batch(wiring.sentences(topics))
        parts = []
        for name, (q, k) in (("learned", (w_q, w_k)), ("wired", (W_Q_WIRED, W_K_WIRED))):
            loss = wiring.loss_and_grads(q, k, data)[0]
            right = wiring.kinds_right(q, k, data)
            parts.append(f"{name} loss {loss:.3f}, kind right {right}/{len(data.bank)}")
        log(f"  {label} sentences ({len(data.bank)}): " + "; ".join(parts))
    held = ", ".join(w for words in wiring.HELD_OUT.values() for w in words)
    log(f"  held-out topic words: {held}")
    return learned, wired


def log_aside(log, runs):
    log.section(22, f"the sqrt(d_k) aside measured: the same training at d_k = "
                    f"{scale_aside.D}, with and without the division")
    log(f"  starts: W_Q, W_K entries N(0, 1) (4 x {scale_aside.D}), seeds 0-"
        f"{scale_aside.STARTS - 1}, the same for both; step {wiring.LR}, {scale_aside.STEPS} "
        "steps each")
    log(f"  per start: rows pinned (top weight > {scale_aside.PINNED}), the gradient's size "
        "at the start, the loss and bank's weight on its topic word, start -> end")
    for scaled in (True, False):
        r = runs[scaled]
        log(f"  {f'divided by sqrt({scale_aside.D})' if scaled else 'unscaled'}:")
        for seed in range(len(r.pinned)):
            loss, on = r.losses[seed], r.on_topic[seed]
            log(f"    seed {seed}: pinned {r.pinned[seed]:6.1%}, gradient "
                f"{r.grad_start[seed]:.1e}, loss {loss[0]:.3f} -> {loss[-1]:.3f}, on topic "
                f"{on[0]:.2f} -> {on[1]:.2f}")
    stuck = [seed for seed, curve in enumerate(runs[False].losses) if curve[0] - curve[-1] < 1e-3]
    learned = runs[True].on_topic[:, 1]
    log(f"  scaled, every start learns alike (on topic {learned.min():.2f}-{learned.max():.2f}); "
        f"unscaled, the start decides: {len(stuck)} of {len(runs[False].pinned)} never moved")
    log("  (softmax passes almost no gradient through a pinned row: a start pinned off the "
        "topic word stays there)")


def log_induction(log, snaps):  # -> phase (step before, step after)
    cfg = induction.CONFIG
    log.section(23, "an induction head forms: a 2-layer attention-only transformer, trained by "
                    "our own backpropagation")
    n_params = cfg.n_vocab * cfg.d_model * 2 + cfg.n_ctx * cfg.d_model + cfg.n_layer * 4 * (
        cfg.d_model * cfg.n_head * cfg.d_head)
    log(f"  model: {cfg.n_vocab}-token vocabulary, d_model {cfg.d_model}, {cfg.n_layer} layers x "
        f"{cfg.n_head} heads (d_head {cfg.d_head}), learned positions, no MLP, no norm: "
        f"{n_params:,} parameters")
    log(f"  data: {cfg.n_ctx + 1} random tokens in which {induction.SEGMENT} repeat once, the "
        "second copy at a random distance (no fixed offset to learn from positions)")
    log(f"  Adam, lr {induction.LR}, {induction.STEPS} steps of {induction.BATCH} fresh "
        f"sequences; loss on {induction.HELD_OUT} held-out sequences, per copy (nats; the "
        f"first copy is random: log {cfg.n_vocab} = {np.log(cfg.n_vocab):.2f} at best)")
    half = cfg.n_ctx // 2
    log(f"  scores: Module 4's (real/analysis/head_patterns.py) on {half} random tokens "
        "repeated once")
    heads = " ".join(f"L{lay}H{h}" for lay in range(cfg.n_layer) for h in range(cfg.n_head))
    log(f"    step  first second | induction {heads} | previous {heads}")
    for s in snaps:
        ind, prev = (" ".join(f"{x:4.2f}" for x in a.ravel()) for a in (s.induction, s.previous))
        log(f"    {s.step:4d}  {s.first_copy:5.2f}  {s.second_copy:5.2f} |           {ind} |"
            f"          {prev}")
    phase = induction.phase_change(snaps)
    at = {s.step: s for s in snaps}
    log(f"  phase change: the second-copy loss fell most between steps {phase[0]} and "
        f"{phase[1]} ({at[phase[0]].second_copy:.2f} -> {at[phase[1]].second_copy:.2f})")
    prev_at = induction.first_above(snaps, "previous", 0, 0.3)
    ind_at = induction.first_above(snaps, "induction", cfg.n_layer - 1, 0.5)
    first = prev_at is not None and ind_at is not None and prev_at <= ind_at
    order = "first" if first else "not first"
    log(f"  layer 0's best previous-token score first above 0.3 at step {prev_at}; layer 1's "
        f"best induction score first above 0.5 at step {ind_at} (the previous-token head {order})")
    return phase


def log_tools(log, params, snaps):  # -> {label: (first, second)} losses with heads off
    from attention_workshop.real.analysis.head_patterns import copy_loss
    from attention_workshop.training import transformer

    cfg = induction.CONFIG
    log.section(24, "the trained model through the workshop's tools: heads by pattern, and "
                    "switched off")
    last = snaps[-1]
    for kind, scores in (("induction", last.induction), ("previous", last.previous)):
        top = ", ".join(f"L{lay} H{h} = {x:.2f}" for lay, h, x in ranked(scores, 2))
        log(f"  {kind} heads (Module 4's ranking): {top}")
    ids = induction.pattern_sequence(cfg)
    logits, _ = transformer.forward(params, cfg, np.asarray(ids)[None])
    first, second = copy_loss(logits[0], ids)
    log(f"  Module 4's copy loss on the pattern sequence: {first:.2f} nats on the first "
        f"half, {second:.2f} on the repeat")
    data = induction.held_out(cfg)
    top_ind = ranked(last.induction[-1:], 1)[0][1]  # layer 1's best induction head
    top_prev = ranked(last.previous[:1], 1)[0][1]  # layer 0's best previous-token head
    cases = {"none": (), f"L1 H{top_ind}": ((1, top_ind),),
             "layer 1 (both)": tuple((1, h) for h in range(cfg.n_head)),
             f"L0 H{top_prev}": ((0, top_prev),),
             "layer 0 (both)": tuple((0, h) for h in range(cfg.n_head))}
    ablation = {label: induction.copy_losses(params, cfg, data, heads)
                for label, heads in cases.items()}
    log("  held-out loss with heads switched off (output zero, by Module 5's ablation hooks), "
        "first | second copy:")
    log("    " + "; ".join(f"{label}: {a:.2f} | {b:.2f}" for label, (a, b) in ablation.items()))
    return ablation


def run(log, earlier):
    """Log [S20]-[S24] (reads no earlier module)."""
    with one_blas_thread():  # products round the same way on every machine's thread count
        data = wiring.make_batch(wiring.sentences(wiring.TRAIN))
        path = []  # the explorer's replay: (W_Q, W_K) at every step
        w_q, w_k, losses, _ = wiring.train(*wiring.start(), data, path=path)
        log_wiring(log, w_q, w_k, losses)
        learned, wired = log_bank(log, w_q, w_k)
        aside = {scaled: scale_aside.measure(scaled) for scaled in (True, False)}
        log_aside(log, aside)
        params, snaps = induction.train()
        phase = log_induction(log, snaps)
        ablation = log_tools(log, params, snaps)
    return Result(W_Q=w_q, W_K=w_k, wiring_losses=losses, bank_learned=learned,
                  bank_wired=wired, aside=aside, snapshots=snaps, phase=phase,
                  ablation=ablation, wiring_path=tuple(path))
