"""`attention-workshop generate`: the text streamed as it comes, the JSON, the page, bad input.

The ids are checked against our own model's greedy loop here and against transformers' in
tests/test_smollm2.py; the page's numbers against the generation's own weights, in Chromium.
"""

import json

import numpy as np
import pytest
from browser import cells, open_page
from smollm2_reference import smollm2_path
from test_real_llama import SHAPES, build_llama

from attention_workshop import cli
from attention_workshop.real import load_model
from attention_workshop.real.decode import cache_bytes

PROMPT = "The river bank was"


@pytest.fixture(scope="module")
def smollm2():
    smollm2_path()
    return load_model("smollm2")


def test_json_holds_the_ids_and_text_of_the_greedy_loop(smollm2, capsys):
    assert cli.main(["generate", PROMPT, "--tokens", "6", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    generation = smollm2.generate(PROMPT, tokens=6)
    assert report["prompt_ids"] == smollm2.encode(PROMPT) == generation.prompt_ids
    ids = list(report["prompt_ids"])
    for new in report["new_ids"]:  # each new id is the argmax after the ones before it
        assert new == int(np.argmax(smollm2.run(ids).logits[-1]))
        ids.append(new)
    assert report["new_ids"] == generation.new_ids and len(report["new_ids"]) == 6
    assert report["text"] == smollm2.tokenizer.decode(report["new_ids"])
    assert report["cache_bytes_per_token"] == 2 * 30 * 3 * 64 * 4
    for step in report["steps"]:
        assert all(0 <= look["position"] < len(ids) and 0 <= look["weight"] <= 1
                   for look in step["looked_at"])
        for look in step["looked_at"]:  # the raw token kept, the readable one beside it
            assert look["token"] == smollm2.tokenizer.id_to_token(ids[look["position"]])
            assert look["text"] == smollm2.tokenizer.decode([ids[look["position"]]])


def test_text_streams_a_line_per_token_then_the_whole(smollm2, capsys):
    """Each token as the tokenizer spells it (Ġ a space, as results.log and `real` write it),
    said once in the first line."""
    assert cli.main(["generate", PROMPT, "--tokens", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("smollm2: 4 prompt tokens")
    assert lines[0].endswith("tokens as the tokenizer spells them: Ġ marks a space, Ċ a line "
                             "break")
    generation = smollm2.generate(PROMPT, tokens=4)
    for line, step in zip(lines[1:5], generation.steps, strict=True):
        token = smollm2.tokenizer.id_to_token(step.id)  # e.g. 'Ġa'
        assert line.split()[:2] == ["+", token] and token.startswith("Ġ")
        looks = [f"{t} {w:.2f}" for _, t, w in step.looked_at]
        assert line.endswith(", ".join(looks) or "the first token and itself")
    assert lines[5].startswith("text: ") and "46,080 bytes a token (3 KV heads for 9 query" \
        in lines[6]


def test_the_page_shows_each_new_tokens_weights(smollm2, tmp_path, browser):
    assert cli.main(["generate", PROMPT, "--tokens", "3", "--out", str(tmp_path)]) == 0
    generation = smollm2.generate(PROMPT, tokens=3)
    opened = open_page(browser, tmp_path / "generation.html", width=390, height=844)
    page = opened.page
    page.select_option("#layer", "7")
    page.select_option("#head", "4")
    page.click("#next")  # new token 1: written from the position after the prompt
    shown = cells(page, "#weights")
    row = generation.steps[1].attention[7, 4]  # [S]
    assert len(shown) == len(row) == len(generation.prompt_ids) + 1
    assert [r[2] for r in shown] == [f"{w:.3f}" for w in np.rint(row * 1000) / 1000]
    page.select_option("#head", "-1")  # the mean of the heads
    mean = np.rint(generation.steps[1].attention[7] * 1000).mean(axis=0) / 1000
    assert [r[2] for r in cells(page, "#weights")] == [f"{w:.3f}" for w in mean]
    assert opened.errors == []


def test_the_page_counts_from_1_stops_at_the_ends_and_shows_the_text_so_far(smollm2, tmp_path,
                                                                            browser):
    """New tokens count from 1 (as the explorer does), previous/next are disabled at the ends,
    the text so far ends at the chosen token, tokens keep the tokenizer's Ġ (said in the note),
    and the page says which head it opens on and why."""
    from attention_workshop.figures.generation_view import strongest_head

    assert cli.main(["generate", PROMPT, "--tokens", "3", "--out", str(tmp_path)]) == 0
    generation = smollm2.generate(PROMPT, tokens=3)
    prompt = [smollm2.tokenizer.id_to_token(i) for i in generation.prompt_ids]
    new = [smollm2.tokenizer.id_to_token(i) for i in generation.new_ids]
    for width, height in ((1280, 800), (390, 844)):
        page = (opened := open_page(browser, tmp_path / "generation.html", width=width,
                                    height=height)).page
        so_far = "#text span, #text button"
        assert page.text_content("#written").startswith(f'new token 1 of 3: "{new[0]}" '
                                                        f"(position {len(prompt)})")
        assert page.is_disabled("#prev") and not page.is_disabled("#next")
        assert page.eval_on_selector_all(so_far, "es => es.map(e => e.textContent)") == \
            prompt + new[:1]
        page.click("#next")
        assert page.text_content("#written").startswith("new token 2 of 3")
        assert page.eval_on_selector_all(so_far, "es => es.map(e => e.textContent)") == \
            prompt + new[:2]
        page.click("#next")
        assert page.is_disabled("#next") and not page.is_disabled("#prev")
        assert page.text_content("#written").startswith("new token 3 of 3")
        layer, head = strongest_head(generation.steps)
        assert page.text_content("#start").startswith(f"It opens on layer {layer}, head {head}: "
                                                      "summed over every step")
        assert "\u0120 marks a space" in page.text_content("main")
        assert "\u2423" not in page.text_content("main")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert opened.errors == []


@pytest.mark.parametrize(("argv", "words"), [
    (["--tokens", "0"], "--tokens 0 is out of range"),
    (["--tokens", "-3"], "--tokens -3 is out of range"),
    (["--tokens", "100000"], "--tokens 100000 is out of range"),
    (["--model", "minilm"], "is an encoder"),
])
def test_bad_options_are_one_line_and_write_nothing(tmp_path, capsys, argv, words):
    smollm2_path()
    out = tmp_path / "out"
    assert cli.main(["generate", PROMPT, *argv, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and words in captured.err and len(captured.err.splitlines()) == 1
    assert not out.exists() or not any(p for p in out.iterdir() if not p.name.startswith("."))


def test_a_prompt_that_fills_the_context_is_refused(tmp_path, capsys):
    build_llama(tmp_path, *SHAPES["grouped"])  # 256 positions
    model = load_model(tmp_path)
    long = " ".join(["the river bank"] * 200)
    assert len(model.encode(" ".join(["the river bank"] * 60))) < 256 < len(
        model.tokenizer.encode(long).ids)
    assert cli.main(["generate", long, "--model", str(tmp_path)]) == 2
    assert "tokens long" in capsys.readouterr().err
    nearly = " ".join(["the river bank"] * 60)
    room = 256 - len(model.encode(nearly))
    assert cli.main(["generate", nearly, "--model", str(tmp_path), "--tokens",
                     str(room + 1)]) == 2
    assert f"from 1 to {room}" in capsys.readouterr().err
    assert cache_bytes(model.config) == 2 * 2 * 2 * 8 * 4


def test_a_decoder_without_a_cache_writes_the_same_greedy_tokens(tmp_path, capsys):
    """GPT-2's family has no KV cache: each step runs the whole sequence; the ids are still
    the argmax after each prefix."""
    from test_real_gpt2 import build_gpt2

    build_gpt2(tmp_path, n_layer=2, n_head=2, n_positions=40)
    model = load_model(tmp_path)
    assert cli.main(["generate", "the river", "--model", str(tmp_path), "--tokens", "5",
                     "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    ids = list(report["prompt_ids"])
    for new in report["new_ids"]:
        assert new == int(np.argmax(model.run(ids).logits[-1]))
        ids.append(new)
    assert len(report["new_ids"]) == 5


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_the_page_has_no_serious_accessibility_violation(smollm2, tmp_path, browser, width,
                                                         height):
    from browser import axe_violations

    assert cli.main(["generate", PROMPT, "--tokens", "3", "--out", str(tmp_path)]) == 0
    page = (opened := open_page(browser, tmp_path / "generation.html", width=width,
                                height=height, bypass_csp=True)).page
    assert axe_violations(page) == []
    page.click("#next")
    page.select_option("#head", "-1")
    assert axe_violations(page) == []
    assert opened.errors == []
