"""`attention-workshop quiz [MODULE]`: each module's quiz, answers computed by the code."""

HELP = "take a module's quiz (0, 1, 2; all of them if MODULE is left out)"


def add_arguments(parser):
    parser.add_argument("module", nargs="?", metavar="MODULE",
                        help="which module's quiz: 0, 1 or 2 (default: all, in order)")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--answers", metavar="FILE",
                     help="grade a file of answers, one 'QUESTION: ANSWER' per line "
                          "(see docs/quiz.md), instead of asking")
    how.add_argument("--reveal", action="store_true",
                     help="print every question with its answer and explanation")


def main(args):
    from attention_workshop.quiz import QUIZZES, load
    from attention_workshop.quiz.answers import read_answers
    from attention_workshop.quiz.session import graded, interactive, reveal

    modules = [args.module] if args.module is not None else list(QUIZZES)
    quizzes = []
    for module in modules:
        title, questions = load(module)
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
