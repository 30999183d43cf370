"""The notebooks: stored as built from their sources, run top to bottom from a clean kernel of
this very Python (offline), and every stored text output equal to the re-run one, so a stored
notebook never lies. Images, widget views and execution counts are not compared.
"""

import copy
import hashlib
import importlib.util
from pathlib import Path

import nbformat
import pytest

from attention_workshop import cli, modules
from attention_workshop.quiz import load

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("notebook_build", ROOT / "notebooks" / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

SOURCES = sorted(build.SOURCES.glob("*.py"))
WIDGET = "application/vnd.jupyter.widget-view+json"
TEXT = ("text/plain", "text/html", "text/markdown", "text/latex")


def stored(source):
    return nbformat.read(ROOT / "notebooks" / f"{source.stem}.ipynb", as_version=4)


def text_outputs(nb):  # -> one list per code cell of (kind, name, text), images left out
    """Example: a cell printing "x" and showing a figure -> [("stream", "stdout", "x\\n"),
    ("display_data", "text/plain", "<Figure size 640x480 with 1 Axes>")]."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for out in cell.outputs:
            if out.output_type == "stream":
                outputs.append(("stream", out.name, out.text))
            elif out.output_type == "error":
                outputs.append(("error", out.ename, out.evalue))
            elif WIDGET not in out.data:  # a widget view's text is its live state
                outputs += [(out.output_type, mime, out.data[mime]) for mime in TEXT
                            if mime in out.data]
        cells.append(outputs)
    return cells


@pytest.fixture(scope="module", params=SOURCES, ids=lambda p: p.stem)
def executed(request):
    """(source, the notebook built from it and run, before its answers were hidden)."""
    return request.param, build.execute(build.build(request.param))


def test_every_notebook_is_built_from_a_source():
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks == [s.stem for s in SOURCES] and len(SOURCES) >= 6
    keys = [modules.key(name) for name in modules.MODULES]
    assert all((s.stem[:2].lstrip("0") or "0") in keys for s in SOURCES)  # NN_ names a module


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_stored_cells_are_the_sources(source):
    """Editing a source without running build.py (or the .ipynb by hand) fails here."""
    fresh, old = build.build(source), stored(source)
    assert [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in old.cells] == \
           [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in fresh.cells]
    assert [c.id for c in old.cells] == [c.id for c in fresh.cells]


def test_stored_text_outputs_equal_a_fresh_run(executed):
    source, nb = executed
    fresh = text_outputs(build.hide_answers(copy.deepcopy(nb)))
    old = text_outputs(stored(source))
    for n, (mine, theirs) in enumerate(zip(fresh, old, strict=True)):
        assert mine == theirs, f"{source.stem}: code cell {n} printed something else"
    assert not [o for cell in fresh for o in cell if o[0] == "stream" and o[1] == "stderr"]


def test_answers_are_hidden_until_run_and_then_every_answer_shows(executed):
    source, nb = executed
    module = source.stem[1]  # "00_embeddings" -> "0"
    hidden = [c for c in stored(source).cells if build.HIDDEN in c.metadata.get("tags", [])]
    ran = [c for c in nb.cells if build.HIDDEN in c.metadata.get("tags", [])]
    assert len(hidden) == len(ran) == 1 and hidden[0].outputs == []
    shown = "".join(o.text for o in ran[0].outputs if o.output_type == "stream")
    _, questions = load(module)
    for n, question in enumerate(questions, 1):
        assert f" Module {module}, question {n}:\n  no answer; the answer is " \
               f"{question.shown_answer}\n" in shown


def test_sliders_draw_both_figures_when_run(executed):
    """A widget's output lives in the notebook's widget state: Module 2's sliders drew the
    weights and bank's three lives there, with no traceback."""
    source, nb = executed
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    outputs = [m["state"]["outputs"] for m in state.get("state", {}).values()
               if m["model_name"] == "OutputModel"]
    expected = [[["image/png", "text/plain"]] * 2] if source.stem.startswith("02") else []
    assert [[sorted(o.get("data", {})) for o in out] for out in outputs] == expected


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_stored_widget_ids_are_renumbered(source):
    """Random widget ids would change the file at every rebuild; build.py renumbers them."""
    nb = stored(source)
    state = nb.metadata.get("widgets", {}).get(build.WIDGET_STATE, {}).get("state", {})
    expected = {hashlib.md5(f"{source.stem}:{n}".encode()).hexdigest() for n in range(len(state))}
    assert set(state) == expected
    assert bool(state) == source.stem.startswith("02")  # only Module 2 has widgets


def test_module2_runs_top_to_bottom_without_ipywidgets():
    [source] = [s for s in SOURCES if s.stem.startswith("02")]
    nb = build.build(source)
    hide = "import sys\nsys.modules['ipywidgets'] = None  # import ipywidgets now fails"
    nb.cells.insert(0, nbformat.v4.new_code_cell(hide))
    ran = build.execute(nb)
    printed = "".join(o.get("text", "") for c in ran.cells if c.cell_type == "code"
                      for o in c.outputs)
    assert "ipywidgets is not installed" in printed
    assert not any(WIDGET in o.get("data", {}) for c in ran.cells if c.cell_type == "code"
                   for o in c.outputs)


def test_notebooks_cite_the_log(tmp_path, capsys, replayed_modules):
    """Each notebook quotes its module's lines of a full run's log, and all of them pass."""
    assert cli.main(["run", "--no-figures", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    paths = [ROOT / "notebooks" / f"{s.stem}.ipynb" for s in SOURCES]
    code = cli.main(["check-lesson", *map(str, paths), "--log", str(tmp_path / "results.log")])
    out = capsys.readouterr().out.splitlines()
    assert code == 0, "\n".join(out)
    cited = {path.name: sum(f"{path.name}:cell " in line for line in out) for path in paths}
    assert all(count >= 4 for count in cited.values()), cited
    assert out[-1] == f"{sum(cited.values())} passed, 0 failed"


def _png(pixels, software, level):  # [h, w, 4] uint8 -> base64 PNG with that text chunk
    import base64
    import io

    from PIL import Image, PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("Software", software)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "png", pnginfo=info, compress_level=level)
    return base64.b64encode(buffer.getvalue()).decode()


def test_a_rebuild_keeps_stored_png_bytes_when_only_the_bytes_differ():
    """Another matplotlib writes other bytes for the same figure (its version in the
    metadata, another compression): the stored notebook's bytes stay, so git stays clean."""
    import base64
    import io

    import numpy as np
    from PIL import Image

    nb = stored(SOURCES[0])
    images = [out for cell in nb.cells for out in cell.get("outputs", [])
              if "image/png" in out.get("data", {})]
    assert images
    rebuilt = copy.deepcopy(nb)
    for out in (o for cell in rebuilt.cells for o in cell.get("outputs", [])):
        if "image/png" in out.get("data", {}):
            image = Image.open(io.BytesIO(base64.b64decode(out["data"]["image/png"])))
            out["data"]["image/png"] = _png(np.asarray(image.convert("RGBA")), "other 9.9", 1)
    assert nbformat.writes(rebuilt) != nbformat.writes(nb)
    assert nbformat.writes(build.keep_stored_images(rebuilt, nb)) == nbformat.writes(nb)


def test_a_rebuild_takes_a_png_whose_pixels_changed():
    import numpy as np

    white = np.full((4, 5, 4), 255, np.uint8)
    dot = white.copy()
    dot[2, 3] = (0, 0, 0, 255)
    old, same, changed = _png(white, "a", 9), _png(white, "b", 1), _png(dot, "a", 9)
    assert len({old, same, changed}) == 3
    assert build.same_pixels(old, same) and not build.same_pixels(old, changed)

    def notebook(png):
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell("plot()", id="x-00")
        cell.outputs = [nbformat.v4.new_output("display_data", {"image/png": png})]
        nb.cells.append(cell)
        return nb

    assert build.keep_stored_images(notebook(same), notebook(old)).cells[0].outputs[0] \
        .data["image/png"] == old
    assert build.keep_stored_images(notebook(changed), notebook(old)).cells[0].outputs[0] \
        .data["image/png"] == changed
    assert build.keep_stored_images(notebook(same), None).cells[0].outputs[0] \
        .data["image/png"] == same
