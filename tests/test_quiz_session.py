"""The grading rule, the interactive loop, and every malformed quiz input."""

import math

import pytest

from attention_workshop import cli
from attention_workshop.quiz.question import Question, grade, is_right, read_answer

TRUE = math.exp(0.99) / (1 + math.exp(0.54) + math.exp(0.99))  # 0.49771..., printed 0.498
SHARE = Question("bank's share of itself?", TRUE, "softmax")


@pytest.mark.parametrize("typed, verdict", [
    ("0.498", "right"), (".498", "right"), ("0.4977", "right"), ("0.49771", "right"),
    ("49.8%", "right"), ("0.497", "right"), ("0.499", "right"), ("0.4990", "right"),
    ("+0.498", "right"),
    ("0.5", "close"), ("+0.5", "close"), ("50%", "close"), ("0.50", "close"),
    ("0.49", "wrong"), ("0.4", "wrong"), ("0.496", "wrong"), ("0.4960", "wrong"),
    ("1", "wrong"), ("0", "wrong"), ("0.6", "wrong"), ("49%", "wrong"), ("0.51", "wrong"),
])
def test_numbers_at_the_lessons_precision_or_finer(typed, verdict):
    """True 0.49771, printed 0.498: three decimals or more (one unit of drift allowed) are
    right; a coarser number that rounds the true value correctly is close, not right."""
    assert grade(SHARE, read_answer(SHARE, typed)) == verdict


def test_trailing_zeros_and_whole_numbers():
    average = Question("p", 0.4, "w", decimals=2)  # printed 0.40: 0.4 is that very number
    assert is_right(average, "0.4") and is_right(average, "40%")
    heads = Question("p", 72.0, "w", decimals=0)
    assert is_right(heads, "72") and is_right(heads, "72.0")
    assert grade(heads, "73") == "wrong" and grade(heads, "72.4") == "wrong"


def test_the_hint_never_gives_the_answer_away():
    assert SHARE.hint == "a number to three decimals, e.g. 0.250 or 25.0%"
    with pytest.raises(ValueError) as caught:
        read_answer(SHARE, "half")
    assert "0.498" not in str(caught.value) and "0.5" not in str(caught.value)


def test_close_answers_are_told_the_precision(tmp_path, capsys):
    path = tmp_path / "a.txt"
    path.write_text("2: 0.5\n4: 0.2\n")  # Module 0's 0.498 and 0.185, one decimal each
    assert cli.main(["quiz", "0", "--answers", str(path)]) == 0
    out = capsys.readouterr().out
    assert "  close: give three decimals; the answer is 0.498 (you: 0.5)" in out
    assert "  close: give three decimals; the answer is 0.185 (you: 0.2)" in out
    assert out.splitlines()[-1] == "score: 0/6 right (Module 0)"


@pytest.mark.parametrize("typed", ["b", "B", "(b)", "b)", " b. "])
def test_letters(typed):
    q = Question("p", "b", "w", ("x", "y", "z"))
    assert is_right(q, read_answer(q, typed))


@pytest.mark.parametrize("typed", ["d", "bb", "0.5", "yes"])
def test_unreadable_letters(typed):
    with pytest.raises(ValueError, match="a letter, a-c"):
        read_answer(Question("p", "b", "w", ("x", "y", "z")), typed)


@pytest.mark.parametrize("typed, verdict", [
    ("46,080", "right"), ("46080", "right"), ("+46,080", "right"), ("46,080.0", "right"),
    ("46,081", "wrong"), ("4,608", "wrong")])
def test_a_whole_number_grouped_by_commas_as_the_log_prints_it(typed, verdict):
    """Module 4's bytes a token: 2 x 30 x 3 x 64 x 4 = 46080, which the log writes 46,080."""
    per_token = Question("bytes a token?", float(2 * 30 * 3 * 64 * 4), "w", decimals=0)
    assert grade(per_token, read_answer(per_token, typed)) == verdict


@pytest.mark.parametrize("typed", ["abc", "0.5.1", "1e-1", "", "0,5", "46,08", "4,6080",
                                   ",080", "46,,080", "046,080"])
def test_unreadable_numbers(typed):
    with pytest.raises(ValueError, match="a number"):
        read_answer(SHARE, typed)


def feed(monkeypatch, replies):
    """input() that answers from `replies`, then raises EOFError like Ctrl-D."""
    replies = iter(replies)

    def fake_input(prompt=""):
        try:
            return next(replies)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", fake_input)


def test_interactive_asks_again_then_grades(monkeypatch, capsys):
    # Module 0: q1 0.540 typed as 0.54 (the same number), q2 as a word (asked again), then
    # right; q5's 0.899 typed as 0.9 is close, not right.
    feed(monkeypatch, ["0.54", "half", "0.498", "z", "b", "", "0.9", "b"])
    assert cli.main(["quiz", "0"]) == 0
    out = capsys.readouterr().out
    assert "please answer with a number" in out and "please answer with a letter, a-d" in out
    assert "no answer; the answer is 0.185" in out
    assert "close: give three decimals; the answer is 0.899 (you: 0.9)" in out
    assert out.count("  why: ") == 6
    assert out.splitlines()[-1] == "score: 4/6 right (Module 0)"


def test_interactive_ctrl_d_stops_with_the_score(monkeypatch, capsys):
    feed(monkeypatch, ["0.4", "c"])
    assert cli.main(["quiz", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "score: 1/2 right (stopped at Module 1, question 3)"


def bad_file(tmp_path, text):
    path = tmp_path / "answers.txt"
    path.write_text(text)
    return str(path)


CASES = {
    "no such module": (lambda p: ["quiz", "7"], "no quiz for module '7'; choose one of: 0, 1, 2"),
    "missing file": (lambda p: ["quiz", "1", "--answers", str(p / "none.txt")], "does not exist"),
    "folder": (lambda p: ["quiz", "1", "--answers", str(p)], "is a folder, not a regular file"),
    "no colon": (lambda p: ["quiz", "1", "--answers", bad_file(p, "1 0.4\n")],
                 "line 1: expected 'QUESTION: ANSWER'"),
    "empty answer": (lambda p: ["quiz", "1", "--answers", bad_file(p, "# x\n2:\n")],
                     "line 2: expected"),
    "question out of range": (lambda p: ["quiz", "1", "--answers", bad_file(p, "9: 1\n")],
                              "Module 1 has questions 1-7, not 9"),
    "two answers": (lambda p: ["quiz", "1", "--answers", bad_file(p, "1: 0.4\n1: 0.5\n")],
                    "line 2: a second answer"),
    "other module": (lambda p: ["quiz", "1", "--answers", bad_file(p, "2.1: 1.8\n")],
                     "module 2 is not being graded"),
    "module not named": (lambda p: ["quiz", "--answers", bad_file(p, "6: 0.409\n")],
                         "name the module too"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_quiz_input_is_one_line_and_exit_2(case, tmp_path, capsys, replayed_modules):
    argv, needle = CASES[case]
    assert cli.main(argv(tmp_path)) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("attention-workshop: error: ")
    assert needle in err, err


def test_all_quizzes_skip_module3_without_weights(monkeypatch, capsys):
    from attention_workshop.errors import WorkshopError
    from attention_workshop.modules import module3

    def no_weights(log, earlier):
        raise WorkshopError("MiniLM's weights are not installed")

    monkeypatch.setattr(module3, "run", no_weights)
    assert cli.main(["quiz", "--reveal"]) == 0
    out, err = capsys.readouterr()
    assert "Module 2:" in out and "Module 3:" not in out
    assert err == ("attention-workshop: note: skipping Module 3's quiz "
                   "(MiniLM's weights are not installed)\n")
    assert cli.main(["quiz", "3"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
