"""The pages' "save as SVG / PNG" (the current view, from the page itself: its text stays text)
and the one function that builds explorer.html for `run`, `explorer` and `real --out`."""

import contextlib
import io
import re

import numpy as np
import pytest
from browser import open_page, shown
from explore_cli import explore_json

from attention_workshop import cli
from attention_workshop.embeddings import SENT_MONEY
from attention_workshop.figures import explorer, parallel
from attention_workshop.figures.head_view import head_view_html


def saved(page, button):  # click a save button -> the file's name and bytes
    with page.expect_download() as download:
        page.click(button)
    path = download.value.path()
    return download.value.suggested_filename, path.read_bytes()


def png_size(data):  # (width, height) from a PNG's header
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_the_explorer_saves_the_plane_and_the_curve_as_they_are_now(browser, page_file):
    page = (opened := open_page(browser, page_file)).page
    page.click('button.preset:has-text("the money bank")')
    name, data = saved(page, ".plane-box .save-svg")
    svg = data.decode("utf-8")
    assert name == "plane.svg" and svg.startswith("<svg")
    assert 'xmlns="http://www.w3.org/2000/svg"' in svg
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert "bank's lookup (0.30, 0.30)" in texts  # text stays text, of the sentence shown now
    assert any(t.startswith('"the money bank" (0.158, 0.409)') for t in texts)  # log line 47
    name, data = saved(page, ".plane-box .save-png")
    assert name == "plane.png" and png_size(data) == (2 * 428, 2 * 428)  # the viewBox, twice
    name, data = saved(page, "#m2-weights ~ .save .save-svg")  # a heatmap, as drawn now
    svg = data.decode("utf-8")
    ref = explore_json(SENT_MONEY)["wired"]["weights"]
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert name == "m2_weights.svg" and texts[0] == "weights = softmax of each row"
    assert [shown(v) for row in ref for v in row] == [t for t in texts if re.match(r"0\.\d{3}$", t)]
    assert svg.count("<rect") == 1 + 9  # the paper, then one per cell
    name, data = saved(page, "#scaling .save-svg")
    assert name == "s5_curve.svg" and "avg top weight" in data.decode("utf-8")
    assert not opened.errors


def test_the_head_view_saves_its_current_view(browser, tmp_path):
    tokens = ["[CLS]", "the", "river", "bank", "[SEP]"]
    e = np.exp(np.random.default_rng(1).normal(size=(1, 2, 5, 5)))
    w = (e / e.sum(axis=-1, keepdims=True)).round(3)
    path = tmp_path / "view.html"
    path.write_text(head_view_html("t", tokens, w, start_head=1))
    page = (opened := open_page(browser, path)).page
    page.focus('#view text[data-token="3"]')  # bank chosen: its lines and numbers
    name, data = saved(page, ".save-svg")
    svg = data.decode("utf-8")
    assert name == "head_view.svg"
    assert svg.count("<line") == int((w[0, 1, 3] >= 0.01).sum())  # bank's lines only
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert texts == tokens + tokens + [shown(v) for v in w[0, 1, 3]]
    name, data = saved(page, ".save-png")
    assert name == "head_view.png" and png_size(data)[1] == 2 * (5 * 28 + 20)
    assert not opened.errors


def test_one_function_builds_the_page_for_run_explorer_and_real(tmp_path, monkeypatch):
    calls = []
    build = explorer.write_page

    def recorded(folder, scaling, real=None, *args, **kwargs):
        calls.append(None if real is None else real["runs"][0]["sentence"])
        return build(folder, scaling, real, *args, **kwargs)

    monkeypatch.setattr(explorer, "write_page", recorded)
    # one process draws every figure: a forked child's calls would not be recorded here
    monkeypatch.setattr(parallel, "can_fork", lambda: False)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(["run", "--no-real", "--out", str(tmp_path / "run")]) == 0
        assert cli.main(["explorer", "the money bank", "--no-real", "--out",
                         str(tmp_path / "explorer")]) == 0
    assert calls == [None, None]
    pytest.importorskip("tokenizers")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(["real", "The river bank.", "--out", str(tmp_path / "real")]) == 0
    assert calls == [None, None, "The river bank."]
    page = (tmp_path / "real" / "explorer.html").read_text()
    assert '"start":{"sentence":"the river bank"' in page  # punctuation read as explore reads it
