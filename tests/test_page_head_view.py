"""The head view used as a learner uses it (issue 21, faults 11-12), in headless Chromium: a
hovered token lets go when the mouse leaves it; a tap chooses a token and a tap again (or
elsewhere) lets it go; on a phone the page is laid out at the phone's width; the tokens take
the keyboard (Tab, arrow keys); a chosen token's weights are written as numbers.
"""

import numpy as np
import pytest
from browser import open_page, shown

from attention_workshop.figures.head_view import head_view_html

TOKENS = ["[CLS]", "the", "river", "bank", "[SEP]"]


def weights(L=2, H=3, T=5, seed=3):  # [L, H, T, T], rows summing to 1, rounded as the page
    e = np.exp(np.random.default_rng(seed).normal(size=(L, H, T, T)) * 1.5)
    return (e / e.sum(axis=-1, keepdims=True)).round(3)


def visible(w, token=None):  # how many lines the page draws: weights >= 0.01, of `token` only
    w = w if token is None else w[..., token:token + 1, :]
    return int((w >= 0.01).sum())


@pytest.fixture(scope="module")
def view(tmp_path_factory):  # (page path, weights, the head it opens on)
    w = weights()
    path = tmp_path_factory.mktemp("view") / "view.html"
    path.write_text(head_view_html("river", TOKENS, w, start_layer=1, start_head=2))
    return path, w


def lines(page):
    return page.locator("#view line").count()


def token(i):
    return f'#view text.token.left[data-token="{i}"]'


def test_hover_lets_go_when_the_mouse_leaves(browser, view):
    path, w = view
    page = (opened := open_page(browser, path)).page
    assert lines(page) == visible(w[1, 2])  # one head at first: layer 1, head 2
    page.click("#all")
    assert lines(page) == visible(w[1])
    page.hover(token(3))  # bank: only its lines
    assert lines(page) == visible(w[1], 3)
    page.mouse.move(2, 2)  # away: every token's lines again
    assert lines(page) == visible(w[1])
    page.hover(token(3))
    page.hover(token(1))  # from one token straight to the next
    assert lines(page) == visible(w[1], 1)
    page.mouse.move(2, 2)
    page.select_option("#layer", "0")
    assert lines(page) == visible(w[0])
    assert not opened.errors


def test_numbers_on_hover_and_in_words(browser, view):
    path, w = view
    page = (opened := open_page(browser, path)).page
    page.hover(token(3))
    numbers = page.eval_on_selector_all("#view text.weight", "ts => ts.map(t => t.textContent)")
    assert numbers == [shown(v) for v in w[1, 2, 3]]
    order = np.argsort(-w[1, 2, 3], kind="stable")[:5]
    said = ", ".join(f"{TOKENS[j]} {shown(w[1, 2, 3, j])}" for j in order)
    assert page.text_content("#readout") == f"bank, layer 1: head 2 looks at {said}."
    page.mouse.move(2, 2)
    assert page.locator("#view text.weight").count() == 0
    assert not opened.errors


def test_keyboard_tab_to_the_tokens_and_arrow_between_them(browser, view):
    path, w = view
    page = (opened := open_page(browser, path)).page
    for _ in range(40):  # Tab from the top until a token has the focus
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.dataset.token") is not None:
            break
    assert page.evaluate("document.activeElement.dataset.token") == "0"
    assert lines(page) == visible(w[1, 2], 0)
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.token") == "2"
    assert lines(page) == visible(w[1, 2], 2)
    assert page.text_content("#readout").startswith("river, layer 1: head 2 looks at")
    assert page.eval_on_selector_all("#view text.token.left", "ts => ts.map(t => t.tabIndex)") \
        == [-1, -1, 0, -1, -1]  # one token in the tab order: Tab leaves the picture
    page.keyboard.press("Escape")
    assert lines(page) == visible(w[1, 2])
    assert not opened.errors


@pytest.fixture(scope="module")
def phone(browser):  # a touch screen, 390 x 844, laid out as a phone lays out a page
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True,
                                   is_mobile=True, device_scale_factor=2)
    yield context
    context.close()


def test_touch_tap_to_choose_tap_again_or_elsewhere_to_let_go(phone, view):
    path, w = view
    page = phone.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.resolve().as_uri())
    page.tap("#all")
    page.tap(token(3))
    assert lines(page) == visible(w[1], 3)
    page.tap(token(3))  # the same token again: let go
    assert lines(page) == visible(w[1])
    page.tap(token(2))
    assert lines(page) == visible(w[1], 2)
    page.tap("h1")  # elsewhere
    assert lines(page) == visible(w[1])
    page.tap(token(2))
    page.tap(token(4))  # another token: that one
    assert lines(page) == visible(w[1], 4)
    assert page.evaluate("document.documentElement.clientWidth") == 390  # the viewport meta
    size = page.evaluate("parseFloat(getComputedStyle(document.querySelector('h1')).fontSize)")
    assert size >= 16 and page.evaluate("visualViewport.scale") == 1
    box = page.locator(token(3)).bounding_box()
    assert box["height"] >= 12  # tokens readable: about 14 px, not 5
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert not errors
    page.close()
