"""Taking a quiz three ways: at the terminal, from an answers file, or with the answers shown.

`say` prints a line and `ask` reads one (input() at a terminal); tests pass their own.
"""

import textwrap
from decimal import localcontext

from attention_workshop.quiz.question import grade, precision, read_answer

WRAP = 88


def question_lines(number, total, question):
    """The question, wrapped, then its lettered choices."""
    lines = [f"Question {number} of {total}"]
    lines += textwrap.wrap(question.prompt, WRAP, initial_indent="  ", subsequent_indent="  ")
    for letter, text in zip("abcdefgh", question.choices, strict=False):
        lines += textwrap.wrap(f"{letter}) {text}", WRAP, initial_indent="    ",
                               subsequent_indent="       ")
    return lines


def verdict_lines(question, typed):  # typed: the learner's text, or None when unanswered
    """Example: ['  right: 0.498 (you: 49.8%)', '  why: ...'], or for "0.5":
    ['  close: give three decimals; the answer is 0.498 (you: 0.5)', '  why: ...']."""
    if typed is None:
        head = f"  no answer; the answer is {question.shown_answer}"
    else:
        try:
            verdict = _verdict(question, typed)
            head = f"  {verdict}: {question.shown_answer} (you: {typed})"
            if verdict == "close":
                head = (f"  close: give {precision(question.decimals)}; the answer is "
                        f"{question.shown_answer} (you: {typed})")
        except ValueError as exc:
            head = f"  wrong: {question.shown_answer} (you: {typed}; {exc})"
    why = textwrap.wrap(f"why: {question.explanation}", WRAP, initial_indent="  ",
                        subsequent_indent="       ")
    return [head, *why]


def right(question, typed):
    try:
        return typed is not None and _verdict(question, typed) == "right"
    except ValueError:
        return False


def _verdict(question, typed):  # -> "right" | "close" | "wrong", or ValueError (the form)
    """grade() in decimal arithmetic wide enough for every digit typed: at Python's default
    28 digits, rounding "12345678901234567890123456789.000" raised InvalidOperation."""
    with localcontext() as exact:
        exact.prec = max(exact.prec, 2 * len(typed) + question.decimals + 10)
        return grade(question, read_answer(question, typed))


def score_line(label, got, total):
    return f"score: {got}/{total} right{label}"


def interactive(quizzes, say=print, ask=None):  # quizzes: [(module, title, questions)]
    """Ask every question; after each answer show whether it is right, and why."""
    ask = ask or input  # looked up per call, so a replaced input() is the one used
    say("Answer with a number to the lesson's decimals (0.498 or 49.8% when the lesson prints")
    say("0.498; 0.5 is only close) or a letter. An empty answer skips the question; Ctrl-D")
    say("stops the quiz.")
    got = total = 0
    for module, title, questions in quizzes:
        say("")
        say(f"{title}: {len(questions)} questions")
        module_got = 0
        for n, question in enumerate(questions, 1):
            say("")
            for line in question_lines(n, len(questions), question):
                say(line)
            typed = _ask_until_readable(question, say, ask)
            if typed is _STOP:
                say("")
                say(score_line(f" (stopped at Module {module}, question {n})", got, total))
                return got, total
            ok = right(question, typed)
            module_got, got, total = module_got + ok, got + ok, total + 1
            for line in verdict_lines(question, typed):
                say(line)
        say("")
        say(score_line(f" (Module {module})", module_got, len(questions)))
    return got, total


_STOP = object()


def _ask_until_readable(question, say, ask):
    while True:
        try:
            typed = ask("answer> ").strip()
        except EOFError:
            return _STOP
        if not typed:
            return None
        try:
            read_answer(question, typed)
            return typed
        except ValueError as exc:
            say(f"  please {exc}")


def graded(quizzes, answers, say=print):  # answers: {(module, question): text}
    """Grade an answers file: every question, its verdict and explanation, then the scores."""
    got = total = 0
    for module, title, questions in quizzes:
        say(title)
        module_got = 0
        for n, question in enumerate(questions, 1):
            typed = answers.get((module, n))
            ok = right(question, typed)
            module_got, got, total = module_got + ok, got + ok, total + 1
            say(f" Module {module}, question {n}:")
            for line in verdict_lines(question, typed):
                say(line)
        say(score_line(f" (Module {module})", module_got, len(questions)))
    if len(quizzes) > 1:
        say(score_line(" (all modules)", got, total))
    return got, total


def reveal(quizzes, say=print):
    """Every question with its answer and explanation."""
    for _module, title, questions in quizzes:
        say(f"{title}: {len(questions)} questions")
        for n, question in enumerate(questions, 1):
            say("")
            for line in question_lines(n, len(questions), question):
                say(line)
            for line in textwrap.wrap(f"answer: {question.shown_answer}", WRAP,
                                      initial_indent="  ", subsequent_indent="          "):
                say(line)
            for line in verdict_lines(question, None)[1:]:  # the "why:" lines
                say(line)
        say("")
