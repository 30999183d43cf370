"""explorer.html in real headless Chromium: driven the way a learner drives it (click, type,
drag a slider, keyboard) and read back as text, against the Python engine's own numbers.

The engine is `explore --format json` (full precision); the page's JavaScript must agree within
1e-12 on the lesson sentences, random sentences and random wirings, with and without the
division by sqrt(d_k) and the causal mask.
"""

import contextlib
import io
import json

import numpy as np
import pytest
from browser import launch, open_page

from attention_workshop import cli
from attention_workshop.attention import softmax
from attention_workshop.embeddings import EMBED, SENT_MONEY, SENT_RIVER

TOLERANCE = 1e-12


@pytest.fixture(scope="module")
def browser():
    driver, chromium = launch()
    yield chromium
    chromium.close()
    driver.stop()


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):  # the page `explorer` writes, with MiniLM when it is installed
    folder = tmp_path_factory.mktemp("page")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(["explorer", "--out", str(folder)]) == 0
    return folder / "explorer.html"


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """engine(sentence, w_q=None, w_k=None, w_v=None, scale=True, causal=False) -> the JSON of
    `attention-workshop explore SENTENCE --format json` with those options."""
    folder = tmp_path_factory.mktemp("wirings")
    count = iter(range(10**6))

    def matrix_file(matrix):
        path = folder / f"w{next(count)}.json"
        path.write_text(json.dumps({"matrix": np.asarray(matrix, dtype=float).tolist()}))
        return str(path)

    def run(sentence, w_q=None, w_k=None, w_v=None, scale=True, causal=False):
        argv = ["explore", sentence, "--format", "json"]
        for flag, matrix in (("--wq", w_q), ("--wk", w_k), ("--wv", w_v)):
            if matrix is not None:
                argv += [flag, matrix_file(matrix)]
        argv += [] if scale else ["--no-scale"]
        argv += ["--causal"] if causal else []
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli.main(argv) == 0
        return json.loads(out.getvalue())

    return run


def shown(x):  # what the page prints for a number: Python's 3 decimals, and no "-0.000"
    text = f"{x:.3f}"
    return "0.000" if float(text) == 0 else text


def shown_matrix(M, mask=None):
    return [["\u2013" if mask is not None and not mask[i][j] else shown(v)
             for j, v in enumerate(row)] for i, row in enumerate(M)]


def cells(page, table):  # the text of every number cell of one of the page's tables
    return page.eval_on_selector_all(
        f"{table} tbody tr", "rows => rows.map(r => [...r.querySelectorAll('td')]"
                             ".map(td => td.textContent))")


def random_cases():
    rng = np.random.default_rng(2024)
    words = list(EMBED)
    sentence = lambda: " ".join(rng.choice(words, size=int(rng.integers(1, 13))))  # noqa: E731
    cases = [{"sentence": s} for s in [SENT_RIVER, SENT_MONEY, *(sentence() for _ in range(24))]]
    for k in range(24):
        cases.append({"sentence": sentence(), "w_q": rng.uniform(-3, 3, (4, 2)).tolist(),
                      "w_k": rng.uniform(-3, 3, (4, 2)).tolist(),
                      "w_v": None if k % 2 else rng.uniform(-2, 2, (4, 4)).tolist()})
    return [{**c, "scale": scale, "causal": causal}
            for c in cases for scale in (True, False) for causal in (False, True)]


def test_the_page_engine_equals_explore_json(browser, page_file, engine):
    """26 sentences x the lesson's wiring and 24 random wirings (12 with a random W_V), each
    with and without the division and the mask: 200 cases, every matrix within 1e-12."""
    cases = random_cases()
    assert len(cases) == 200
    opened = open_page(browser, page_file)
    pages = opened.page.evaluate("cases => cases.map(c => window.explorer.explore(c))", cases)
    worst = 0.0
    for case, js in zip(cases, pages, strict=True):
        py = engine(case["sentence"], case.get("w_q"), case.get("w_k"), case.get("w_v"),
                    case["scale"], case["causal"])
        py["wired"].setdefault("values", [EMBED[w] for w in py["tokens"]])  # W_V = identity
        for head, keys in (("raw", ("scores", "weights", "outputs")),
                           ("wired", ("queries", "keys", "values", "scores", "weights",
                                      "outputs"))):
            for key in keys:
                a, b = np.array(js[head][key]), np.array(py[head][key])
                assert a.shape == b.shape, (case, head, key)
                worst = max(worst, float(np.abs(a - b).max()))
                assert np.abs(a - b).max() <= TOLERANCE, (case, head, key)
    assert worst <= TOLERANCE and not opened.errors


def test_module1_by_clicks_and_typing(browser, page_file, engine):
    opened = open_page(browser, page_file)
    page = opened.page
    page.click("#clear")
    assert "empty" in page.text_content("#sentence .status")
    for word in ("the", "money", "bank", "by", "the", "river"):
        page.click(f'button.word[data-word="{word}"]')
    ref = engine("the money bank by the river")
    assert cells(page, "#m1-X") == shown_matrix([EMBED[w] for w in ref["tokens"]])
    for key in ("scores", "weights", "outputs"):
        assert cells(page, f"#m1-{key}") == shown_matrix(ref["raw"][key]), key
    page.fill("#sentence-text", "a boat at the shore")
    page.press("#sentence-text", "Enter")
    ref = engine("a boat at the shore")
    assert cells(page, "#m1-weights") == shown_matrix(ref["raw"]["weights"])
    page.fill("#sentence-text", "the lak bank")  # a typo: said, and the tables stay as they were
    page.click("#show")
    assert "'lak' (closest: lake" in page.text_content("#sentence .status")
    assert cells(page, "#m1-weights") == shown_matrix(ref["raw"]["weights"])
    page.click("#remove-last")  # "the lak": still a typo
    page.fill("#sentence-text", "the river bank")
    assert cells(page, "#m1-outputs")[2] == ["0.435", "0.149", "0.543", "0.185"]  # log line 46
    assert not opened.errors


def test_the_plane_follows_the_chosen_word(browser, page_file, engine):
    opened = open_page(browser, page_file)
    page = opened.page
    ref = engine(SENT_RIVER)
    text = page.text_content("#plane-title")
    assert "bank: lookup row water 0.300, money 0.300" in text
    assert "water 0.435, money 0.149" in text  # bank's red diamond, log line 46
    page.click('button.preset:has-text("the money bank")')
    assert "water 0.158, money 0.409" in page.text_content("#plane-title")  # log line 47
    page.select_option("#follow", "1")
    ref = engine(SENT_MONEY)
    money = ref["raw"]["outputs"][1]
    assert (f"water {shown(money[0])}, money {shown(money[1])}"
            in page.text_content("#plane-title"))
    assert not opened.errors


def wiring_on_page(page, name, rows, cols):
    return [[float(page.input_value(f'input[data-cell="{name}:{i}:{j}"]')) for j in range(cols)]
            for i in range(rows)]


def test_module2_sliders_boxes_and_switches(browser, page_file, engine):
    opened = open_page(browser, page_file)
    page = opened.page
    sentence = "the money bank by the river"
    page.fill("#sentence-text", sentence)
    page.fill('input[data-slider="W_Q:2:0"]', "1.2")  # drag: place asks for topic, gain 1.2
    page.focus('input[data-slider="W_K:2:1"]')
    for _ in range(3):
        page.keyboard.press("ArrowLeft")  # place advertises place: 1.0 -> 0.7
    page.fill('input[data-cell="W_Q:3:1"]', "-0.5")  # typed into the box
    w_q, w_k = wiring_on_page(page, "W_Q", 4, 2), wiring_on_page(page, "W_K", 4, 2)
    assert w_q == [[0, 0], [0, 0], [1.2, 0], [0, -0.5]]
    assert w_k == [[1, 0], [1, 0], [0, 0.7], [0, 0]]
    ref = engine(sentence, w_q, w_k)
    for table, key in (("Q", "queries"), ("K", "keys"), ("scores", "scores"),
                       ("weights", "weights"), ("outputs", "outputs")):
        assert cells(page, f"#m2-{table}") == shown_matrix(ref["wired"][key]), key
    page.click("#scale")  # off: softmax of the undivided scores
    ref = engine(sentence, w_q, w_k, scale=False)
    assert cells(page, "#m2-weights") == shown_matrix(ref["wired"]["weights"])
    assert page.is_hidden("#m2-divided")
    page.focus("#causal")
    page.keyboard.press("Space")  # on: no word looks ahead
    ref = engine(sentence, w_q, w_k, scale=False, causal=True)
    T = len(ref["tokens"])
    mask = np.tril(np.ones((T, T), dtype=bool))
    assert cells(page, "#m2-weights") == shown_matrix(ref["wired"]["weights"], mask)
    page.click("details.wv summary")
    page.fill('input[data-cell="W_V:0:1"]', "0.5")  # water also hands over as money
    w_v = np.eye(4)
    w_v[0, 1] = 0.5
    ref = engine(sentence, w_q, w_k, w_v, scale=False, causal=True)
    assert cells(page, "#m2-V") == shown_matrix(ref["wired"]["values"])
    assert cells(page, "#m2-outputs") == shown_matrix(ref["wired"]["outputs"])
    page.click("#lesson-wiring")
    page.click("#identity-wv")
    page.click("#scale")
    page.click("#causal")
    ref = engine(sentence)
    assert cells(page, "#m2-weights") == shown_matrix(ref["wired"]["weights"])
    assert not opened.errors


def test_bank_three_lives_are_the_log_numbers(browser, page_file):
    opened = open_page(browser, page_file)
    values = opened.page.eval_on_selector_all(
        "#three-lives .life", "lives => lives.map(l => [...l.querySelectorAll('.value')]"
                              ".map(v => v.textContent))")
    assert values == [["0.300", "0.300", "0.900", "0.000"],  # the lookup row
                      ["0.435", "0.149", "0.543", "0.185"],  # log line 46
                      ["0.552", "0.102", "0.457", "0.159"]]  # log line 72
    assert opened.page.text_content("#lives-title") == "bank's three lives"
    assert "wired 5.4 to 1" in opened.page.text_content("#module2")


def test_ties_are_named_as_ties(browser, page_file, engine):
    opened = open_page(browser, page_file)
    page = opened.page
    page.fill("#sentence-text", "the bank bank")
    ref = engine("the bank bank")
    w = ref["raw"]["weights"][1]
    assert w[1] == w[2]
    texts = "items => items.map(i => i.textContent)"
    looks = page.eval_on_selector_all("#module1 .looks li", texts)
    assert looks[1] == (f"bank (word 2) \u2192 a tie: bank (word 2), bank (word 3) "
                        f"({shown(w[1])} each)")
    page.click("#zero-wiring")  # every score 0: every word spreads evenly
    looks = page.eval_on_selector_all("#module2 .looks li", texts)
    assert all(item.endswith("\u2192 a tie: the, bank (word 2), bank (word 3) (0.333 each)")
               for item in looks)
    assert not opened.errors


def test_number_format_is_pythons(browser, page_file):
    values = [0.0625, -0.0625, 0.1875, 2.5e-4, -2.5e-4, 0.0005, 1234.56789, 0.9995, -0.0,
              1e-300, 0.123456, 5.0, -7.0625, 1 / 3]
    opened = open_page(browser, page_file)
    printed = opened.page.evaluate("vs => vs.map(v => window.explorer.engine.fixed(v, 3))", values)
    assert printed == [shown(v) for v in values]


def test_scaling_panel(browser, page_file, tmp_path):
    opened = open_page(browser, page_file)
    page = opened.page
    data = page.evaluate("window.explorer.data.s5")
    rows = cells(page, "#s5-table")
    assert rows == [[f"{std:.2f}", f"{np.sqrt(d):.2f}", f"{un:.3f}", f"{sc:.3f}"]
                    for d, std, un, sc in data["lesson"]]
    assert rows[3] == ["16.03", "16.00", "0.941", "0.366"]  # the lesson's d = 256 line
    dims = [row[0] for row in data["curve"]]
    page.fill("#d-slider", str(dims.index(256)))
    assert "d = 256: the dot products spread with std 16.03" in page.text_content("#s5-readout")
    page.focus("#d-slider")
    page.keyboard.press("ArrowLeft")
    d, std, un, sc = data["curve"][dims.index(128)]
    assert page.text_content("#s5-readout").startswith(
        f"d = 128: the dot products spread with std {std:.2f} (\u221ad = 11.31); average top "
        f"weight {un:.3f} undivided, {sc:.3f} divided")
    scores = np.array(data["examples"][dims.index(128)][1])
    for box, expected in (("#s5-plain", softmax(scores)),
                          ("#s5-divided", softmax(scores / np.sqrt(128)))):
        texts = page.eval_on_selector_all(f"{box} .value", "vs => vs.map(v => v.textContent)")
        assert texts == [shown(v) for v in expected]
    assert not opened.errors


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
    from attention_workshop.real.heads import heads_toward

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


def png_size(path):  # (width, height) from the PNG header
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_screenshots_render_without_errors_at_desktop_and_phone_width(browser, page_file,
                                                                      tmp_path):
    """Also the README's pictures: UPDATE_DOCS=1 pytest -k screenshots writes them to docs/."""
    import os
    import shutil
    from pathlib import Path

    docs = Path(__file__).resolve().parents[1] / "docs"
    shots = {"explorer.png": (1280, 800, "#module2"), "explorer-phone.png": (390, 844, None)}
    for name, (width, height, panel) in shots.items():
        opened = open_page(browser, page_file, width, height)
        page = opened.page
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways
        if panel:
            page.eval_on_selector(panel, "e => e.scrollIntoView()")
        page.screenshot(path=tmp_path / name)
        assert png_size(tmp_path / name) == (width, height) and not opened.errors
        if os.environ.get("UPDATE_DOCS") == "1":
            shutil.copy(tmp_path / name, docs / name)
        assert png_size(docs / name) == (width, height)


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
