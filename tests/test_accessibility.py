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


# Machado, Oliveira & Fernandes (2009), severity 1: what a dichromat sees, on linear RGB.
DICHROMAT = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                   [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                     [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                   [0.004733, 0.691367, 0.303900]],
}


def lab(linear):  # linear sRGB [3] -> CIE L*a*b* (D65)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ np.clip(linear, 0, 1)
    f = [v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116
         for v in xyz / np.array([0.9505, 1.0, 1.089])]
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def linear(hex_colour):  # "#c0392b" -> linear sRGB [3]
    c = np.array([int(hex_colour[k:k + 2], 16) for k in (1, 3, 5)]) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def test_the_explorers_colours_stay_apart_for_colour_blind_eyes():
    """The three lives' bars (lookup gray, simple red, wired blue) and [S5]'s two curves (red,
    blue) as the page's own files set them, seen through each common dichromacy: every pair at
    least 20 apart in CIE L*a*b* (ΔE 2.3 is a just-noticeable difference)."""
    import re

    from attention_workshop.figures.explorer.page import asset

    lives = re.search(r'\[("#[0-9a-f]{6}", ){2}"#[0-9a-f]{6}"\]\[g\]', asset("module2.js"))
    colours = re.findall(r"#[0-9a-f]{6}", lives.group(0))
    root = dict(re.findall(r"--(red|blue): (#[0-9a-f]{6})", asset("explorer.css")))
    pairs = [(a, b) for k, a in enumerate(colours) for b in colours[k + 1:]]
    pairs.append((root["red"], root["blue"]))
    for name, matrix in DICHROMAT.items():
        for a, b in pairs:
            seen = [lab(np.array(matrix) @ linear(c)) for c in (a, b)]
            assert np.linalg.norm(seen[0] - seen[1]) > 20, (name, a, b)
