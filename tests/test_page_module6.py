"""explorer.html's Module 6 panel in headless Chromium: the trainings replayed with a slider.

Every number read off the page is checked against a second computation: the induction
model's scores and weights at a step against torch's own forward (training_reference.py) on
that step's parameters, scored by Module 4's definitions; the last step against results.log
[S23]'s last row as Module 6 printed it; the toy's W_Q @ W_K.T and bank's weights against a
fresh training to that step, multiplied and softmaxed here by hand. The slider is driven by
keys and buttons, the page read on a phone, and axe-core finds nothing serious.
"""

import re
from types import SimpleNamespace

import numpy as np
import pytest
from browser import axe_violations, cells, doc_screenshots, open_page
from shared_run import alone
from test_page_learner_path import in_view
from training_reference import torch_forward

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED
from attention_workshop.embeddings import SENT_MONEY, SENT_RIVER, embed
from attention_workshop.figures.explorer import FIGURES
from attention_workshop.modules import module2, module6
from attention_workshop.modules.module2 import scaling_experiment
from attention_workshop.real.analysis.head_patterns import pattern_scores, repeated_ids
from attention_workshop.training import induction, wiring

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def m6():  # (Module 6's Result, its log), run once a session (~4 s; shared_run.py)
    return alone(module6)


def page_from_run(folder, m6_result):  # explorer.html as `run` draws it (FIGURES), no Module 3
    results = {module2.Result: SimpleNamespace(scaling=scaling_experiment())}
    if m6_result is not None:
        results[module6.Result] = m6_result
    return FIGURES["explorer.html"](results, folder / "explorer.html")


@pytest.fixture(scope="module")
def training_page(m6, tmp_path_factory):
    return page_from_run(tmp_path_factory.mktemp("training"), m6[0])


def section(log, number):  # the lines of results.log section [S<number>]
    start = log.starts[number] - 1
    ends = [s - 1 for s in log.starts.values() if s - 1 > start]
    return log.lines[start:min(ends, default=len(log.lines))]


def s23_rows(log):  # {step: (first, second, [induction x 4], [previous x 4])} as printed
    rows = {}
    for line in section(log, 23):
        found = re.fullmatch(r"\s+(\d+)\s+(\S+)\s+(\S+) \|\s+([\d. ]+?) \|\s+([\d. ]+)", line)
        if found:
            step, first, second, ind, prev = found.groups()
            rows[int(step)] = (first, second, ind.split(), prev.split())
    return rows


def torch_patterns(params):  # the pattern sequence through torch -> attentions [L, H, T, T]
    cfg = induction.CONFIG
    ids = repeated_ids(cfg.n_vocab, half=cfg.n_ctx // 2)  # Module 4's test sequence
    keep = []
    with torch.no_grad():
        torch_forward({n: torch.from_numpy(p) for n, p in params.items()}, cfg,
                      torch.tensor([ids]), keep=keep)
    att = np.stack([w[0].numpy() for w in keep])  # [L H, T, T], layer by layer
    return att.reshape(cfg.n_layer, cfg.n_head, *att.shape[1:])


def two(x):  # how the page and the log print a score or a loss
    return f"{x:.2f}"


def short(x):  # how the weights table prints a weight: 3 decimals, no leading 0
    return f"{x:.3f}".removeprefix("0")


def to_step(page, selector, k):  # the range moved to its k-th step by keys alone
    page.focus(selector)
    page.keyboard.press("Home")
    for _ in range(k):
        page.keyboard.press("ArrowRight")


def test_the_kept_copies_are_each_steps_parameters(m6):
    """The replay's data: a snapshot's parameters are those a training stopped at its step
    returns (bit for bit), and the toy's path at step k is a training of k steps'."""
    params, _ = induction.train(steps=50)
    kept = m6[0].snapshots[2]
    assert kept.step == 50 and all(np.array_equal(kept.params[n], params[n]) for n in params)
    data = wiring.make_batch(wiring.sentences(wiring.TRAIN))
    w_q, w_k, _, _ = wiring.train(*wiring.start(), data, steps=120)
    assert len(m6[0].wiring_path) == wiring.STEPS + 1
    assert np.array_equal(m6[0].wiring_path[120][0], w_q)
    assert np.array_equal(m6[0].wiring_path[120][1], w_k)


def test_each_steps_scores_and_weights_are_torchs_on_that_steps_parameters(
        browser, training_page, m6):
    page = (opened := open_page(browser, training_page)).page
    snaps = m6[0].snapshots
    assert [s.step for s in snaps] == list(range(0, 401, 25))
    phase = [s.step for s in snaps].index(m6[0].phase[0])
    for k in (0, 3, phase, len(snaps) - 1):
        to_step(page, "#m6-step", k)
        step = snaps[k].step
        assert page.text_content("#m6-step-value") == f"step {step} of 400"
        assert page.get_attribute("#m6-step", "aria-valuetext") == f"step {step} of 400"
        att = torch_patterns(snaps[k].params)
        ind, prev = pattern_scores(att, "induction"), pattern_scores(att, "previous")
        assert cells(page, "#m6-scores") == [[two(ind[lay, h]), two(prev[lay, h])]
                                              for lay in range(2) for h in range(2)]
        labels = page.eval_on_selector_all(".pattern-label", "s => s.map(x => x.textContent)")
        assert labels == [f"L{lay} H{h}: induction {two(ind[lay, h])}, previous "
                          f"{two(prev[lay, h])}" for lay in range(2) for h in range(2)]
        T = att.shape[-1]  # the chosen head's table (L1 H1 at first): every weight, causal
        assert cells(page, "#m6-weights") == [[short(att[1, 1, i, j]) if j <= i else "\u2013"
                                               for j in range(T)] for i in range(T)]
    page.focus("#m6-head-0")  # another head's table, by the keyboard
    page.keyboard.press("Enter")
    assert page.get_attribute("#m6-head-0", "aria-pressed") == "true"
    assert page.get_attribute("#m6-head-3", "aria-pressed") == "false"
    assert page.text_content("#m6-weights caption").startswith("L0 H0's weights at step 400")
    att = torch_patterns(snaps[-1].params)
    assert cells(page, "#m6-weights")[9][:3] == [short(w) for w in att[0, 0, 9, :3]]
    page.focus("#m6-weights")  # a weight read in words, then a masked cell
    page.keyboard.press("ArrowDown")
    said = lambda: page.text_content("#m6-weights-say")  # noqa: E731
    tokens = repeated_ids(32, half=8)
    assert said() == f"L0 H0 at step 400: 1: {tokens[1]} \u2192 0: {tokens[0]} = " \
        f"{att[0, 0, 1, 0]:.3f}"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert said() == (f"L0 H0 at step 400: 1: {tokens[1]} \u2192 2: {tokens[2]} masked: a "
                      "token never looks ahead")
    assert not opened.errors


def test_the_last_step_is_s23s_last_row_and_the_phase_change_is_s23s(browser, training_page, m6):
    page = (opened := open_page(browser, training_page)).page
    rows = s23_rows(m6[1])
    assert sorted(rows) == list(range(0, 401, 25))
    page.focus("#m6-step")
    page.keyboard.press("End")
    first, second, ind, prev = rows[400]
    assert page.text_content("#m6-now") == (
        f"Step 400 of 400: held-out loss {first} nats on the first copy, {second} on the second.")
    assert cells(page, "#m6-scores") == [list(pair) for pair in zip(ind, prev, strict=True)]
    assert page.is_disabled("#m6-step-next") and not page.is_disabled("#m6-step-back")
    best_prev, best_ind = max(prev[:2], key=float), max(ind[2:], key=float)  # as printed
    assert page.get_attribute("#m6-score-curve", "aria-label").endswith(
        f"at step 400: layer 0's best previous-token score {best_prev}, layer 1's best "
        f"induction score {best_ind}")
    # the phase change as [S23] names it: "fell most between steps A and B (x -> y)"
    line = next(x for x in section(m6[1], 23) if x.startswith("  phase change:"))
    a, b, x, y = re.search(r"steps (\d+) and (\d+) \((\S+) -> (\S+)\)", line).groups()
    assert page.text_content("#m6-phase") == f"go to the phase change (steps {a} \u2192 {b})"
    page.click("#m6-phase")
    assert page.text_content("#m6-step-value") == f"step {a} of 400"
    assert f"({x} \u2192 {y})" in page.text_content("#m6-notice")
    assert page.get_attribute("#m6-loss-curve", "aria-label").endswith(
        f"at step {a}: first copy {rows[int(a)][0]}, second copy {x} nats")
    page.click("#m6-step-next")
    assert page.text_content("#m6-step-value") == f"step {b} of 400"
    assert page.text_content("#m6-notice").startswith("The phase change: since step " + a)
    page.click("#m6-step-back")
    page.click("#m6-step-back")  # before it: a previous-token head, and no induction head yet
    assert page.text_content("#m6-notice").startswith("What to notice: a previous-token head")
    to_step(page, "#m6-step", 0)
    assert page.is_disabled("#m6-step-back")
    assert page.text_content("#m6-notice").startswith("What to notice: no head has a pattern")
    assert not opened.errors


def test_play_steps_through_the_training_and_pauses(browser, training_page, m6):
    # bypass_csp: wait_for_function evaluates its test as a script of its own
    page = (opened := open_page(browser, training_page, bypass_csp=True)).page
    page.focus("#m6-step-play")
    page.keyboard.press("Enter")  # from step 0, a step every 0.7 s
    assert page.get_attribute("#m6-step-play", "aria-pressed") == "true"
    page.wait_for_function("document.getElementById('m6-step').value === '2'", timeout=10000)
    page.keyboard.press("Enter")  # pause
    assert page.get_attribute("#m6-step-play", "aria-pressed") == "false"
    held = page.input_value("#m6-step")
    page.wait_for_timeout(1600)
    assert page.input_value("#m6-step") == held  # paused: it stays
    step = m6[0].snapshots[int(held)].step
    assert page.text_content("#m6-step-value") == f"step {step} of 400"
    assert page.text_content("#m6-now").startswith(f"Step {step} of 400: held-out loss "
                                                   f"{m6[0].snapshots[int(held)].first_copy:.2f}")
    page.click("#m6-step-play")  # and a control stops it
    page.click("#m6-step-back")
    assert page.get_attribute("#m6-step-play", "aria-pressed") == "false"
    assert not opened.errors


def bank_by_hand(w_q, w_k, sentence):  # bank's row of softmax(Q K^T / sqrt(2)), by hand
    X = embed(sentence)
    scores = (X @ w_k) @ (X[2] @ w_q) / np.sqrt(2)
    e = np.exp(scores - scores.max())
    return e / e.sum()


def shown(x):
    text = f"{x:.3f}"
    return "0.000" if float(text) == 0 else text


def test_the_toy_moves_toward_its_end_beside_the_hand_wiring(browser, training_page, m6):
    page = (opened := open_page(browser, training_page)).page
    data = wiring.make_batch(wiring.sentences(wiring.TRAIN))
    end = wiring.train(*wiring.start(), data)
    for k in (0, 20, 60):  # the slider's steps: every 5th of the 300
        step = 5 * k
        to_step(page, "#m6-toy-step", k)
        assert page.text_content("#m6-toy-step-value") == f"step {step} of 300"
        assert page.get_attribute("#m6-toy-step", "aria-valuetext") == f"step {step} of 300"
        w_q, w_k, losses, _ = wiring.train(*wiring.start(), data, steps=step)  # a fresh run
        assert cells(page, "#m6-toy-now") == [[shown(v) for v in row] for row in w_q @ w_k.T]
        for n, sentence in enumerate((SENT_RIVER, SENT_MONEY)):
            assert cells(page, f"#m6-toy-bank-{n}") == [
                [shown(v) for v in bank_by_hand(*pair, sentence)]
                for pair in ((w_q, w_k), end[:2], (W_Q_WIRED, W_K_WIRED))]
        river = shown(bank_by_hand(w_q, w_k, SENT_RIVER)[1])
        said = page.text_content("#m6-toy-now-say")
        assert said.startswith(
            f"Step {step} of 300: training loss {losses[-1]:.3f}; bank puts {river} on river")
        apart = float(re.search(r"within (\S+) of where it ends", said).group(1))
        gap = np.abs(w_q @ w_k.T - end[0] @ end[1].T).max()  # exact; the page's: of 3 decimals
        assert abs(apart - gap) <= 0.001 and (step < 300 or apart == 0)
    assert cells(page, "#m6-toy-end") == [[shown(v) for v in row] for row in end[0] @ end[1].T]
    # the end and the hand wiring as [S20] prints them (2 decimals): learned | wired
    printed = [line.split()[1:] for line in section(m6[1], 20)
               if line.split()[:1] in (["water"], ["money"], ["place"], ["filler"])][-4:]
    page_end = [[float(v) for v in row] for row in cells(page, "#m6-toy-end")]
    assert np.abs(np.array(page_end) - np.array(printed, float)[:, :4]).max() <= 0.0051
    assert cells(page, "#m6-toy-wired") == [[f"{float(v):.3f}" for v in row[4:]]
                                            for row in printed]
    assert cells(page, "#m6-toy-wired")[2:] == [["2.000", "2.000", "0.000", "0.000"],
                                                ["0.000", "0.000", "1.500", "0.000"]]  # SPEC
    assert cells(page, "#m6-toy-bank-0")[2] == ["0.159", "0.500", "0.341"]  # Module 2's
    page.focus("#m6-toy-step")
    page.keyboard.press("End")
    assert page.is_disabled("#m6-toy-step-next")
    page.click("#m6-toy-step-back")
    assert page.text_content("#m6-toy-step-value") == "step 295 of 300"
    assert not opened.errors


def test_on_a_phone_the_step_and_what_it_moves_stay_in_view(browser, training_page):
    page = (opened := open_page(browser, training_page, 390, 844)).page
    page.eval_on_selector("#m6-induction", "e => e.scrollIntoView({block: 'start'})")
    page.focus("#m6-step")
    page.keyboard.press("End")
    assert in_view(page, "#m6-step") and in_view(page, "#m6-step-value")
    assert in_view(page, "#m6-now") and in_view(page, "#m6-loss-curve")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing sideways
    box = page.eval_on_selector_all(".pattern-head", "bs => bs.map(b => "
                                    "b.getBoundingClientRect().right)")
    assert len(box) == 4 and max(box) <= 390  # two heads a row, inside the screen
    assert not opened.errors


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_the_panel_has_no_serious_accessibility_violation(browser, training_page, width, height):
    page = (opened := open_page(browser, training_page, width, height, bypass_csp=True)).page
    assert page.locator("#module6").count() == 1
    assert axe_violations(page) == []
    page.click("#m6-phase")
    page.focus("#m6-head-1")
    page.keyboard.press("Enter")
    page.focus("#m6-weights")
    page.keyboard.press("ArrowDown")
    page.focus("#m6-toy-step")
    page.keyboard.press("End")
    assert axe_violations(page) == []
    assert not opened.errors


def test_a_page_without_module6_has_no_such_panel(browser, tmp_path):
    path = page_from_run(tmp_path, None)
    page = (opened := open_page(browser, path)).page
    assert page.locator("#module6").count() == 0 and page.locator("[id^=m6-]").count() == 0
    assert "Module 6" not in page.eval_on_selector_all("#nav a", "as => as.map(a => a.textContent)")
    assert page.evaluate("window.explorer.data.training") is None
    assert module6.Result in FIGURES["explorer.html"].optional
    assert not opened.errors


def test_screenshots_of_the_panel_at_desktop_and_phone_width(browser, training_page, tmp_path):
    """docs/explorer.md's pictures of the panel at the phase change (step 225):
    UPDATE_DOCS=1 pytest tests/test_page_module6.py -k screenshots writes them to docs/."""

    def prepare(page, name):
        page.focus("#m6-phase")
        page.keyboard.press("Enter")
        page.eval_on_selector("#m6-induction", "e => e.scrollIntoView()")

    doc_screenshots(browser, training_page, {"explorer-module6.png": (1280, 800),
                                             "explorer-module6-phone.png": (390, 844)},
                    tmp_path, prepare)
