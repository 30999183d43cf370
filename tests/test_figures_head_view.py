"""The interactive head view: one offline HTML file whose embedded weights are the model's."""

import json
import re
import subprocess

import numpy as np
import pytest
from browser import require_browser

from attention_workshop.figures.head_view import head_view_html


def embedded(page):
    return json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>',
                                page, re.S).group(1))


def weights(L=2, H=3, T=4, seed=0):
    rng = np.random.default_rng(seed)
    e = np.exp(rng.normal(size=(L, H, T, T)))
    return e / e.sum(axis=-1, keepdims=True)


def test_embeds_every_weight_rounded_to_3_decimals():
    w = weights()
    data = embedded(head_view_html("t", ["a", "b", "c", "d"], w, start_layer=1))
    assert (data["layers"], data["heads"], data["start_layer"]) == (2, 3, 1)
    assert data["tokens"] == ["a", "b", "c", "d"]
    np.testing.assert_allclose(np.array(data["attentions"]), w, atol=5e-4 + 1e-12)


def test_self_contained_and_tokens_cannot_break_out():
    page = head_view_html("<b>&", ["</script><script>alert(1)</script>", "x"], weights(T=2))
    assert "<script src" not in page and "<link" not in page  # nothing fetched: works offline
    assert page.count("</script>") == 2  # the data's own closing tag was escaped
    assert embedded(page)["tokens"][0] == "</script><script>alert(1)</script>"
    assert "<title>&lt;b&gt;&amp;</title>" in page


def test_a_browser_draws_one_line_per_visible_weight(tmp_path):
    chromium = require_browser()  # skipped without chromium, but a failure under CI=true
    w = weights(L=2, H=3, T=4)
    w[0, 1, 2] = [0.005, 0.005, 0.49, 0.5]  # two weights under 0.01 are not drawn
    page = tmp_path / "view.html"
    page.write_text(head_view_html("t", ["a", "b", "c", "d"], w, start_layer=0))
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=60, check=True).stdout
    head = sharpest_head(w[0].round(3))  # it opens on one head: the sharpest of the layer
    assert embedded(page.read_text())["start_head"] == head
    assert dom.count("<line ") == int((w[0, head].round(3) >= 0.01).sum())


def sharpest_head(layer):  # [H, T, T] -> by loops: the largest w[i][j] - mean_k w[k][j], i != j
    best, found = -2.0, 0
    for h, head in enumerate(layer):
        T = len(head)
        for j in range(T):
            mean = sum(head[k][j] for k in range(T)) / T
            for i in range(T):
                if i != j and head[i][j] - mean > best:
                    best, found = head[i][j] - mean, h
    return found


def test_it_opens_on_the_head_it_is_given_or_the_most_specific():
    w = weights(L=2, H=4, T=3)
    w[1, 1] = w[1, 3] = 1 / 3  # even: 0 everywhere
    w[1, 0] = [[0.05, 0.9, 0.05], [0.05, 0.9, 0.05], [0.05, 0.9, 0.05]]  # all look at one: 0
    w[1, 2] = [[0.1, 0.1, 0.8], [0.3, 0.4, 0.3], [0.2, 0.2, 0.6]]  # 0.8 - 0.567: 0.233
    assert sharpest_head(w[1]) == 2
    assert embedded(head_view_html("t", list("abc"), w, 1))["start_head"] == 2
    assert embedded(head_view_html("t", list("abc"), w, 1, start_head=3))["start_head"] == 3


def test_real_out_writes_the_view_of_the_model_it_ran(tmp_path, capsys):
    pytest.importorskip("tokenizers")
    from attention_workshop import cli
    from attention_workshop.real import load_model

    assert cli.main(["real", "the river bank", "--out", str(tmp_path)]) == 0
    assert f"wrote {tmp_path / 'head_view.html'}" in capsys.readouterr().err
    data = embedded((tmp_path / "head_view.html").read_text())
    result = load_model("minilm").run("the river bank")
    assert data["tokens"] == result.tokens
    np.testing.assert_allclose(np.array(data["attentions"]), result.attentions, atol=5e-4 + 1e-6)
