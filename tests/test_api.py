"""The Python names a learner types: `from attention_workshop import explore, load_model, ...`
as the README shows them, and the short reprs a prompt echoes (tables only in notebooks)."""

import math
import subprocess
import sys

import pytest

import attention_workshop


def shares(*scores):  # softmax by hand
    e = [math.exp(s) for s in scores]
    return [v / sum(e) for v in e]


def test_the_readme_import_line_gives_the_functions():
    import attention_workshop as aw
    from attention_workshop import Options, embed, explore, simple_attention

    for f in (embed, explore, aw.load_model, simple_attention, aw.softmax, aw.wired_attention):
        assert callable(f) and type(f).__name__ == "function", f
    # bank's rows, worked by hand: raw softmax([0, 0.54, 0.99]); wired softmax of Q.K / sqrt(2)
    _, raw = simple_attention(embed("the river bank"))
    assert raw[2] == pytest.approx(shares(0, 0.54, 0.99), abs=1e-12)
    ex = explore("the river bank", options=Options(scale=False))
    assert ex.wired["weights"][2] == pytest.approx(shares(0, 1.62, 1.08), abs=1e-12)


@pytest.mark.parametrize("first", [
    "from attention_workshop.explore import positions",
    "import attention_workshop.explore.compute",
    "from attention_workshop.explore import views; views.render"])
def test_explore_stays_the_function_whatever_was_imported_first(first):
    code = (f"{first}\nfrom attention_workshop import explore\n"
            "print(type(explore).__name__, explore('bank').tokens)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[0] == "function ['bank']"


def test_every_exported_name_resolves_and_unknown_ones_fail():
    for name in attention_workshop.__all__:
        assert getattr(attention_workshop, name) is not None
    assert set(attention_workshop.__all__) <= set(dir(attention_workshop))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        attention_workshop.nope  # noqa: B018


def test_importing_the_package_imports_no_numpy():
    code = ("import sys, attention_workshop; from attention_workshop import cli; "
            "print([m for m in ('numpy', 'matplotlib') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_exploration_prints_its_sizes_and_a_few_numbers():
    from attention_workshop import explore

    text = repr(explore("the river bank"))
    lines = text.splitlines()
    assert lines[0] == ("Exploration('the river bank': 3 words x 4 axes "
                        "(water, money, place, filler), d_k = 2)")
    raw = ", ".join(f"{v:.3f}" for v in shares(0, 0.54, 0.99))  # 0.185, 0.317, 0.498
    wired = ", ".join(f"{v:.3f}" for v in shares(0, 1.62 / 2**0.5, 1.08 / 2**0.5))
    assert lines[1] == f"  raw head:   weights [3, 3]; bank's row [{raw}]"
    assert lines[2] == f"  wired head: weights [3, 3]; bank's row [{wired}]"
    assert "print(ex.text())" in lines[3] and len(lines) == 4


def test_a_long_sentence_still_prints_in_four_short_lines():
    from attention_workshop import Options, explore

    sentence = " ".join(["the river bank", "a loan at the bank", "fish in the water"] * 4)
    ex = explore(sentence, options=Options(causal=True))
    text = repr(ex)
    assert len(text.splitlines()) == 4 and max(map(len, text.splitlines())) <= 120
    assert "[48, 48]" in text and "..." in text and "; causal)" in text
    assert str(ex) == text and "0x" not in text  # no memory address, as the notebooks need
    assert ex.text().startswith(f'explore "{sentence}" (48 words)')


def test_a_table_prints_its_size():
    from attention_workshop.explore.tables import builtin_table

    assert repr(builtin_table()) == ("Table(built-in: 20 words x 4 axes "
                                     "(water, money, place, filler))")
