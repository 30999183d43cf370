"""`attention-workshop quiz [MODULE]`: each module's quiz, answers computed by the code."""

HELP = "take a module's quiz (0, 1, 2, 3; all of them if MODULE is left out)"


def add_arguments(parser):
    parser.add_argument("module", nargs="?", metavar="MODULE",
                        help="which module's quiz: 0, 1, 2 or 3 (default: all, in order; 3 needs "
                             "MiniLM's weights)")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--answers", metavar="FILE",
                     help="grade a file of answers, one 'QUESTION: ANSWER' per line "
                          "(see docs/quiz.md), instead of asking")
    how.add_argument("--reveal", action="store_true",
                     help="print every question with its answer and explanation")


def main(args):
    import sys

    from attention_workshop.errors import WorkshopError
    from attention_workshop.quiz import QUIZZES, load
    from attention_workshop.quiz.answers import read_answers
    from attention_workshop.quiz.session import graded, interactive, reveal

    quizzes = []
    for module in [args.module] if args.module is not None else list(QUIZZES):
        try:
            title, questions = load(module)
        except WorkshopError as exc:
            if args.module is not None or module != "3":
                raise
            # All quizzes: Module 3 needs the real model's weights; the rest do not.
            print(f"attention-workshop: note: skipping Module 3's quiz ({exc})", file=sys.stderr)
            continue
        quizzes.append((str(module).lower().removeprefix("module").strip(), title, questions))
    if args.reveal:
        reveal(quizzes)
    elif args.answers:
        counts = {module: len(questions) for module, _, questions in quizzes}
        answers = read_answers(args.answers, counts, quizzes[0][0] if args.module else None)
        graded(quizzes, answers)
    else:
        interactive(quizzes)
    return 0
