"""One shape per module: every module follows the interface written in modules/__init__.py,
and a new one is a module file, a figure and a quiz plus a line in each registry.

The tiny Module 7 below is defined here, as its three files would define it; the test
adds it to the registries (modules.MODULES, figures.FILES) and, standing in for the files,
to sys.modules. `run`, `quiz` and their help then show it with nothing else edited.
"""

import dataclasses
import importlib
import inspect
import math
import sys
import types
from dataclasses import dataclass

import pytest

from attention_workshop import cli, figures, modules
from attention_workshop.commands import quiz, run  # noqa: F401 (loaded before the lists grow)
from attention_workshop.figures import Drawing, canvas
from attention_workshop.modules import module1
from attention_workshop.quiz.question import Question

TITLE = "Module 7: bank's share for river, read from Module 1"


@dataclass(frozen=True)
class Result:
    share: float  # bank's raw weight on river in "the river bank"


def run_module7(log, earlier):
    share = float(earlier[module1.Result].weights_river[2, 1])
    log.section(25, TITLE)
    log(f"  bank -> river, raw: {share:.3f}")
    return Result(share=share)


def draw_share(result, path):  # Result, Path -> Path
    fig, ax = canvas.new_figure(3, 2)
    ax.bar(["river"], [result.share])
    ax.set_title(f"bank -> river: {result.share:.3f}")
    return canvas.save(fig, path)


def questions(results):
    share = results[Result].share
    return [Question("What share of bank's raw attention goes to river?", share,
                     f"softmax([0, 0.54, 0.99]) gives river {share:.3f}.")]


@pytest.mark.parametrize("name", modules.MODULES)
def test_every_module_follows_the_interface(name):
    [module] = modules.load([name])
    assert module.TITLE.startswith(f"Module {modules.key(name)}: ")
    assert dataclasses.is_dataclass(module.Result)
    assert module.Result.__dataclass_params__.frozen
    assert list(inspect.signature(module.run).parameters) == ["log", "earlier"]
    quiz_questions = importlib.import_module(f"attention_workshop.quiz.{name}").questions
    assert list(inspect.signature(quiz_questions).parameters) == ["results"]


def test_every_figure_reads_results_of_listed_modules():
    kinds = {module.Result for module in modules.load()}
    drawings = figures.registry()
    assert {"bank_split.png", "scaling.png", "real_head_view.html"} <= set(drawings)
    for name, drawing in drawings.items():
        assert drawing.reads and set(drawing.reads) <= kinds, name
        assert drawing.cost > 0 and name.endswith((".png", ".html"))


def hand_share():
    """softmax of bank's dot products with the, river, bank, worked from the lesson's rows."""
    scores = [0.0, 0.3 * 0.9 + 0.9 * 0.3, 0.3**2 + 0.3**2 + 0.9**2]
    e = [math.exp(s) for s in scores]
    return e[1] / sum(e)


def as_file(name, **attributes):  # a module object, as importing the file NAME would give
    file = types.ModuleType(name)
    file.__dict__.update(attributes)
    return file


@pytest.fixture
def module7(monkeypatch):
    files = [as_file("attention_workshop.modules.module7", TITLE=TITLE, Result=Result,
                     run=run_module7),
             as_file("attention_workshop.figures.tiny",
                     FIGURES={"tiny_share.png": Drawing((Result,), 0.05, draw_share)}),
             as_file("attention_workshop.quiz.module7", questions=questions)]
    for file in files:
        monkeypatch.setitem(sys.modules, file.__name__, file)
    monkeypatch.setattr(modules, "MODULES", (*modules.MODULES, "module7"))
    monkeypatch.setattr(figures, "FILES", (*figures.FILES, "tiny"))


def test_run_writes_its_log_lines_and_draws_its_figure(module7, tmp_path, capsys,
                                                       replayed_modules):
    out = tmp_path / "out"
    assert cli.main(["run", "--no-real", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    lines = (out / "results.log").read_text().splitlines()
    assert lines[-2:] == [f"[S25] {TITLE}", f"  bank -> river, raw: {hand_share():.3f}"]  # last
    assert (out / "tiny_share.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert f"wrote {out / 'tiny_share.png'}" in printed
    assert f"wrote {out / 'scaling.png'}" in printed  # the others are still drawn


def test_its_quiz_and_the_help_list_it(module7, capsys, replayed_modules):
    assert cli.main(["quiz", "--reveal"]) == 0
    out = capsys.readouterr().out
    assert f"{TITLE}: 1 questions" in out
    assert f"  answer: {hand_share():.3f}" in out.split(TITLE)[1]
    assert cli.main(["quiz", "--help"]) == 0
    assert f"{', '.join(modules.key(m) for m in modules.MODULES)};" in capsys.readouterr().out
    assert modules.MODULES[-1] == "module7"  # the plug-in, after every registered module
    assert cli.main(["run", "--help"]) == 0
    assert "run every module (0-7)" in capsys.readouterr().out
