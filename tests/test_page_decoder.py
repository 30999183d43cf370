"""explorer.html's Module 4 panel in headless Chromium: SmolLM2's continuation stepped token by
token, the pattern grids and the KV-cache sum, each number read off the page and compared with
Module 4's own arrays (its Result, computed here) and with the sizes worked by hand; the panel
on a phone and under axe-core; and a page without Module 4 (run --no-real) has no such panel."""

from types import SimpleNamespace

import numpy as np
import pytest
from browser import axe_violations, cells, doc_screenshots, open_page, shown, shown_matrix
from shared_run import alone
from smollm2_reference import smollm2_path
from test_page_learner_path import in_view

from attention_workshop.figures.explorer import FIGURES
from attention_workshop.modules import module2, module3, module4
from attention_workshop.modules.module2 import scaling_experiment


@pytest.fixture(scope="module")
def m4():  # Module 4's Result, run once a session (~6 s: SmolLM2 in float64; shared_run.py)
    smollm2_path()
    return alone(module4)[0]


def page_from_run(folder, m4_result):  # explorer.html as `run` draws it (FIGURES), no Module 3
    m2 = SimpleNamespace(scaling=scaling_experiment())  # all the page reads of Module 2
    results = {module2.Result: m2, module4.Result: m4_result} if m4_result else {module2.Result: m2}
    return FIGURES["explorer.html"](results, folder / "explorer.html")


@pytest.fixture(scope="module")
def decoder_page(m4, tmp_path_factory):
    return page_from_run(tmp_path_factory.mktemp("decoder"), m4)


def look(page):  # the step's table: [(row label, printed weight)]
    labels = page.eval_on_selector_all("#m4-look tbody th", "hs => hs.map(h => h.textContent)")
    return list(zip(labels, [row[0] for row in cells(page, "#m4-look")], strict=True))


def expected_look(m4, k, layer, head):  # the same from the Result: step k's row of that head
    g = m4.continuation
    tokens = [*g.prompt_tokens, *(s.token for s in g.steps)]
    row = g.steps[k].attention[layer, head]  # [S]: the row of the position that wrote token k
    assert len(row) == len(g.prompt_ids) + k
    return [(f"{j}: {tokens[j]}", shown(w)) for j, w in enumerate(row)]


def copy_step(m4, layer, head):  # -> (step, target, weight) where the head looks hardest at
    """the token after the last earlier occurrence of the token that looks (by plain loops)."""
    g = m4.continuation
    tokens = [*g.prompt_tokens, *(s.token for s in g.steps)]
    best = None
    for k, step in enumerate(g.steps):
        p = len(g.prompt_ids) + k - 1  # the position that writes new token k
        earlier = [j for j in range(p) if tokens[j] == tokens[p]]
        if earlier:
            w = float(step.attention[layer, head, earlier[-1] + 1])
            if best is None or w > best[2]:
                best = (k, earlier[-1] + 1, w)
    return best


def test_the_continuation_steps_token_by_token_as_module4_wrote_it(browser, decoder_page, m4):
    page = (opened := open_page(browser, decoder_page)).page
    g = m4.continuation
    chips = page.eval_on_selector_all("#m4-written button", "bs => bs.map(b => b.textContent)")
    assert chips == [s.token for s in g.steps] and len(chips) == module4.NEW_TOKENS[0]
    # It opens on the strongest induction head (the argmax of its grid, found here), at the
    # step where it looks hardest at the token it would copy (found here from the tokens).
    scores = m4.patterns["induction"].scores
    layer, head = np.unravel_index(int(np.argmax(scores)), scores.shape)
    assert (page.input_value("#m4-layer"), page.input_value("#m4-head")) == (str(layer),
                                                                              str(head))
    k, target, w = copy_step(m4, layer, head)
    assert (k, target, shown(w)) == (10, 2, "0.823")  # "Ġriver" looks at "Ġbank"
    assert look(page) == expected_look(m4, k, layer, head)
    assert page.text_content("#m4-step-value") == f"new token {k + 1} of {len(g.steps)}"
    tokens = [*g.prompt_tokens, *(s.token for s in g.steps)]
    P = len(g.prompt_ids)
    assert page.text_content("#m4-notice").startswith(
        f"What to notice: {P + k - 1}: {tokens[P + k - 1]} came before, at position "
        f"{target - 1}, and {target}: {tokens[target]} followed it. In layer {layer}, head "
        f"{head}, the strongest induction head (results.log [S14]), it puts {shown(w)} on "
        f"{target}: {tokens[target]}")
    assert page.text_content("#m4-start").startswith(
        f"It opens on new token {k + 1}, in layer {layer}, head {head}: the strongest induction "
        "head")
    page.click("#m4-next-copy")  # the next step whose looking token came before: 'Ġwas'
    assert page.input_value("#m4-step") == str(k + 1) and tokens[P + k] == tokens[3]
    page.focus("#m4-step")  # the keyboard: arrows, End, Home on the range
    page.keyboard.press("Home")
    assert page.is_disabled("#m4-back") and not page.is_disabled("#m4-next")
    assert "has not come before" in page.text_content("#m4-notice")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    assert look(page) == expected_look(m4, 3, layer, head)
    assert page.text_content("#m4-step-value") == f"new token 4 of {len(g.steps)}"
    row, S = g.steps[3].attention[layer, head], len(g.prompt_ids) + 3
    top = int(np.argmax(row))
    per_token = 2 * 30 * 3 * 64 * 4  # keys and values x layers x KV heads x d_k x float32
    assert page.text_content("#m4-now") == (
        f"New token 4 of 16: {g.steps[3].token} (id {g.new_ids[3]}), written at "
        f"{tokens[S - 1]} (position {S - 1}); in layer {layer}, head {head} it looked most at "
        f"{tokens[top]} (position {top}) {shown(row[top])}. The KV cache holds {S} tokens now: "
        f"{S} \u00d7 46,080 = {S * per_token:,} bytes.")
    page.keyboard.press("End")
    assert look(page) == expected_look(m4, len(g.steps) - 1, layer, head)
    assert page.is_disabled("#m4-next") and not page.is_disabled("#m4-back")
    page.keyboard.press("Home")
    assert look(page) == expected_look(m4, 0, layer, head)
    page.click("#m4-next")
    page.click("#m4-next")
    assert look(page) == expected_look(m4, 2, layer, head)
    page.click("#m4-written button >> nth=9")  # a written token jumps to its step
    assert tokens[P + 8] == "\u0120The" and tokens[0] == "The"  # "The" again, with its space
    assert f"has not come before (0: {tokens[0]} is another token: the space is part of a " \
        "token)" in page.text_content("#m4-notice")
    page.select_option("#m4-layer", "4")
    page.select_option("#m4-head", "7")
    assert look(page) == expected_look(m4, 9, 4, 7)
    page.focus("#m4-look")  # a cell read in words: down to position 2
    for _ in range(2):
        page.keyboard.press("ArrowDown")
    assert page.text_content("#m4-look-say") == (
        f"layer 4, head 7, new token 10: {len(g.prompt_ids) + 8}: {tokens[len(g.prompt_ids) + 8]}"
        f" \u2192 2: {tokens[2]} = {shown(g.steps[9].attention[4, 7, 2])}")
    assert not opened.errors


def test_the_pattern_grids_and_their_top_heads(browser, decoder_page, m4):
    page = (opened := open_page(browser, decoder_page)).page
    for kind in ("induction", "previous", "sink"):
        page.select_option("#m4-kind", kind)
        scores = m4.patterns[kind].scores  # [30, 9]
        assert cells(page, "#m4-grid") == shown_matrix(scores)
        order = np.argsort(-scores, axis=None, kind="stable")[:module4.TOP]  # best first, here
        best = [np.unravel_index(int(i), scores.shape) for i in order]
        buttons = page.eval_on_selector_all("#m4-top button", "bs => bs.map(b => b.textContent)")
        assert buttons == [f"layer {lay}, head {h}: {shown(scores[lay, h])}" for lay, h in best]
    p = m4.patterns["sink"]
    assert page.text_content("#m4-loss") == (
        f"The repeat is predicted: next-token loss {p.loss_first:.2f} nats on the first half, "
        f"{p.loss_second:.2f} on the repeat (the induction heads copy).")
    page.click("#m4-top button >> nth=1")  # the second sink head, watched as it writes
    lay, h = best[1]
    assert (page.input_value("#m4-layer"), page.input_value("#m4-head")) == (str(lay), str(h))
    assert look(page) == expected_look(m4, 10, lay, h)  # at the step the panel opened on
    assert not opened.errors


def test_the_kv_cache_is_worked_out_from_the_sizes(browser, decoder_page, m4):
    page = (opened := open_page(browser, decoder_page)).page
    cfg, g = m4.model.config, m4.continuation
    assert (cfg.n_layer, cfg.n_head, cfg.n_kv_head, cfg.d_head) == (30, 9, 3, 64)
    # the last token written is never run (test_module4 proves it on transformers' own cache)
    total = len(g.prompt_ids) + len(g.new_ids) - 1
    assert total == 4 + 16 - 1 == g.steps[-1].attention.shape[-1]
    lines = page.eval_on_selector_all("#m4-cache li", "ls => ls.map(l => l.textContent)")
    assert lines == [
        "a token, 3 KV heads: 2 \u00d7 30 \u00d7 3 \u00d7 64 \u00d7 4 = 46,080 bytes",
        "a token, a KV head per query head (9): 2 \u00d7 30 \u00d7 9 \u00d7 64 \u00d7 4 = "
        "138,240 bytes (3 \u00d7 as much)",
        "this continuation, 4 + 16 \u2212 1 = 19 tokens (the last token written is never run): "
        f"19 \u00d7 46,080 = {19 * 46080:,} bytes (with 9 KV heads: {19 * 138240:,})"]
    assert not opened.errors


def test_on_a_phone_the_step_and_its_look_stay_in_view(browser, decoder_page, m4):
    page = (opened := open_page(browser, decoder_page, 390, 844)).page
    page.eval_on_selector("#m4-back", "e => e.scrollIntoView({block: 'start'})")  # the controls
    page.focus("#m4-step")
    for _ in range(len(m4.continuation.steps)):  # to the last step: the longest look back
        page.keyboard.press("ArrowRight")
    assert page.input_value("#m4-step") == str(len(m4.continuation.steps) - 1)
    assert in_view(page, "#m4-step") and in_view(page, "#m4-now")
    assert in_view(page, "#m4-look tbody tr:last-child")  # the token just before the new one
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing sideways
    assert not opened.errors


def test_on_a_phone_the_whole_grid_fits_with_its_caption(browser, decoder_page, m4):
    """390 x 844: the 30 x 9 grid needs no sideways scroll (its top induction and sink cells,
    L18 H6 and L18 H8, inside the screen), three decimals a cell without the leading 0, the
    caption whole."""
    page = (opened := open_page(browser, decoder_page, 390, 844)).page
    page.eval_on_selector("#m4-grid", "e => e.scrollIntoView({block: 'start'})")
    box = page.eval_on_selector("#m4-grid", "t => [t.getBoundingClientRect().right, "
                                "t.parentElement.scrollWidth <= t.parentElement.clientWidth]")
    assert box[0] <= 390 and box[1]
    for kind in ("induction", "sink"):
        page.select_option("#m4-kind", kind)
        scores = m4.patterns[kind].scores
        lay, h = np.unravel_index(int(np.argmax(scores)), scores.shape)
        cell = f"#m4-grid tbody tr:nth-child({lay + 1}) td:nth-child({h + 2})"
        right = page.eval_on_selector(cell, "c => c.getBoundingClientRect().right")
        assert right <= 390 and page.text_content(cell) == shown(scores[lay, h]).removeprefix("0")
    caption = page.eval_on_selector("#m4-grid caption", "c => [c.scrollWidth <= c.clientWidth, "
                                    "c.getBoundingClientRect().right, c.textContent]")
    assert caption[0] and caption[1] <= 390 and caption[2].endswith("across; .935 is 0.935)")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert not opened.errors


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_the_panel_has_no_serious_accessibility_violation(browser, decoder_page, width, height):
    page = (opened := open_page(browser, decoder_page, width, height, bypass_csp=True)).page
    assert page.locator("#module4").count() == 1
    assert axe_violations(page) == []
    page.focus("#m4-step")
    page.keyboard.press("End")
    page.select_option("#m4-kind", "sink")
    page.hover("#m4-grid tbody tr:nth-child(4) td:nth-child(3)")
    page.focus("#m4-look")
    assert axe_violations(page) == []
    assert not opened.errors


def test_a_page_without_module4_has_no_such_panel(browser, tmp_path):
    path = page_from_run(tmp_path, None)  # what run --no-real draws: no Module 3 or 4
    page = (opened := open_page(browser, path)).page
    assert page.locator("#module4").count() == 0 and page.locator("[id^=m4-]").count() == 0
    assert "Module 4" not in page.eval_on_selector_all("#nav a", "as => as.map(a => a.textContent)")
    assert page.evaluate("window.explorer.data.decoder") is None
    assert {module3.Result, module4.Result} <= set(FIGURES["explorer.html"].optional)
    assert not opened.errors


def test_screenshots_of_the_panel_at_desktop_and_phone_width(browser, decoder_page, tmp_path):
    """docs/explorer.md's pictures of the panel (new token 10, where "The" writes "river", in
    layer 22, head 0):
    UPDATE_DOCS=1 pytest tests/test_page_decoder.py -k screenshots writes them to docs/."""

    def prepare(page, name):
        page.click("#m4-written button >> nth=9")
        page.select_option("#m4-layer", "22")  # a head that looks back at river as "The"
        page.select_option("#m4-head", "0")  # writes river again (0.446)
        page.eval_on_selector("#module4 h3", "e => e.scrollIntoView()")
        page.mouse.move(0, 0)

    doc_screenshots(browser, decoder_page, {"explorer-module4.png": (1280, 800),
                                            "explorer-module4-phone.png": (390, 844)},
                    tmp_path, prepare)
