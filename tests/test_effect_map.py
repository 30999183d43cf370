"""`ablate --map` and real/analysis/effect_map.py: each head switched off alone, the loss after.

On a tiny GPT-2 built here, every cell of the JSON grid equals torch's cross entropy on
transformers' logits with that head zeroed by a pre-hook on c_proj, and several equal our own
ablated run done the plain way (model.run(ids, ablate=[...]), every layer run, the loss
worked here with numpy's log-softmax). On SmolLM2 (layers 16, 18 and 29),
cells equal the plain way and one equals LlamaForCausalLM under an o_proj pre-hook; the
strongest cells are [S14]'s top induction heads, found by their attention pattern alone.
Bad input: one line on stderr, exit 2, nothing written."""

import json

import numpy as np
import pytest
from head_reference import run_cli
from interventions_reference import intervened, reference

from attention_workshop import cli

torch = pytest.importorskip("torch")




def repeat_rows(ids, lead=0):  # the positions whose next token is the repeat's, by hand
    half = (len(ids) - lead) // 2  # 100 ids: rows 50..98 predict ids 51..99
    return np.arange(lead + half, lead + 2 * half - 1)


def torch_loss(model, ids, heads, d_head, rows):  # transformers, heads zeroed -> nats
    with intervened(model, d_head, heads):
        logits = torch.tensor(reference(model, ids)[2], dtype=torch.float64)
    return float(torch.nn.functional.cross_entropy(logits[rows], torch.tensor(ids)[rows + 1]))


def numpy_loss(logits, ids, rows):  # [T, V] -> mean -log softmax(logits)[next id], by numpy
    z = np.asarray(logits, dtype=np.float64)[rows]
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-log_p[np.arange(len(rows)), np.asarray(ids)[rows + 1]].mean())


def test_every_cell_equals_transformers_under_the_same_hook(tiny_decoder, capsys):
    folder, theirs = tiny_decoder
    code, out, err = run_cli(["ablate", "--model", str(folder), "--map", "--format", "json"],
                             capsys)
    assert (code, err) == (0, "")
    data = json.loads(out)
    ids, rows = data["ids"], repeat_rows(data["ids"])
    assert len(ids) == 100 and ids[:50] == ids[50:] and data["part"] == "repeat"
    assert data["loss_before"] == pytest.approx(torch_loss(theirs, ids, [], 8, rows), abs=1e-4)
    after = np.array(data["loss_after"])
    assert after.shape == (3, 4)
    for layer in range(3):
        for head in range(4):
            assert after[layer, head] == pytest.approx(
                torch_loss(theirs, ids, [(layer, head)], 8, rows), abs=1e-4), (layer, head)
    assert np.allclose(data["effect"], after - data["loss_before"], atol=1e-12)
    ranked = sorted(((after[lay, h] - data["loss_before"], lay, h) for lay in range(3)
                     for h in range(4)), reverse=True)
    assert [(t["layer"], t["head"]) for t in data["top"]] == [(lay, h) for _, lay, h in ranked[
        :len(data["top"])]]


def test_cells_equal_the_plain_way_and_the_text_option(tiny_decoder):
    from attention_workshop.real import load_model
    from attention_workshop.real.analysis.effect_map import effect_map

    model = load_model(str(tiny_decoder[0]))
    ids = model.encode("the river bank by the money bank, a loan from the river bank")
    for how in ("zero", "mean"):
        found = effect_map(model, ids, None, how)
        rows = np.arange(len(ids) - 1)  # a text: every next token
        assert found.part == "text"
        assert found.before == pytest.approx(numpy_loss(model.run(ids).logits, ids, rows),
                                             abs=1e-6)
        for layer, head in ((0, 0), (1, 3), (2, 1)):
            whole = model.run(ids, ablate=[(layer, head)], how=how)  # every layer run again
            assert found.after[layer, head] == pytest.approx(
                numpy_loss(whole.logits, ids, rows), abs=1e-6), (how, layer, head)


def test_text_report_and_the_figure(tiny_decoder, capsys, tmp_path):
    folder, _ = tiny_decoder
    out_dir = tmp_path / "map"
    code, out, err = run_cli(["ablate", "--model", str(folder), "--map", "--out", str(out_dir)],
                             capsys)
    assert code == 0 and err == f"wrote {out_dir / 'effect_map.png'}\n"
    assert (out_dir / "effect_map.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, js, _ = run_cli(["ablate", "--model", str(folder), "--map", "--format", "json"], capsys)
    data = json.loads(js)
    lines = out.splitlines()
    assert lines[1] == ("each head switched off alone (zero), 12 runs; next-token loss on the "
                        "repeat of 50 random tokens (seed 0) repeated once")
    assert lines[2].startswith(f"every head on: {data['loss_before']:.2f} nats")
    first = data["top"][0]
    assert lines[5].startswith(f"  L{first['layer']}H{first['head']} {first['effect']:+.2f}")
    for layer in range(3):  # each layer's line: its 3 strongest heads, largest first
        line = next(x for x in lines if x.startswith(f"  L{layer} "))
        effect = np.array(data["effect"][layer])
        best = sorted(range(4), key=lambda h: -effect[h])[:3]
        assert line.split()[1:] == [part for h in best for part in (f"H{h}",
                                                                    f"{effect[h]:+.2f}")]
    assert lines[-1].startswith("12 ablated runs in ")


def test_the_figure_is_drawn_from_the_map(tmp_path):
    from attention_workshop.figures.interventions import effect_map_figure
    from attention_workshop.real.analysis.effect_map import EffectMap

    after = np.array([[2.0, 5.0, 1.5], [1.0, 3.0, 2.0]])  # before 2: effects 0, 3, -0.5 / ...
    found = EffectMap(model="m", how="zero", part="repeat", before=2.0, after=after,
                      seconds=0.0, cpu_seconds=0.0)
    assert found.top(2) == [(0, 1, 3.0), (1, 1, 1.0)]
    fig = effect_map_figure(found, None)
    ax = fig.axes[0]
    shown = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text()
             for t in ax.texts}
    assert shown == {(0, 1): "3.00", (1, 1): "1.00"}  # positive effects only: 0 and -0.5 bare
    assert ax.images[0].get_clim() == (-3.0, 3.0)  # 0 is the scale's middle (white)
    assert ax.get_xlabel() == "head (from 0)" and ax.get_ylabel() == "layer (from 0)"
    assert fig.axes[1].get_ylabel() == "rise in next-token loss (nats)"
    assert "each head switched off alone" in ax.get_title()


@pytest.mark.parametrize(("argv", "message"), [
    (["--map", "--heads", "L0H0"], "--map switches every head off in turn: give it without "
                                   "--heads, --kind or --top"),
    (["--map", "--kind", "induction", "--top", "2"], "give it without --heads, --kind or --top"),
    (["--map", "--top", "2"], "give it without --heads"),
    (["--heads", "L0H0", "--out", "OUT"], "--out draws the layer x head map: give it with --map"),
    (["--map", "--text", "bank " * 200, "--out", "OUT"], "but the model has positions for 128"),
    (["--map", "--text", "a", "--out", "OUT"], "a loss needs a next token"),
    (["--map", "--text", "", "--out", "OUT"], "empty"),
    (["--map", "--out", ""], "--out '' names no folder"),
])
def test_bad_map_input_is_one_line_exit_2_nothing_written(tiny_decoder, capsys, tmp_path,
                                                           monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["ablate", "--model", str(tiny_decoder[0]), *argv], capsys)
    assert (code, out) == (2, "")
    assert message in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []  # no OUT folder, no stage left behind


def test_an_out_that_is_a_file_is_refused_and_kept(tiny_decoder, capsys, tmp_path):
    target = tmp_path / "taken"
    target.write_text("mine")
    model = str(tiny_decoder[0])
    code, out, err = run_cli(["ablate", "--model", model, "--map", "--out", str(target)],
                             capsys)
    assert (code, out) == (2, "") and err.count("\n") == 1 and "not a folder" in err
    assert target.read_text() == "mine"


def test_an_encoder_is_refused(capsys, tmp_path):
    from attention_workshop.errors import WorkshopError
    from attention_workshop.real import catalog

    try:
        catalog.minilm_folder()
    except WorkshopError:
        pytest.skip("MiniLM's weights are not installed")
    code, out, err = run_cli(["ablate", "--model", "minilm", "--map", "--out",
                              str(tmp_path / "o")], capsys)
    assert (code, out) == (2, "") and "minilm is an encoder" in err
    assert not (tmp_path / "o" / "effect_map.png").exists()


def test_smollm2_cells_and_its_induction_heads(smollm2_model):
    from smollm2_reference import smollm2_path

    from attention_workshop.real import load_model
    from attention_workshop.real.analysis.effect_map import effect_map
    from attention_workshop.real.analysis.head_patterns import heads, sequence_for

    smollm2_path()
    model = load_model("smollm2")  # float32: the accelerator, as the command runs it
    ids, lead = sequence_for(model)
    rows = repeat_rows(ids, lead)
    found = effect_map(model, ids, lead, layers=[16, 18, 29])
    assert np.isnan(found.after[17]).all() and not np.isnan(found.after[[16, 18, 29]]).any()
    for layer, head in ((18, 6), (16, 3), (29, 4)):
        whole = model.run(ids, ablate=[(layer, head)])  # every layer run again
        assert found.after[layer, head] == pytest.approx(numpy_loss(whole.logits, ids, rows),
                                                         abs=1e-4), (layer, head)
    assert found.before == pytest.approx(torch_loss(smollm2_model, ids, [], 64, rows), abs=1e-3)
    assert found.after[18, 6] == pytest.approx(torch_loss(smollm2_model, ids, [(18, 6)], 64,
                                                          rows), abs=1e-3)
    # the strongest cells are the heads [S14] finds by their attention patterns alone: the
    # previous-token head below the induction layers ([S19]), then induction heads
    n = model.config.n_layer * model.config.n_head
    previous = [(lay, h) for lay, h, _ in heads(model, "previous", n).top if lay < 17]
    induction = [(lay, h) for lay, h, _ in heads(model, "induction", 5).top]
    (first, *rest) = [(lay, h) for lay, h, _ in found.top(3)]
    assert first == previous[0] == (16, 0)
    assert set(rest) <= set(induction) and (18, 6) in rest
    assert found.effect[16, 0] > found.effect[18, 6] > 1.0  # each alone costs over a nat


def test_progress_on_a_terminal_and_another_figure_format(tiny_decoder, capsys, monkeypatch,
                                                          tmp_path):
    import io
    import sys

    class Terminal(io.StringIO):  # a stderr that says it is a terminal
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    model = str(tiny_decoder[0])
    code = cli.main(["ablate", "--model", model, "--map", "--out", str(tmp_path / "o"),
                     "--figure-format", "svg"])
    err = sys.stderr.getvalue().splitlines()
    assert code == 0
    assert [line.split(" (")[0] for line in err if line.startswith("layer ")] == [
        f"layer {i}/3: 4 heads switched off one at a time" for i in (1, 2, 3)]
    assert err[-1] == f"wrote {tmp_path / 'o' / 'effect_map.svg'}"
    assert (tmp_path / "o" / "effect_map.svg").read_text().lstrip().startswith("<?xml")
