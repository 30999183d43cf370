"""Each module's quiz: questions whose answers the code computes, graded by one rule.

    from attention_workshop.quiz import load
    title, questions = load("1")      # Module 1's quiz
"""

import importlib

from attention_workshop.errors import WorkshopError

# module number -> file under attention_workshop.quiz
QUIZZES = {"0": "module0", "1": "module1", "2": "module2", "3": "module3"}  # 3 runs MiniLM


def load(module):  # "1" -> (title, [Question])
    """One module's quiz, or a WorkshopError naming the modules that have one."""
    key = str(module).lower().removeprefix("module").strip()
    if key not in QUIZZES:
        raise WorkshopError(f"there is no quiz for module '{module}'; choose one of: "
                            f"{', '.join(QUIZZES)}")
    quiz = importlib.import_module(f"attention_workshop.quiz.{QUIZZES[key]}")
    return quiz.TITLE, quiz.questions()
