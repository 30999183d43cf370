"""`attention-workshop check-lesson FILE...`: prove every cross-check in a lesson still holds."""

import sys
from pathlib import Path

from attention_workshop.writing import DEFAULT_OUT

# check-lesson has no --out: when it cannot write the log it makes, it says what it can take
NO_LOG_TODO = "give an existing log with --log PATH, or run check-lesson where you can write"
HELP = ("check that every 'cross-check: results.log lines A-B' (or '[S7] lines A-B', counted "
        "in that section) in a lesson matches the log")


def add_arguments(parser):
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="lessons: text or markdown files, or Jupyter notebooks (.ipynb)")
    parser.add_argument("--log", metavar="PATH",
                        help=f"the log to check against (default: {DEFAULT_OUT}/results.log, "
                             "written by running the workshop first if it is missing)")


def default_log():
    """workshop-output/results.log, running the workshop (no figures) first when it is missing."""
    log = Path(DEFAULT_OUT) / "results.log"
    if not log.exists():
        from attention_workshop.workshop import run_workshop

        if sys.stderr.isatty():  # progress, for a person watching: never before an error
            print(f"{log} is missing: running the workshop first", file=sys.stderr)
        run_workshop(DEFAULT_OUT, figures=False, say=lambda text: print(text, file=sys.stderr),
                     todo=NO_LOG_TODO)
    return log


def read_lesson(path):  # -> (text, place): place(n) names a notebook's line n; None for text
    if str(path).endswith(".ipynb"):
        from attention_workshop.lesson_notebook import read_notebook

        return read_notebook(path)  # its markdown cells and text outputs
    from attention_workshop.reading import read_text

    return read_text(path, "lesson"), None


def main(args):
    from attention_workshop.lesson_check import check_text, find_citations
    from attention_workshop.reading import printable, read_text

    lessons = [(path, *read_lesson(path)) for path in args.files]
    for path, text, place in lessons:
        find_citations(text, path, place)  # an impossible citation: stop before any output
    log_path = args.log if args.log is not None else default_log()
    log = read_text(log_path, "log").splitlines()
    passed = failed = 0
    for path, text, place in lessons:
        results = check_text(text, log, path, place)
        shown = printable(path)  # a file name is the user's text: one line, no escape codes
        if not results:
            print(f"{shown}: no 'cross-check: results.log ...' citations found")
        for r in results:
            where = place(r.citation.line) if place else r.citation.line
            print(f"{shown}:{where}: results.log {r.citation.label}: "
                  f"{r.detail if r.ok else 'FAIL: ' + printable(r.detail)}")
            passed += r.ok
            failed += not r.ok
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1
