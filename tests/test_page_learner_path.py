"""explorer.html followed as a learner goes (issue 21, faults 1-9), in headless Chromium: the
sentence typed key by key, punctuation and capitals as `explore` reads them, one button back
to the lesson, a words line that never goes stale, number boxes that refuse what is not a
number, the plane's labels inside its frame, "clear", a phone's screen, Module 3's word pair.
Every number is checked against `explore --format json` (or the log's lines, or
real/analysis/head_search.py for Module 3), as the page prints numbers (3 decimals, Python's
rounding).
"""

import numpy as np
import pytest
from browser import cells, open_page, shown, shown_matrix
from explore_cli import explore_json

from attention_workshop.embeddings import EMBED, SENT_MONEY, SENT_RIVER

PROMPT = "Point at or focus a table (arrow keys move) to read one number in words."
LIVES = "lives => lives.map(l => [...l.querySelectorAll('.value')].map(v => v.textContent))"


def type_sentence(page, sentence):  # empty the box, then type key by key as a learner does
    page.click("#clear")
    page.locator("#sentence-text").press_sequentially(sentence)


def followed(page):
    return page.text_content("#lives-title")


def test_typing_key_by_key_keeps_following_bank(browser, page_file):
    page = (opened := open_page(browser, page_file)).page
    type_sentence(page, "the money bank")  # "the" and "the money" are shown on the way
    assert followed(page) == "bank's three lives"
    assert page.input_value("#follow") == "2"
    assert page.text_content("#plane-title").startswith("bank: lookup row")
    ref = explore_json("the money bank")
    assert cells(page, "#m1-weights") == shown_matrix(ref["raw"]["weights"])
    page.click("#clear")
    for word in ("the", "money", "bank"):  # the word buttons, one at a time
        page.click(f'button.word[data-word="{word}"]')
    assert followed(page) == "bank's three lives"
    page.select_option("#follow", "1")  # the learner chooses money: followed from now on
    type_sentence(page, "the money by the bank")
    assert followed(page) == "money's three lives"
    page.click('button.preset:has-text("the river bank")')  # a lesson sentence: bank again
    assert followed(page) == "bank's three lives" and page.input_value("#follow") == "2"
    assert not opened.errors


@pytest.mark.parametrize("typed", ["The river bank.", "The River, bank.", "THE MONEY BANK!"])
def test_punctuation_and_capitals_as_explore_reads_them(browser, page_file, typed):
    page = (opened := open_page(browser, page_file)).page
    type_sentence(page, typed)
    page.press("#sentence-text", "Enter")
    ref = explore_json(typed)  # explore accepts it: so does the page, with the same words
    assert page.text_content("#sentence-status") == ""
    assert page.get_attribute("#sentence-text", "aria-invalid") == "false"
    assert page.evaluate("window.explorer.state().tokens") == ref["tokens"]
    assert cells(page, "#m1-weights") == shown_matrix(ref["raw"]["weights"])
    assert cells(page, "#m2-weights") == shown_matrix(ref["wired"]["weights"])
    assert followed(page) == "bank's three lives"
    assert not opened.errors


def test_back_to_the_lesson_brings_back_the_wiring_and_both_switches(browser, page_file):
    page = (opened := open_page(browser, page_file)).page
    page.fill('input[data-slider="W_Q:2:0"]', "0.4")
    page.fill('input[data-cell="W_K:0:1"]', "-2")
    page.click("details.wv summary")
    page.fill('input[data-cell="W_V:1:1"]', "3")
    page.click("#scale")  # undivided
    page.click("#causal")
    lives = page.eval_on_selector_all("#three-lives .life", LIVES)
    assert lives[2] != ["0.552", "0.102", "0.457", "0.159"]
    page.click("#lesson-wiring")
    assert page.is_checked("#scale") and not page.is_checked("#causal")
    lives = page.eval_on_selector_all("#three-lives .life", LIVES)
    assert lives[2] == ["0.552", "0.102", "0.457", "0.159"]  # log line 72, bank's wired output
    ref = explore_json(SENT_RIVER)
    assert cells(page, "#m2-weights") == shown_matrix(ref["wired"]["weights"])
    assert page.input_value('input[data-cell="W_Q:2:0"]') == "2"
    assert page.input_value('input[data-cell="W_V:1:1"]') == "1"
    assert not opened.errors


def test_the_words_line_is_never_stale(browser, page_file):
    page = (opened := open_page(browser, page_file)).page
    page.click('button.preset:has-text("the money bank")')
    ref = explore_json(SENT_MONEY)
    page.hover("#m1-weights tbody tr:nth-child(3) td:nth-child(3)")  # bank -> money
    said = page.text_content("#module1 .readout")
    assert said.startswith(f"bank takes {shown(ref['raw']['weights'][2][1])} of its new vector "
                           "from money")
    page.fill("#sentence-text", "a boat")
    page.press("#sentence-text", "Enter")
    assert page.text_content("#module1 .readout") == PROMPT  # not money's number any more
    type_sentence(page, "bank the bank")
    page.hover("#m1-X tbody tr:nth-child(2) td:nth-child(2)")  # the's water
    assert page.text_content("#module1 .readout").startswith("the's water = 0.000")
    page.fill("#sentence-text", "the shore")
    page.press("#sentence-text", "Enter")
    assert page.text_content("#module1 .readout") == PROMPT
    # Module 2: a cell read, then a slider moved: the line says the cell's new number.
    page.click('button.preset:has-text("the river bank")')
    page.hover("#m2-weights tbody tr:nth-child(3) td:nth-child(3)")  # bank -> river
    page.fill('input[data-slider="W_Q:2:0"]', "0.5")
    w_q = lesson_w_q()
    w_q[2][0] = 0.5
    moved = explore_json(SENT_RIVER, w_q=w_q)["wired"]["weights"][2][1]
    assert page.text_content("#module2 .readout") == (
        f"bank takes {shown(moved)} of its new vector from river")
    assert cells(page, "#m2-weights")[2][1] == shown(moved)
    assert not opened.errors


def lesson_w_q():
    return [[0.0, 0.0], [0.0, 0.0], [2.0, 0.0], [0.0, 1.5]]  # W_Q[place, topic] = 2


def test_number_boxes_refuse_what_is_not_a_number_and_huge_ratios_read(browser, page_file):
    page = (opened := open_page(browser, page_file)).page
    box = page.locator('input[data-cell="W_Q:2:0"]')  # W_Q[place, topic]
    box.fill("")
    box.press_sequentially("100")
    w_q = lesson_w_q()
    w_q[2][0] = 100.0
    bank = explore_json(SENT_RIVER, w_q=w_q)["wired"]["outputs"][2]
    ratio = bank[0] / bank[1]
    assert ratio > 1e4  # water to money: a huge number
    mantissa, power = f"{ratio:.1e}".split("e")
    superscript = str(int(power)).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    text = page.text_content("#ratio")
    assert f"wired {mantissa} × 10{superscript} to 1" in text and "e+" not in text
    weights = cells(page, "#m2-weights")
    box.select_text()
    page.keyboard.type("e")  # a letter, not a number: refused out loud, 100 still in use
    status = page.text_content("#edit-W_Q-status")
    assert "W_Q[place, topic]: not a number" in status and "still use 100" in status
    assert box.get_attribute("aria-invalid") == "true"
    assert cells(page, "#m2-weights") == weights
    box.press("Tab")  # leaving the box puts the number in use back
    assert box.input_value() == "100" and box.get_attribute("aria-invalid") == "false"
    assert "kept 100" in page.text_content("#edit-W_Q-status")
    box.fill("5000")  # past the limit: refused too
    assert "past ±1000" in page.text_content("#edit-W_Q-status")
    assert cells(page, "#m2-weights") == weights
    assert not opened.errors


def boxes(page, selector):  # the bounding boxes of an SVG's elements, in its own units
    return page.eval_on_selector_all(
        selector, "es => es.map(e => { const b = e.getBBox(); "
                  "return [b.x, b.y, b.x + b.width, b.y + b.height]; })")


def overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.parametrize(("sentence", "word"), [
    ("the river bank by the money office at the lake of cash in a boat near", "river"),
    ("the river bank by the money office at the lake of cash in a boat of fish", "the"),
    (SENT_RIVER, "bank"),
])
def test_plane_labels_stay_inside_the_frame_and_apart(browser, page_file, sentence, word):
    words = sentence.split()
    if len(words) > 16 or not all(w in EMBED for w in words):  # fits the page's 16 words
        words = [w for w in words if w in EMBED][:16]
    page = (opened := open_page(browser, page_file)).page
    page.fill("#sentence-text", " ".join(words))
    page.press("#sentence-text", "Enter")
    page.select_option("#follow", str(max(i for i, w in enumerate(words) if w == word)))
    page.eval_on_selector("#plane", "e => e.scrollIntoView()")
    frame = boxes(page, "#plane rect.frame")[0]
    labels = boxes(page, "#plane text.label")
    assert len(labels) >= 3
    for box in labels:
        assert frame[0] <= box[0] and box[2] <= frame[2] and frame[1] <= box[1] and \
            box[3] <= frame[3], (box, frame)
    for k, a in enumerate(labels):
        assert not any(overlap(a, b) for b in labels[k + 1:]), a
    assert not opened.errors


def test_clear_clears_every_table_and_the_page_says_which_panels_follow(browser, page_file):
    page = (opened := open_page(browser, page_file)).page
    lede = page.text_content("#sentence .lede")
    assert "Every panel" not in lede and "Modules 1 and 2" in lede
    page.click("#clear")
    assert page.input_value("#sentence-text") == ""
    assert "empty" in page.text_content("#sentence-status")
    for table in ("#m1-X", "#m1-weights", "#m2-Q", "#m2-weights", "#m2-outputs"):
        assert cells(page, table) == [], table
    assert page.is_visible("#module1 .empty-note") and page.is_visible("#module2 .empty-note")
    assert page.is_hidden("#three-lives")
    assert page.eval_on_selector_all("#module1 .looks li", "ls => ls.length") == 0
    assert page.text_content("#strip-head") == "No sentence yet."
    page.click('button.word[data-word="bank"]')
    assert cells(page, "#m1-weights") == [["1.000"]]
    assert page.is_hidden("#module1 .empty-note") and followed(page) == "bank's three lives"
    assert not opened.errors


def in_view(page, selector, height=844):  # in whole pixels, as the screen shows it
    """(a box at y = -0.375 after scrollIntoView, from text lines of fractional height, shows
    whole on a screen of whole pixels)"""
    box = page.locator(selector).bounding_box()
    return box is not None and round(box["y"]) >= 0 and round(box["y"] + box["height"]) <= height


def strip_rows(page):
    return cells(page, "#strip-table")


def test_on_a_phone_the_result_stays_in_view_while_a_control_moves(browser, page_file):
    page = (opened := open_page(browser, page_file, 390, 844)).page
    slider = 'input[data-slider="W_Q:2:0"]'
    page.eval_on_selector(slider, "e => e.scrollIntoView({block: 'start'})")
    assert not in_view(page, "#three-lives")  # the lives are far below the sliders
    page.focus(slider)
    for _ in range(5):
        page.keyboard.press("ArrowLeft")  # 2.0 -> 1.5
    assert in_view(page, "#strip") and in_view(page, slider)
    w_q = lesson_w_q()
    w_q[2][0] = 1.5
    ref = explore_json(SENT_RIVER, w_q=w_q)
    bank = ref["wired"]["outputs"][2]
    assert strip_rows(page) == [[shown(v) for v in EMBED["bank"]],
                                [shown(v) for v in ref["raw"]["outputs"][2]],
                                [shown(v) for v in bank]]
    weights = ref["wired"]["weights"][2]
    top = int(np.argmax(weights))
    assert page.text_content("#strip-head").startswith(
        f"bank looks most at {ref['tokens'][top]} {shown(weights[top])}")
    page.eval_on_selector("#sentence-text", "e => e.scrollIntoView({block: 'start'})")
    page.focus("#sentence-text")
    page.keyboard.press("End")
    page.keyboard.type(" by the lake")
    assert in_view(page, "#strip") and in_view(page, "#sentence-text")
    assert strip_rows(page)[1] == [shown(v) for v in
                                   explore_json("the river bank by the lake")["raw"]["outputs"][2]]
    assert not opened.errors


def test_tables_that_scroll_say_so(browser, page_file):
    page = (opened := open_page(browser, page_file, 390, 844)).page
    hint = "#m2-weights >> xpath=.. >> .scroll-hint"
    assert page.is_hidden(hint)  # three words fit
    page.fill("#sentence-text", "the river bank by the money office at the lake")
    page.press("#sentence-text", "Enter")
    wide = page.eval_on_selector("#m2-weights", "t => t.parentNode.scrollWidth > "
                                                "t.parentNode.clientWidth")
    assert wide and page.is_visible(hint)
    assert "scroll" in page.text_content(hint)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # the page itself: no
    assert not opened.errors


def test_module3_moves_to_the_strongest_head_when_the_pair_changes(browser, page_file):
    pytest.importorskip("tokenizers")
    from attention_workshop.errors import WorkshopError
    from attention_workshop.real import load_model
    from attention_workshop.real.analysis.head_search import heads_toward

    try:
        river = load_model("minilm", dtype=np.float64).run(SENT_RIVER)
    except WorkshopError:
        pytest.skip("MiniLM's weights are not installed")
    page = (opened := open_page(browser, page_file)).page
    page.select_option("#real-0-from", "2")  # river
    page.select_option("#real-0-to", "3")  # -> bank
    layer, head, weight = heads_toward(river.attentions, 2, 3)[0]
    assert (page.input_value("#real-layer"), page.input_value("#real-head")) == (str(layer),
                                                                                  str(head))
    assert page.text_content("#real-0 .readout").startswith(
        f"layer {layer}, head {head}: river \u2192 bank = {shown(weight)}")
    assert not opened.errors


def test_on_a_phone_no_focused_control_hides_under_the_strip(browser, page_file):
    page = (opened := open_page(browser, page_file, 390, 844)).page
    page.focus('input[data-cell="W_Q:0:0"]')
    under = []
    for _ in range(30):  # Tab through W_Q, W_K, the switches and the buttons
        page.keyboard.press("Tab")
        focused, strip = page.evaluate("""() => [document.activeElement.getBoundingClientRect(),
            document.getElementById("strip").getBoundingClientRect()]
            .map(r => [r.top, r.bottom])""")
        if focused[1] > strip[0] + 1:
            under.append(page.evaluate("document.activeElement.getAttribute('aria-label')"))
    assert under == []
    assert not opened.errors
