"""A Jupyter notebook (.ipynb) read as a lesson, so check-lesson can check its citations.

A notebook is JSON (read through reading.read_json); a learner reads its markdown cells and
its code cells' outputs, in order.
"""

from attention_workshop.reading import read_json, refuse

TODO = "give a notebook as Jupyter saves it (.ipynb)"


def read_notebook(path):  # -> (text, place)
    """notebook_text of the .ipynb file at `path`, read through the one door for user files."""
    return notebook_text(read_json(path, "lesson", TODO), path)


def notebook_text(doc, name="notebook"):  # parsed .ipynb JSON -> (text, place)
    """What a notebook says, as a lesson: each markdown cell's text and each code cell's text
    outputs (printed lines, text/plain values), in cell order, a blank line between cells; the
    code itself is not read. `place(n)` names text line n in the notebook: "cell 4, line 2"
    (cells count from 1, top to bottom). Example: a markdown cell "See (cross-check:
    results.log line 2):" then a code cell printing "  a = 1" -> the text of a lesson whose
    citation is followed by the quoted block "  a = 1".
    """
    try:
        parts = [(n, _cell_text(cell)) for n, cell in enumerate(doc["cells"], 1)]
    except (KeyError, TypeError, AttributeError):
        raise refuse("lesson", name, "it is not a Jupyter notebook (no list of cells, each "
                     "with its type, source and outputs)", TODO) from None
    lines, where = [], []
    for n, text in parts:
        cell_lines = text.splitlines()
        lines += [*cell_lines, ""]
        where += [f"cell {n}, line {k}" for k in range(1, len(cell_lines) + 1)] + [f"cell {n}"]
    return "\n".join(lines) + "\n", lambda line: where[line - 1]


def _cell_text(cell):  # one notebook cell -> the text a lesson reader sees
    if cell["cell_type"] == "markdown":
        return _joined(cell["source"])
    texts = []
    for out in cell.get("outputs", []) if cell["cell_type"] == "code" else []:
        if out["output_type"] == "stream" and out["name"] == "stdout":
            texts.append(_joined(out["text"]))
        elif out["output_type"] in ("execute_result", "display_data"):
            texts.append(_joined(out["data"].get("text/plain", "")))
    return "\n".join(t.removesuffix("\n") for t in texts)


def _joined(value):  # nbformat stores text as one string or a list of lines
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    raise TypeError("text is neither a string nor a list of strings")
