"""The answers file: one answer per line, `QUESTION: ANSWER`.

    # Module 1 (blank lines and lines starting with # are skipped)
    1: 0.4
    3: 0.317
    6: b

With no MODULE on the command line, name the module too: `1.6: b` is Module 1,
question 6. A question left out counts as unanswered.
"""

import re

from attention_workshop.reading import printable, read_text, refuse

_LINE = re.compile(r"(?:(\d+)\.)?(\d+)\s*[:=]\s*(.*)")
MAX_ANSWER = 100  # characters: an answer is a number or a letter; a 5,000-digit one is a mistake
WHAT, HELP = "answers file", "see docs/quiz.md"


def read_answers(path, quizzes, module=None):  # -> {(module, question): text}
    """Parse the file against the quizzes being graded ({module: number of questions}).

    Example: "6: 0.41" with module "1" -> {("1", 6): "0.41"}.
    """
    text = read_text(path, WHAT)
    answers = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.fullmatch(line)
        if not m or not m.group(3).strip():
            raise refuse(WHAT, path, f"line {n}: expected 'QUESTION: ANSWER'", f"e.g. '3: 0.498' "
                         f"or '{next(iter(quizzes))}.3: b'; {HELP}")
        mod, q, answer = m.group(1) or module, m.group(2), m.group(3).strip()
        if mod is None:
            raise refuse(WHAT, path, f"line {n}: name the module too", f"e.g. "
                         f"'{next(iter(quizzes))}.{printable(q, 10)}: ...', or give MODULE on the "
                         "command line")
        if mod not in quizzes:
            raise refuse(WHAT, path, f"line {n}: module {printable(mod, 10)} is not being graded "
                         "here", f"modules: {', '.join(quizzes)}")
        if len(q) > 3 or not 1 <= int(q) <= quizzes[mod]:  # int() of 4,300 digits would raise
            raise refuse(WHAT, path, f"line {n}: Module {mod} has questions 1-{quizzes[mod]}, "
                         f"not {printable(q, 10)}", "number the answers as the quiz does")
        if len(answer) > MAX_ANSWER:
            raise refuse(WHAT, path, f"line {n}: the answer is {len(answer)} characters long",
                         "answer with a number or a letter")
        if (mod, int(q)) in answers:
            raise refuse(WHAT, path, f"line {n}: a second answer to Module {mod} question {q}",
                         "keep one")
        answers[(mod, int(q))] = answer
    return answers
