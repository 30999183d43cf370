"""axe-core (WCAG 2.1 A and AA rules, the npm package run inside headless Chromium) on
explorer.html and the head view, at a desktop's 1280 x 800 and a phone's 390 x 844, as they
open and after a learner has used them: no serious or critical violation. Under CI=true a
missing axe-core or browser fails the test (tests/browser.py)."""

import numpy as np
import pytest
from browser import axe_violations, cells, open_page

from attention_workshop.figures.head_view import head_view_html

SIZES = [(1280, 800), (390, 844)]


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_explorer_has_no_serious_violation(browser, page_file, width, height):
    page = (opened := open_page(browser, page_file, width, height, bypass_csp=True)).page
    assert axe_violations(page) == []
    page.fill("#sentence-text", "the river bank by the money office at the lake of cash")
    page.press("#sentence-text", "Enter")  # wide tables (the scroll notes) and every heatmap
    page.hover("#m2-weights tbody tr:nth-child(3) td:nth-child(3)")
    page.fill('input[data-cell="W_Q:2:0"]', "")  # a refused box: its message shown
    page.click("details.wv summary")
    assert axe_violations(page) == []
    page.click("#clear")  # the empty page
    assert axe_violations(page) == []
    assert not opened.errors


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_head_view_has_no_serious_violation(browser, tmp_path, width, height):
    tokens = ["[CLS]", "we", "sat", "on", "the", "bank", "of", "the", "river", "[SEP]"]
    e = np.exp(np.random.default_rng(0).normal(size=(2, 12, len(tokens), len(tokens))) * 2)
    path = tmp_path / "view.html"
    path.write_text(head_view_html("minilm: we sat on the bank", tokens,
                                   e / e.sum(axis=-1, keepdims=True)))
    page = (opened := open_page(browser, path, width, height, bypass_csp=True)).page
    assert axe_violations(page) == []
    page.focus('#view text[data-token="5"]')  # a token chosen: its numbers shown
    page.click("#all")
    assert axe_violations(page) == []
    assert not opened.errors


def test_every_heatmap_keeps_its_numbers_as_text(browser, tmp_path):
    """Module 3's heatmap of a 14-token sentence: every cell prints its weight (2 decimals in a
    smaller font past 10 tokens), not colour alone."""
    pytest.importorskip("tokenizers")
    import contextlib
    import io

    from attention_workshop import cli
    from attention_workshop.errors import WorkshopError
    from attention_workshop.real import load_model

    sentence = "the money bank by the river of the lake at the shore"
    try:
        result = load_model("minilm", dtype=np.float64).run(sentence)
    except WorkshopError:
        pytest.skip("MiniLM's weights are not installed")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(["explorer", sentence, "--out", str(tmp_path)]) == 0
    page = (opened := open_page(browser, tmp_path / "explorer.html")).page
    assert len(result.tokens) == 14
    layer, head = (int(page.input_value(f"#real-{k}")) for k in ("layer", "head"))
    printed = cells(page, "#real-0-matrix")
    assert printed == [[f"{v:.2f}" for v in row] for row in result.attentions[layer, head]]
    assert not opened.errors
