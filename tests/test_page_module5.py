"""explorer.html's Module 5 panel in headless Chromium: each head set's losses read off the page
and compared with the log lines of the same run ([S14], [S18], [S19]) and, where the log prints
no such number (a first half), with transformers under the same pre-hook
(tests/interventions_reference.py); each continuation with transformers' own greedy loop under
that hook; the first differing token found here by a plain loop; radio buttons by keyboard; the
sink's value lengths against [S19]; a phone and axe-core; no panel without Module 5."""

import re
from types import SimpleNamespace

import pytest
from browser import axe_violations, cells, doc_screenshots, open_page
from interventions_reference import greedy, intervened, reference
from smollm2_reference import smollm2_path

from attention_workshop.figures.explorer import FIGURES
from attention_workshop.modules import module0, module1, module2, module4, module5, run_module
from attention_workshop.modules.module2 import scaling_experiment
from attention_workshop.real.analysis.head_patterns import sequence_for
from attention_workshop.report import Log


@pytest.fixture(scope="module")
def run5():  # (Module 4's and 5's Results, the log's lines): Modules 0-2, 4, 5 run once
    smollm2_path()
    log, results = Log(), {}
    for module in (module0, module1, module2, module4, module5):
        run_module(module, log, results)
    return SimpleNamespace(m4=results[module4.Result], m5=results[module5.Result],
                           lines=log.lines)


def page_from_run(folder, m4, m5):  # explorer.html as `run` draws it (FIGURES), no Module 3 or 6
    m2 = SimpleNamespace(scaling=scaling_experiment())  # all the page reads of Module 2
    results = {module2.Result: m2, module4.Result: m4, module5.Result: m5}
    return FIGURES["explorer.html"]({k: v for k, v in results.items() if v is not None},
                                    folder / "explorer.html")


@pytest.fixture(scope="module")
def panel_page(run5, tmp_path_factory):
    return page_from_run(tmp_path_factory.mktemp("module5"), run5.m4, run5.m5)


def section(lines, number):  # the lines of [S<number>], its header first
    first = next(i for i, line in enumerate(lines) if line.startswith(f"[S{number}]"))
    return lines[first:next((i for i in range(first + 1, len(lines))
                             if lines[i].startswith("[S")), len(lines))]


def logged_losses(lines):  # {choice name: (first half | None, repeat)} as the log prints them
    s14, s18, s19 = section(lines, 14), section(lines, 18), section(lines, 19)
    first, repeat = re.search(r"loss (\d+\.\d\d) nats on the first half, (\d+\.\d\d) on the "
                              "repeat", "\n".join(s14)).groups()
    top = {k: re.search(rf"top +{k} induction heads? +off: +(\d+\.\d\d)", "\n".join(s18))[1]
           for k in (3, 5)}
    drawn = re.search(r"5 random heads off .*: (\d+\.\d\d),", "\n".join(s18))[1]
    previous = re.search(r"loss on the repeat \d+\.\d\d -> (\d+\.\d\d)", "\n".join(s19))[1]
    return {"every head on": (first, repeat), "top 3 induction heads": (None, top[3]),
            "top 5 induction heads": (None, top[5]), "5 random heads": (None, drawn),
            "previous-token head": (None, previous)}


def their_losses(model, ids, heads):  # -> (first half, repeat) in nats, transformers' own
    torch = pytest.importorskip("torch")
    with intervened(model, 64, heads):
        logits = torch.tensor(reference(model, ids)[2], dtype=torch.float64)
    half, target = len(ids) // 2, torch.tensor(ids)
    cross = torch.nn.functional.cross_entropy
    return [float(cross(logits[rows], target[rows + 1])) for rows in
            (torch.arange(0, half - 1), torch.arange(half, 2 * half - 1))]


def choose(page, i):  # the learner clicks a set's label
    page.click(f"label[for=m5-choice-{i}]")
    assert page.is_checked(f"#m5-choice-{i}")


def test_each_sets_losses_are_the_logs_and_transformers(browser, panel_page, run5,
                                                        smollm2_model):
    page = (opened := open_page(browser, panel_page)).page
    choices, logged = run5.m5.choices, logged_losses(run5.lines)
    ids, lead = sequence_for(run5.m4.model)
    assert lead == 0 and [c.name for c in choices] == [
        "every head on", "top 3 induction heads", "top 5 induction heads",
        "previous-token head", "5 random heads"]
    plain = [f"{x:.2f}" for x in (choices[0].loss["first"], choices[0].loss["repeat"])]
    assert plain == list(logged["every head on"])  # [S14]'s two numbers
    table = cells(page, "#m5-all")
    for i, c in enumerate(choices):
        shown = [f"{c.loss['first']:.2f}", f"{c.loss['repeat']:.2f}"]
        if c.name in logged:  # the repeat (and the plain first half) exactly as the log prints
            expected = logged[c.name]
            assert shown[1] == expected[1] and expected[0] in (None, shown[0]), c.name
        if i:  # the rest against transformers with the same heads zeroed its own way
            theirs = their_losses(smollm2_model, ids, c.heads)
            assert all(abs(float(a) - b) <= 0.011 for a, b in zip(shown, theirs, strict=True))
        assert table[i][:2] == shown
        choose(page, i)
        says = page.text_content("#m5-loss")
        bars = page.eval_on_selector_all("#m5-bars .bar", "bs => bs.map(b => [b.children[0]"
                                         ".textContent, b.children[2].textContent])")
        if i == 0:
            assert says.startswith(f"Every head on: {plain[0]} nats on the first half, "
                                   f"{plain[1]} on the repeat.")
            assert bars == [["first half, every head on", plain[0]],
                            ["repeat, every head on", plain[1]]]
        else:
            heads = ", ".join(f"L{lay}H{h}" for lay, h in c.heads)
            assert says == (f"The {c.name} off ({heads}): {shown[0]} nats on the first half, "
                            f"{shown[1]} on the repeat; every head on: {plain[0]} and "
                            f"{plain[1]}.")
            assert bars == [["first half, every head on", plain[0]],
                            ["first half, heads off", shown[0]],
                            ["repeat, every head on", plain[1]], ["repeat, heads off", shown[1]]]
    assert choices[2].loss["repeat"] > 5 * choices[0].loss["repeat"]  # the induction heads copy
    assert not opened.errors


def test_each_continuation_is_transformers_greedy_with_the_first_difference_marked(
        browser, panel_page, run5, smollm2_model, smollm2_tokenizer):
    page = (opened := open_page(browser, panel_page)).page
    prompt = smollm2_tokenizer(module5.PANEL_PROMPT, add_special_tokens=False)["input_ids"]
    choices = run5.m5.choices
    theirs = []
    for c in choices:
        with intervened(smollm2_model, 64, c.heads):
            theirs.append(greedy(smollm2_model, prompt, module5.PANEL_TOKENS))
    assert theirs[0][0] == smollm2_tokenizer.convert_tokens_to_ids("\u0120wide")  # it copies
    assert theirs[2][0] != theirs[0][0]  # the top 5 off: it does not
    for i, c in enumerate(choices):
        assert c.continuation.new_ids == theirs[i], c.name
        tokens = smollm2_tokenizer.convert_ids_to_tokens(theirs[i])
        choose(page, i)
        rows = cells(page, "#m5-written")
        assert rows == ([tokens] if i == 0 else
                        [smollm2_tokenizer.convert_ids_to_tokens(theirs[0]), tokens])
        differs = next((k for k, (a, b) in enumerate(zip(theirs[0], theirs[i], strict=True))
                        if a != b), None)
        marked = page.eval_on_selector_all("#m5-written td", "ts => ts.map((t, j) => "
                                           "t.classList.contains('differs') ? j : -1)"
                                           ".filter(j => j >= 0)")
        notice = page.text_content("#m5-notice")
        if differs is None:
            assert marked == [] and ("writes the same" in notice or i == 0)
        else:  # the second row's cell k, counted over both rows' cells
            assert marked == [len(tokens) + differs]
            assert f"at new token {differs + 1}: it writes \u201c{tokens[differs]}\u201d" in notice
    assert not opened.errors


def test_the_keyboard_moves_between_the_sets(browser, panel_page, run5):
    page = (opened := open_page(browser, panel_page)).page
    choices = run5.m5.choices
    page.focus("#m5-choice-0")
    for i in range(1, len(choices)):
        page.keyboard.press("ArrowDown")  # a radio group: the arrow checks the next one
        assert page.is_checked(f"#m5-choice-{i}")
        assert page.text_content("#m5-loss").startswith(f"The {choices[i].name} off")
        assert cells(page, "#m5-written")[1] == [s.token for s in choices[i].continuation.steps]
    page.keyboard.press("ArrowDown")  # round to the first
    assert page.is_checked("#m5-choice-0") and len(cells(page, "#m5-written")) == 1
    assert not opened.errors


def test_the_sink_bars_are_s19s_value_lengths(browser, panel_page, run5):
    page = (opened := open_page(browser, panel_page)).page
    printed = [re.search(r"(L\d+H\d) \(KV head (\d)\): \|v\| (\d+\.\d\d) at position 0, mean "
                         r"(\d+\.\d\d) at the others", line).groups()
               for line in section(run5.lines, 19) if "|v|" in line and "KV head" in line]
    assert len(printed) == len(run5.m5.smollm2.sink_norms) == 3
    titles = page.eval_on_selector_all("#m5-sinks h4", "hs => hs.map(h => h.textContent)")
    assert titles == [f"{head} (KV head {kv})" for head, kv, _, _ in printed]
    for head, _, at0, rest in printed:
        bars = page.eval_on_selector_all(f"#m5-sink-{head} .bar", "bs => bs.map(b => "
                                         "[b.children[0].textContent, b.children[2].textContent])")
        assert bars == [["position 0", at0], ["the others (mean)", rest]]
    weight = re.search(r"L18H8 (\d\.\d{3}) -> ", "\n".join(section(run5.lines, 19)))[1]
    assert page.text_content("#m5-sink-say").startswith(
        f'L18H8 puts {weight} of its weight on position 0 in "{module5.SINK_TEXT}"')
    assert f"its value vector there is {printed[0][2]} long against {printed[0][3]} " \
        "elsewhere" in page.text_content("#m5-sink-say")
    assert not opened.errors


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_the_panel_is_accessible_and_fits_a_phone(browser, panel_page, width, height):
    page = (opened := open_page(browser, panel_page, width, height, bypass_csp=True)).page
    assert page.locator("#module5").count() == 1
    assert "Module 5" in page.eval_on_selector_all("#nav a", "as => as.map(a => a.textContent)")
    assert axe_violations(page) == []
    choose(page, 2)
    assert axe_violations(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing sideways
    box = page.eval_on_selector("#m5-written", "t => [t.getBoundingClientRect().right, "
                                "t.parentElement.scrollWidth <= t.parentElement.clientWidth]")
    assert box[0] <= width and box[1]  # the continuations fit without a sideways scroll
    assert not opened.errors


def test_a_page_without_module5_has_no_such_panel(browser, run5, tmp_path):
    path = page_from_run(tmp_path, run5.m4, None)  # Module 4 ran, Module 5 did not
    page = (opened := open_page(browser, path)).page
    assert page.locator("#module5").count() == 0 and page.locator("[id^=m5-]").count() == 0
    assert page.locator("#module4").count() == 1
    assert page.evaluate("window.explorer.data.switch") is None
    assert module5.Result in FIGURES["explorer.html"].optional
    assert not opened.errors


def test_screenshots_of_the_panel_at_desktop_and_phone_width(browser, panel_page, tmp_path):
    """docs/explorer.md's pictures of the panel with the top 5 induction heads off:
    UPDATE_DOCS=1 pytest tests/test_page_module5.py -k screenshots writes them to docs/."""

    def prepare(page, name):
        choose(page, 2)
        page.eval_on_selector("#m5-choices", "e => e.scrollIntoView()")
        page.mouse.move(0, 0)

    doc_screenshots(browser, panel_page, {"explorer-module5.png": (1280, 800),
                                          "explorer-module5-phone.png": (390, 844)},
                    tmp_path, prepare)
