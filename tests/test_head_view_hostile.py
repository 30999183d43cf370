"""The head view with hostile tokens, titles and model folders, opened in headless Chromium:
no script of theirs runs, nothing blanks the page, every token shows as the text it is.

A token, a sentence, a folder name or a tokenizer's special token can hold anything:
"</script><svg onload=...>", "<!--<script>", a placeholder's name ("__DATA__"), nothing at
all, control characters, 300 characters. The page must draw one line per visible weight and
both columns of tokens, exactly as given.
"""

import json
import re

import numpy as np
import pytest
from browser import open_page

from attention_workshop import cli
from attention_workshop.figures.explorer.page import fill, json_for_script
from attention_workshop.figures.head_view import head_view_html

PWN = "document.title='pwned'"
HOSTILE = [
    "[CLS]", f"</script><svg onload=\"{PWN}\">", "<!--<script>", "__DATA__", "__TITLE__",
    f"<img src=x onerror=\"{PWN}\">", "", "\u202e\u0000\x1b[31m", "bank" * 75, "&lt;&amp;",
    "]]></script>", "[SEP]",
]
TITLE = f"the __DATA__ bank <svg/onload={PWN}> __SCRIPT__ </title><script>{PWN}</script>"


def weights(L, H, T, seed=0):  # [L, H, T, T], rows summing to 1
    e = np.exp(np.random.default_rng(seed).normal(size=(L, H, T, T)) * 2)
    return e / e.sum(axis=-1, keepdims=True)


def shown_page(browser, path):  # -> (the opened page, what it shows), after it has drawn
    opened = open_page(browser, path)
    page = opened.page
    shows = page.evaluate("""() => ({
        title: document.title,
        h1: document.querySelector("h1").textContent,
        lines: document.querySelectorAll("#view line").length,
        left: [...document.querySelectorAll("#view text[text-anchor=end]")].map(t => t.textContent),
        right: [...document.querySelectorAll("#view text:not([text-anchor])")]
                 .map(t => t.textContent),
        svgs: document.querySelectorAll("svg").length,
        scripts: document.querySelectorAll("script").length,
        images: document.querySelectorAll("img").length,
        layers: document.querySelectorAll("#layer option").length,
        heads: document.querySelectorAll("#heads input").length,
        start: JSON.parse(document.getElementById("data").textContent).start_head})""")
    return opened, shows


def assert_drawn_as_given(opened, shows, title, tokens, w, layer=0):
    assert opened.errors == []  # no script error, no refused inline script
    assert shows["title"] == shows["h1"] == title  # the title is text, whatever it holds
    assert shows["left"] == shows["right"] == tokens  # each token as the text it is
    head = shows["start"]  # it opens on one head
    assert shows["lines"] == int((w[layer, head].round(3) >= 0.01).sum())  # the page drew
    assert (shows["svgs"], shows["scripts"], shows["images"]) == (1, 2, 0)  # nothing injected
    assert (shows["layers"], shows["heads"]) == w.shape[:2]


def test_hostile_tokens_and_title_stay_text(browser, tmp_path):
    w = weights(2, 3, len(HOSTILE))
    path = tmp_path / "view.html"
    path.write_text(head_view_html(TITLE, HOSTILE, w), encoding="utf-8")
    assert_drawn_as_given(*shown_page(browser, path), TITLE, HOSTILE, w)


def test_one_token_one_head_one_layer_still_draws(browser, tmp_path):
    w = np.ones((1, 1, 1, 1))
    path = tmp_path / "tiny.html"
    path.write_text(head_view_html("one", ["<!--"], w), encoding="utf-8")
    assert_drawn_as_given(*shown_page(browser, path), "one", ["<!--"], w)


def test_real_out_with_a_hostile_folder_name_sentence_and_special_token(browser, tmp_path,
                                                                        capsys):
    """real --out with a tiny BERT whose folder name and special token carry markup."""
    pytest.importorskip("tokenizers")
    from real_folder import write_folder
    from tokenizers import AddedToken, Tokenizer

    folder = write_folder(tmp_path / f"__DATA__<svg onload=\"{PWN}\">", "bert")
    special = f"</script><img src=x onerror=\"{PWN}\">"
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.add_special_tokens([AddedToken(special, special=True)])  # id 9: past vocab_size 9
    tok.save(str(folder / "tokenizer.json"))
    config = json.loads((folder / "config.json").read_text())
    _grow_vocabulary(folder, config, 10)
    sentence = f"the {special} bank"
    assert cli.main(["real", sentence, "--model", str(folder), "--out", str(tmp_path / "o")]) == 0
    capsys.readouterr()
    page = tmp_path / "o" / "head_view.html"
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>',
                                page.read_text(), re.S).group(1))
    assert data["tokens"] == ["[CLS]", "the", special, "bank", "[SEP]"]
    w = np.array(data["attentions"])
    opened, shows = shown_page(browser, page)
    assert_drawn_as_given(opened, shows, f"{folder}: {' '.join(data['tokens'])}",
                          data["tokens"], w, layer=data["start_layer"])


def _grow_vocabulary(folder, config, rows):  # the embedding table gets the special token's row
    from safetensors.numpy import load_file, save_file

    tensors = load_file(str(folder / "model.safetensors"))
    table = tensors["embeddings.word_embeddings.weight"]
    extra = np.random.default_rng(1).standard_normal((rows - len(table), table.shape[1]))
    tensors["embeddings.word_embeddings.weight"] = np.vstack([table, extra.astype(table.dtype)])
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({**config, "vocab_size": rows}))


def test_embedded_json_can_close_nothing_and_reads_back():
    data = {"tokens": HOSTILE, "n": [0.5, 1e-300]}
    code = json_for_script(data)
    assert "<" not in code and ">" not in code and "&" not in code
    assert json.loads(code) == data


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_numbers_are_never_embedded(bad):
    with pytest.raises(ValueError):
        json_for_script({"attentions": [bad]})


def test_placeholders_are_filled_in_one_pass():
    assert fill("<title>__TITLE__</title>__DATA__", {"TITLE": "__DATA__", "DATA": "[1]"}) == \
        "<title>__DATA__</title>[1]"
