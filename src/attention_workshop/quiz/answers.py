"""The answers file: one answer per line, `QUESTION: ANSWER`.

    # Module 1 (blank lines and lines starting with # are skipped)
    1: 0.4
    3: 0.317
    6: b

With no MODULE on the command line, name the module too: `1.6: b` is Module 1,
question 6. A question left out counts as unanswered.
"""

import re
from pathlib import Path

from attention_workshop.errors import WorkshopError

_LINE = re.compile(r"(?:(\d+)\.)?(\d+)\s*[:=]\s*(.*)")


def read_answers(path, quizzes, module=None):  # -> {(module, question): text}
    """Parse the file against the quizzes being graded ({module: number of questions}).

    Example: "6: 0.41" with module "1" -> {("1", 6): "0.41"}.
    """
    where = f"answers file '{path}'"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise WorkshopError(f"{where} does not exist; check the path") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise WorkshopError(f"{where} cannot be read ({reason}); check the path") from None
    answers = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        at = f"{where}, line {n}"
        m = _LINE.fullmatch(line)
        if not m or not m.group(3).strip():
            raise WorkshopError(f"{at}: expected 'QUESTION: ANSWER', e.g. '3: 0.498' or "
                                f"'{next(iter(quizzes))}.3: b'; see docs/quiz.md")
        mod, q = m.group(1) or module, int(m.group(2))
        if mod is None:
            raise WorkshopError(f"{at}: name the module too, e.g. '{next(iter(quizzes))}.{q}: "
                                "...', or give MODULE on the command line")
        if mod not in quizzes:
            raise WorkshopError(f"{at}: module {mod} is not being graded here; "
                                f"modules: {', '.join(quizzes)}")
        if not 1 <= q <= quizzes[mod]:
            raise WorkshopError(f"{at}: Module {mod} has questions 1-{quizzes[mod]}, not {q}")
        if (mod, q) in answers:
            raise WorkshopError(f"{at}: a second answer to Module {mod} question {q}; "
                                "keep one")
        answers[(mod, q)] = m.group(3).strip()
    return answers
