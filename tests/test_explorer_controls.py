"""explorer.html driven the way a learner drives it, in headless Chromium: click word buttons,
type a sentence, drag and key the sliders, type into a cell, flip the switches; every table
read back as text against the engine's numbers (`explore --format json`, log lines).
"""

import numpy as np
from browser import cells, open_page, shown, shown_matrix
from explore_cli import explore_json, own_files

from attention_workshop.attention import softmax
from attention_workshop.embeddings import EMBED, SENT_MONEY, SENT_RIVER


def test_module1_by_clicks_and_typing(browser, page_file):
    opened = open_page(browser, page_file)
    page = opened.page
    page.click("#clear")
    assert "empty" in page.text_content("#sentence .status")
    for word in ("the", "money", "bank", "by", "the", "river"):
        page.click(f'button.word[data-word="{word}"]')
    ref = explore_json("the money bank by the river")
    assert cells(page, "#m1-X") == shown_matrix([EMBED[w] for w in ref["tokens"]])
    for key in ("scores", "weights", "outputs"):
        assert cells(page, f"#m1-{key}") == shown_matrix(ref["raw"][key]), key
    page.fill("#sentence-text", "a boat at the shore")
    page.press("#sentence-text", "Enter")
    ref = explore_json("a boat at the shore")
    assert cells(page, "#m1-weights") == shown_matrix(ref["raw"]["weights"])
    page.fill("#sentence-text", "the lak bank")  # a typo: said, and the tables stay as they were
    page.click("#show")
    assert "'lak' (closest: lake" in page.text_content("#sentence .status")
    assert cells(page, "#m1-weights") == shown_matrix(ref["raw"]["weights"])
    page.click("#remove-last")  # "the lak": still a typo
    page.fill("#sentence-text", "the river bank")
    assert cells(page, "#m1-outputs")[2] == ["0.435", "0.149", "0.543", "0.185"]  # log line 46
    assert not opened.errors


def test_the_plane_follows_the_chosen_word(browser, page_file):
    opened = open_page(browser, page_file)
    page = opened.page
    ref = explore_json(SENT_RIVER)
    text = page.text_content("#plane-title")
    assert "bank: lookup row water 0.300, money 0.300" in text
    assert "water 0.435, money 0.149" in text  # bank's red diamond, log line 46
    page.click('button.preset:has-text("the money bank")')
    assert "water 0.158, money 0.409" in page.text_content("#plane-title")  # log line 47
    page.select_option("#follow", "1")
    ref = explore_json(SENT_MONEY)
    money = ref["raw"]["outputs"][1]
    assert (f"water {shown(money[0])}, money {shown(money[1])}"
            in page.text_content("#plane-title"))
    assert not opened.errors


def wiring_on_page(page, name, rows, cols):
    return [[float(page.input_value(f'input[data-cell="{name}:{i}:{j}"]')) for j in range(cols)]
            for i in range(rows)]


def test_module2_sliders_boxes_and_switches(browser, page_file):
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
    ref = explore_json(sentence, w_q, w_k)
    for table, key in (("Q", "queries"), ("K", "keys"), ("scores", "scores"),
                       ("weights", "weights"), ("outputs", "outputs")):
        assert cells(page, f"#m2-{table}") == shown_matrix(ref["wired"][key]), key
    page.click("#scale")  # off: softmax of the undivided scores
    ref = explore_json(sentence, w_q, w_k, scale=False)
    assert cells(page, "#m2-weights") == shown_matrix(ref["wired"]["weights"])
    assert page.is_hidden("#m2-divided")
    page.focus("#causal")
    page.keyboard.press("Space")  # on: no word looks ahead
    ref = explore_json(sentence, w_q, w_k, scale=False, causal=True)
    T = len(ref["tokens"])
    mask = np.tril(np.ones((T, T), dtype=bool))
    assert cells(page, "#m2-weights") == shown_matrix(ref["wired"]["weights"], mask)
    page.click("details.wv summary")
    page.fill('input[data-cell="W_V:0:1"]', "0.5")  # water also hands over as money
    w_v = np.eye(4)
    w_v[0, 1] = 0.5
    ref = explore_json(sentence, w_q, w_k, w_v, scale=False, causal=True)
    assert cells(page, "#m2-V") == shown_matrix(ref["wired"]["values"])
    assert cells(page, "#m2-outputs") == shown_matrix(ref["wired"]["outputs"])
    page.click("#lesson-wiring")  # one button: the wiring, W_V, the division and no mask
    assert page.is_checked("#scale") and not page.is_checked("#causal")
    ref = explore_json(sentence)
    assert cells(page, "#m2-V") == shown_matrix([EMBED[w] for w in ref["tokens"]])
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


def test_ties_are_named_as_ties(browser, page_file):
    opened = open_page(browser, page_file)
    page = opened.page
    page.fill("#sentence-text", "the bank bank")
    ref = explore_json("the bank bank")
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


HERON = {"heron": [0.8, 0.0, 0.4, 0.1], "loan": [0.0, 0.9, 0.2, 0.0]}  # a learner's words
MY_WQ = [[0.5, 0.0], [0.0, 1.0], [1.0, 0.5], [0.0, 0.0]]
MY_WV = [[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.5]]


def test_the_page_starts_with_the_learners_words_and_wiring(browser, tmp_path):
    from attention_workshop import cli

    sentence = "the heron by the loan bank"
    argv = ["explorer", sentence, "--out", str(tmp_path / "out"), "--no-real",
            *own_files(tmp_path, HERON, False, MY_WQ, None, MY_WV)]
    assert cli.main(argv) == 0
    opened = open_page(browser, tmp_path / "out" / "explorer.html")
    page = opened.page
    ref = explore_json(sentence, w_q=MY_WQ, w_v=MY_WV, table=HERON)  # explore's own numbers
    assert cells(page, "#m1-X") == shown_matrix([HERON.get(w, EMBED.get(w)) for w in ref["tokens"]])
    assert cells(page, "#m1-weights") == shown_matrix(ref["raw"]["weights"])
    for table, key in (("Q", "queries"), ("weights", "weights"), ("V", "values"),
                       ("outputs", "outputs")):
        assert cells(page, f"#m2-{table}") == shown_matrix(ref["wired"][key]), key
    assert wiring_on_page(page, "W_Q", 4, 2) == MY_WQ
    assert page.text_content("#lesson-wiring").startswith("back to your wiring")
    page.click("#zero-wiring")
    page.click("#lesson-wiring")  # brings back the learner's W_Q and W_V, not the lesson's
    assert wiring_on_page(page, "W_Q", 4, 2) == MY_WQ and wiring_on_page(page, "W_V", 4, 4) == MY_WV
    assert cells(page, "#m2-outputs") == shown_matrix(ref["wired"]["outputs"])
    assert not opened.errors


def test_a_table_of_other_axes_and_one_channel_works_too(browser, tmp_path):
    from attention_workshop import cli

    table = {"heron": [0.8, 0.0, 0.4], "the": [0.0, 0.0, 1.0], "pond": [1.0, 0.2, 0.0]}
    w_q, w_k = [[1.0], [0.0], [0.5]], [[0.0], [1.0], [0.2]]  # 3 axes, 1 channel
    sentence = "the heron the pond"
    argv = ["explorer", sentence, "--word", "pond", "--out", str(tmp_path / "out"), "--no-real",
            *own_files(tmp_path, table, True, w_q, w_k)]
    assert cli.main(argv) == 0
    opened = open_page(browser, tmp_path / "out" / "explorer.html")
    page = opened.page
    ref = explore_json(sentence, w_q=w_q, w_k=w_k, table=table, replace=True)
    assert cells(page, "#m1-X") == shown_matrix([table[w] for w in ref["tokens"]])
    assert cells(page, "#m1-weights") == shown_matrix(ref["raw"]["weights"])
    for name, key in (("Q", "queries"), ("K", "keys"), ("weights", "weights"),
                      ("outputs", "outputs")):
        assert cells(page, f"#m2-{name}") == shown_matrix(ref["wired"][key]), name
    page.fill('input[data-cell="W_Q:2:0"]', "2")  # the learner moves their own wiring
    moved = explore_json(sentence, w_q=[[1.0], [0.0], [2.0]], w_k=w_k, table=table, replace=True)
    assert cells(page, "#m2-weights") == shown_matrix(moved["wired"]["weights"])
    assert not opened.errors
