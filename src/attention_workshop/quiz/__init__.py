"""Each module's quiz: questions built from the results the module computed, graded by one rule.

Every module in modules.MODULES has a quiz, in the file of the same name here
(`quiz/module1.py` for `modules/module1.py`), holding `questions(results) -> [Question]`;
`results` maps each Result class to its result, the module's own and every earlier one's.

    from attention_workshop.quiz import load
    title, questions = load("1")      # Module 1's quiz: runs Modules 0-1 into a scratch Log
"""

import importlib

from attention_workshop import modules as registry
from attention_workshop.errors import WorkshopError


def keys():  # -> ["0", "1", ...]: what `quiz MODULE` accepts, in order
    return [registry.key(name) for name in registry.MODULES]


def resolve(module):  # "1", "module1", " Module1 " -> "module1"
    """The module name behind what the learner typed, or a WorkshopError listing the choices."""
    wanted = str(module).strip().lower().removeprefix("module").strip()
    for name in registry.MODULES:
        if registry.key(name) == wanted:
            return name
    raise WorkshopError(f"there is no quiz for module '{module}'; choose one of: "
                        f"{', '.join(keys())}")


def build(names, missing=None):  # [module name] -> [(key, title, [Question])]
    """Run the modules up to the last one named into a scratch Log; build each named quiz.

    `missing(module, error)`, if given, is told when a module that needs a real model cannot
    load it; that module's quiz is then left out instead of the error being raised.
    """
    from attention_workshop.report import Log
    from attention_workshop.workshop import compute

    order = list(registry.MODULES)
    modules = registry.load(order[: max(order.index(name) for name in names) + 1])
    results = compute(Log(), real=True, modules=modules, missing=missing)
    quizzes = []
    for module in modules:
        name = registry.name_of(module)
        if name in names and module.Result in results:
            quiz = importlib.import_module(f"{__name__}.{name}")
            quizzes.append((registry.key(name), module.TITLE, quiz.questions(results)))
    return quizzes


def load(module):  # "1" -> (title, [Question])
    """One module's quiz, or a WorkshopError naming the modules that have one."""
    _, title, questions = build([resolve(module)])[0]
    return title, questions
