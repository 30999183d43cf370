"""`attention-workshop quiz [MODULE]`: each module's quiz, answers computed by the code."""

from attention_workshop.quiz import keys


def HELP():  # upper case: the name every command defines
    return f"take a module's quiz ({', '.join(keys())}; all of them if MODULE is left out)"


def add_arguments(parser):
    *first, last = keys()
    parser.add_argument("module", nargs="?", metavar="MODULE",
                        help=f"which module's quiz: {', '.join(first)} or {last} (default: all, "
                             "in order, leaving out with a note those whose pretrained model "
                             "is not installed)")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--answers", metavar="FILE",
                     help="grade a file of answers, one 'QUESTION: ANSWER' per line "
                          "(see docs/quiz.md), instead of asking")
    how.add_argument("--reveal", action="store_true",
                     help="print every question with its answer and explanation")


def main(args):
    import sys

    from attention_workshop.modules import MODULES, key, name_of
    from attention_workshop.quiz import build, resolve
    from attention_workshop.quiz.answers import read_answers
    from attention_workshop.quiz.session import graded, interactive, reveal

    def skip(module, exc):  # all quizzes: one whose real model is missing is left out
        print(f"attention-workshop: note: skipping Module {key(name_of(module))}'s quiz ({exc})",
              file=sys.stderr)

    if args.module is not None:
        quizzes = build([resolve(args.module)])
    else:
        quizzes = build(list(MODULES), missing=skip)
    if args.reveal:
        reveal(quizzes)
    elif args.answers:
        counts = {module: len(questions) for module, _, questions in quizzes}
        answers = read_answers(args.answers, counts, quizzes[0][0] if args.module else None)
        graded(quizzes, answers)
    else:
        interactive(quizzes)
    return 0
