"""explore's views: every registered --format renders, and a new view is one file + one line."""


import pytest
from explore_reference import ref_heads
from fresh import fresh_python

from attention_workshop import cli
from attention_workshop.embeddings import EMBED
from attention_workshop.explore import views


def render(ex, word=None):
    """A view written for this test (the registry imports it by module name): each word's
    largest wired weight, 'WORD 0.500000'."""
    return "\n".join(f"{t} {row.max():.6f}" for t, row in zip(ex.tokens, ex.wired["weights"],
                                                                strict=True))


def test_a_new_view_is_one_file_and_one_registry_line(monkeypatch, capsys):
    monkeypatch.setitem(views.VIEWS, "tops", (__name__, "each word's largest wired weight"))
    assert cli.main(["explore", "the river bank", "--format", "tops"]) == 0
    ref = ref_heads([EMBED[w] for w in ("the", "river", "bank")])
    expected = [f"{t} {max(row):.6f}" for t, row in zip(("the", "river", "bank"),
                                                         ref["wired"]["weights"], strict=True)]
    assert capsys.readouterr().out.splitlines() == expected
    assert cli.main(["explore", "--help"]) == 0
    assert "each word's largest wired weight" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("name", sorted(views.VIEWS))
def test_every_view_refuses_a_bad_word_before_printing(name, capsys):
    assert cli.main(["explore", "the river bank", "--format", name, "--word", "money"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--word 'money'" in err


@pytest.mark.parametrize("name", sorted(views.VIEWS))
def test_every_view_shows_every_word(name, capsys):
    assert cli.main(["explore", "a loan at the bank", "--format", name]) == 0
    out = capsys.readouterr().out
    assert all(word in out for word in ("a", "loan", "at", "the", "bank"))


def test_building_the_command_line_imports_no_numpy():
    """`attention-workshop --help` stays quick: the registry imports no view and no numpy."""
    code = ("import sys; from attention_workshop import cli; cli.build_parser(); "
            "print('numpy' in sys.modules)")
    assert fresh_python(code) == "False"
