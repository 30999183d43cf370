"""check-lesson on Jupyter notebooks: hand-written .ipynb files against a hand-made log."""

import json

import pytest

from attention_workshop import cli
from attention_workshop.lesson_notebook import notebook_text

LOG = ["[S1] head", "  a = 1", "  b = 2", "  c = 3", "[S2] next", "  d = 4"]


def markdown(*lines):
    return {"cell_type": "markdown", "metadata": {}, "source": [line + "\n" for line in lines]}


def code(source, *outputs):
    return {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": source,
            "outputs": list(outputs)}


def printed(text, name="stdout"):
    return {"output_type": "stream", "name": name, "text": text}


def shown(text):
    return {"output_type": "execute_result", "execution_count": 1, "metadata": {},
            "data": {"text/plain": text, "image/png": "iVBORw0KGgo="}}


def notebook(*cells):
    return json.dumps({"cells": list(cells), "metadata": {}, "nbformat": 4,
                       "nbformat_minor": 5})


def check(tmp_path, capsys, text):
    (tmp_path / "results.log").write_text("\n".join(LOG) + "\n")
    (tmp_path / "lesson.ipynb").write_text(text)
    code_ = cli.main(["check-lesson", str(tmp_path / "lesson.ipynb"), "--log",
                      str(tmp_path / "results.log")])
    out, err = capsys.readouterr()
    return code_, out.splitlines(), err


def test_text_is_markdown_and_text_outputs_in_order_without_code():
    text, place = notebook_text(json.loads(notebook(
        markdown("# Title", "See (cross-check: results.log lines 2-3):"),
        code("print('  a = 1')", printed("  a = 1\n  b = 2\n"), printed("oops\n", "stderr")),
        code("x", shown("  c = 3")),
        markdown("The end."))))
    assert text == ("# Title\nSee (cross-check: results.log lines 2-3):\n\n  a = 1\n  b = 2\n\n"
                    "  c = 3\n\nThe end.\n\n")
    assert [place(n) for n in (1, 2, 3, 4, 5, 7, 9)] == [
        "cell 1, line 1", "cell 1, line 2", "cell 1", "cell 2, line 1", "cell 2, line 2",
        "cell 3, line 1", "cell 4, line 1"]


def test_citation_in_markdown_with_a_fenced_block_passes(tmp_path, capsys):
    code_, out, _ = check(tmp_path, capsys, notebook(
        markdown("Intro."),
        code("1 + 1", shown("2")),
        markdown("Both (cross-check: results.log lines 1-3):", "", "```text", "[S1] head",
                 "  a = 1", "  b = 2", "```")))
    assert code_ == 0
    assert out == [f"{tmp_path / 'lesson.ipynb'}:cell 3, line 1: results.log lines 1-3: ok",
                   "1 passed, 0 failed"]


def test_citation_followed_by_a_printed_block_passes(tmp_path, capsys):
    code_, out, _ = check(tmp_path, capsys, notebook(
        markdown("Printed below (cross-check: results.log lines 4-6):"),
        code("print(...)", printed("  c = 3\n[S2] next\n  d = 4\n"))))
    assert (code_, out[-1]) == (0, "1 passed, 0 failed")


def test_a_changed_number_fails_naming_the_cell(tmp_path, capsys):
    code_, out, _ = check(tmp_path, capsys, notebook(
        markdown("Intro."),
        markdown("See (cross-check: results.log lines 2-4):", "", "```", "  a = 1", "  b = 7",
                 "```")))
    assert code_ == 1
    assert out[0] == (f"{tmp_path / 'lesson.ipynb'}:cell 2, line 1: results.log lines 2-4: FAIL: "
                      "cell 2, line 5 expected '  b = 7', log line 3 has '  b = 2'")
    assert out[-1] == "0 passed, 1 failed"


def test_code_is_not_read_as_a_quoted_block(tmp_path, capsys):
    """A cell's source that happens to hold the log's text does not count: only what a learner
    reads in the rendered notebook (markdown, outputs) is checked."""
    code_, out, _ = check(tmp_path, capsys, notebook(
        markdown("See (cross-check: results.log lines 2-3):"),
        code("  a = 1\n  b = 2", printed("  a = 1\n  b = 9\n"))))
    assert code_ == 1 and "FAIL" in out[0]


@pytest.mark.parametrize(("text", "reason"), [
    ("{not json", "it is not valid JSON"),
    (json.dumps({"cells": "no"}), "it is not a Jupyter notebook"),
    (json.dumps({"cells": [{"cell_type": "markdown"}]}), "it is not a Jupyter notebook"),
    (json.dumps({"cells": [{"cell_type": "markdown", "source": [1, 2]}]}),
     "it is not a Jupyter notebook"),
    (json.dumps([1, 2]), "it is not a Jupyter notebook"),
    (notebook(markdown("Intro."), markdown("Odd (cross-check: results.log lines 9-3).")),
     "cell 2, line 1: 'results.log lines 9-3'"),
    ('{"cells": [], "cells": []}', 'key "cells" appears twice'),
])
def test_not_a_notebook_is_one_line_and_exit_2(tmp_path, capsys, text, reason):
    code_, out, err = check(tmp_path, capsys, text)
    assert (code_, out) == (2, [])
    assert len(err.splitlines()) == 1
    assert f"cannot read lesson '{tmp_path / 'lesson.ipynb'}': {reason}" in err
