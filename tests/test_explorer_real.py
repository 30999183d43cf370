"""explorer.html's Module 3 in headless Chromium (the real model's numbers as the engine
computed them), hostile words that must stay text, and the screenshots for docs/.
"""

import contextlib
import io

import numpy as np
import pytest
from browser import cells, doc_screenshots, open_page, shown, shown_matrix

from attention_workshop import cli
from attention_workshop.embeddings import SENT_MONEY, SENT_RIVER


@pytest.fixture(scope="module")
def minilm():  # sentence -> Module 3's float64 run
    pytest.importorskip("tokenizers")
    from attention_workshop.errors import WorkshopError
    from attention_workshop.real import load_model

    try:
        model = load_model("minilm", dtype=np.float64)
    except WorkshopError:
        pytest.skip("MiniLM's weights are not installed")
    return model.run


def test_module3_heads_layers_and_two_sentences(browser, page_file, minilm):
    from attention_workshop.real.analysis.head_search import heads_toward

    opened = open_page(browser, page_file)
    page = opened.page
    river, money = minilm(SENT_RIVER), minilm(SENT_MONEY)
    # Pre-selected: the head where bank looks hardest at river ([S7]'s first), and its list.
    top = heads_toward(river.attentions, 3, 2)
    buttons = page.eval_on_selector_all("#real-0-heads button", "bs => bs.map(b => b.textContent)")
    assert buttons == [f"layer {lay}, head {h}: {shown(w)}" for lay, h, w in top]
    layer, head = top[0][:2]
    assert page.input_value("#real-layer") == str(layer) == str(top[0][0])
    assert cells(page, "#real-0-matrix") == shown_matrix(river.attentions[layer, head])
    assert cells(page, "#real-1-matrix") == shown_matrix(money.attentions[layer, head])
    theirs = heads_toward(money.attentions, 3, 2)
    buttons = page.eval_on_selector_all("#real-1-heads button", "bs => bs.map(b => b.textContent)")
    assert buttons == [f"layer {lay}, head {h}: {shown(w)}" for lay, h, w in theirs]
    page.click("#real-1-heads button >> nth=1")  # the money sentence's second head, both sides
    layer, head = theirs[1][:2]
    assert (page.input_value("#real-layer"), page.input_value("#real-head")) == (str(layer),
                                                                                  str(head))
    assert cells(page, "#real-0-matrix") == shown_matrix(river.attentions[layer, head])
    page.select_option("#real-layer", "4")
    page.select_option("#real-head", "7")
    assert cells(page, "#real-1-matrix") == shown_matrix(money.attentions[4, 7])
    page.focus("#real-0-matrix")  # keyboard: from [CLS] -> [CLS] down to bank, right to river
    for key in ("ArrowDown",) * 3 + ("ArrowRight",) * 2:
        page.keyboard.press(key)
    assert (page.text_content("#real-0 .readout") ==
            f"layer 4, head 7: bank \u2192 river = {shown(river.attentions[4, 7, 3, 2])}")
    page.hover("#real-1-matrix tbody tr:nth-child(2) td:nth-child(5)")  # the -> bank
    assert (page.text_content("#real-1 .readout") ==
            f"layer 4, head 7: the \u2192 bank = {shown(money.attentions[4, 7, 1, 3])}")
    page.select_option("#real-1-sentence", "0")  # the same sentence on both sides
    assert cells(page, "#real-1-matrix") == cells(page, "#real-0-matrix")
    assert not opened.errors


def test_a_causal_model_from_real_out(browser, tmp_path):
    """`real --model FOLDER --out DIR` with a tiny random GPT-2 (2 layers x 4 heads, causal):
    the page offers its layers and heads, and no token looks ahead."""
    pytest.importorskip("transformers")
    from test_real_gpt2 import build_gpt2

    folder = tmp_path / "gpt2"
    build_gpt2(folder, n_layer=2, n_head=4)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(["real", "a boat by the bank", "--model", str(folder), "--out",
                         str(tmp_path / "out")]) == 0
    opened = open_page(browser, tmp_path / "out" / "explorer.html")
    page = opened.page
    assert page.eval_on_selector_all("#real-layer option", "os => os.length") == 2
    assert page.eval_on_selector_all("#real-head option", "os => os.length") == 4
    page.select_option("#real-layer", "1")
    page.select_option("#real-head", "3")
    rows = cells(page, "#real-0-matrix")
    assert len(rows) == len(rows[0]) > 3 and rows[-1][-1] != "0.000"
    assert all(text == "0.000" for i, row in enumerate(rows) for text in row[i + 1:])
    assert not opened.errors


HOSTILE = ["</script><svg/onload=window.pwned=1>", "<img/src=x/onerror=window.pwned=2>",
           "<!--<script>", "__DATA__", "&lt;b&gt;"]


def test_hostile_words_are_shown_as_text_and_run_nothing(browser, tmp_path):
    from attention_workshop.figures.explorer import explorer_data, write_explorer
    from attention_workshop.modules.module2 import scaling_experiment

    data = explorer_data(scaling_experiment())
    data["title"] = HOSTILE[0]
    words = [w.lower() for w in HOSTILE]  # table words are lower case, as the engine's
    data["table"]["words"] += [[w, [0.1, 0.2, 0.3, 0.4]] for w in words]
    T = len(HOSTILE)
    data["real"] = {"model": HOSTILE[1], "layers": 1, "heads": 1, "d_head": 1,
                    "source": HOSTILE[2],
                    "runs": [{"sentence": " ".join(HOSTILE), "tokens": HOSTILE,
                              "special": [False] * T,
                              "attentions": (np.ones((1, 1, T, T)) / T).tolist()}]}
    path = write_explorer(tmp_path, data)
    opened = open_page(browser, path)
    page = opened.page
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.fill("#sentence-text", " ".join(words))  # a sentence of hostile words, on the page
    assert page.evaluate("typeof window.pwned") == "undefined" and not dialogs
    assert page.title() == HOSTILE[0]
    labels = page.eval_on_selector_all("#m1-X tbody th", "hs => hs.map(h => h.textContent)")
    assert labels == words
    assert page.eval_on_selector_all("#real-0-matrix tbody th",
                                     "hs => hs.map(h => h.textContent)") == HOSTILE
    assert page.locator("svg, img").count() == page.locator("svg").count() == 2  # ours only
    assert not opened.errors


def test_screenshots_render_without_errors_at_desktop_and_phone_width(browser, page_file,
                                                                      tmp_path):
    """Also the README's pictures: UPDATE_DOCS=1 pytest -k screenshots writes them to docs/."""
    panels = {"explorer.png": "#module2", "explorer-phone-wiring.png": "#edit-W_Q"}  # W_Q, and
    #                                                                     the strip below it

    def prepare(page, name):
        if name in panels:
            page.eval_on_selector(panels[name], "e => e.scrollIntoView()")
            page.mouse.move(0, 0)

    doc_screenshots(browser, page_file, {"explorer.png": (1280, 800),
                                         "explorer-phone.png": (390, 844),
                                         "explorer-phone-wiring.png": (390, 844)},
                    tmp_path, prepare)
