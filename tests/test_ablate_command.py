"""`attention-workshop ablate` as a user runs it: on a tiny GPT-2 built here, the JSON's losses
equal torch's cross entropy on transformers' logits with the same heads zeroed by a pre-hook
on c_proj (tests/interventions_reference.py); the text table prints the same numbers; every
bad input is one line on stderr, exit 2, nothing on stdout."""

import json

import numpy as np
import pytest
from head_reference import run_cli
from interventions_reference import intervened, reference

from attention_workshop.commands.ablate import parse_heads
from attention_workshop.errors import WorkshopError

torch = pytest.importorskip("torch")




def torch_losses(model, ids, heads, d_head):  # -> {"first", "repeat"}: their cross entropy
    with intervened(model, d_head, heads):
        logits = torch.tensor(reference(model, ids)[2], dtype=torch.float64)
    half = len(ids) // 2
    target = torch.tensor(ids)

    def ce(rows):
        return float(torch.nn.functional.cross_entropy(logits[rows], target[rows + 1]))

    return {"first": ce(torch.arange(0, half - 1)), "repeat": ce(torch.arange(half, 2 * half - 1))}


def test_json_losses_equal_transformers_under_the_same_hook(tiny_decoder, capsys):
    folder, theirs = tiny_decoder
    code, out, err = run_cli(["ablate", "--model", str(folder), "--heads", "L1H2,L2H0",
                              "--format", "json"], capsys)
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert data["heads"] == [[1, 2], [2, 0]]
    ids = data["ids"]
    assert len(ids) == 100 and ids[:50] == ids[50:]  # 50 random ids, repeated once
    d_head = 32 // 4
    for key, heads in (("loss_before", []), ("loss_after", [(1, 2), (2, 0)])):
        expected = torch_losses(theirs, ids, heads, d_head)
        assert data[key] == pytest.approx(expected, abs=1e-4), key
    assert len(data["random_loss_after"]) == len(data["random_heads"]) == 5
    for drawn, losses in zip(data["random_heads"], data["random_loss_after"], strict=True):
        assert len(drawn) == 2 and [1, 2] not in drawn and [2, 0] not in drawn
        assert losses == pytest.approx(torch_losses(theirs, ids, [tuple(h) for h in drawn],
                                                    d_head), abs=1e-4)


def test_text_table_and_text_option(tiny_decoder, capsys):
    folder, theirs = tiny_decoder
    code, out, err = run_cli(["ablate", "--model", str(folder), "--heads", "L0H1",
                              "--text", "the river bank by the money bank"], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert "switched off (zero): L0H1" in lines[1]
    row = next(line for line in lines if line.strip().startswith("these 1 heads off"))
    code, out, _ = run_cli(["ablate", "--model", str(folder), "--heads", "L0H1", "--text",
                            "the river bank by the money bank", "--format", "json"], capsys)
    data = json.loads(out)
    ids = data["ids"]
    with intervened(theirs, 8, [(0, 1)]):
        logits = torch.tensor(reference(theirs, ids)[2])
    expected = float(torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:])))
    assert data["loss_after"]["text"] == pytest.approx(expected, abs=1e-4)
    assert row.split()[-1] == f"{data['loss_after']['text']:.2f}"


def test_kind_top_takes_the_patterns_heads(tiny_decoder, capsys):
    folder, _ = tiny_decoder
    code, out, _ = run_cli(["ablate", "--model", str(folder), "--kind", "previous", "--top", "2",
                            "--format", "json"], capsys)
    assert code == 0
    code, ranked, _ = run_cli(["heads", "--model", str(folder), "--kind", "previous", "--top",
                               "2", "--seeds", "1", "--format", "json"], capsys)
    top = [[h["layer"], h["head"]] for h in json.loads(ranked)["top"]]
    assert json.loads(out)["heads"] == top


@pytest.mark.parametrize(("argv", "message"), [
    (["--heads", "L99H0"], "head L99H0 is past the model: it has layers 0-2 and heads 0-3"),
    (["--heads", "L1H"], "'L1H' is not a head; write L<layer>H<head>"),
    (["--heads", "18:6"], "'18:6' is not a head"),
    (["--heads", ""], "--heads names no head"),
    (["--heads", " , "], "--heads names no head"),
    (["--heads", "L-1H0"], "L-1H0 has a negative number; layers and heads count from 0"),
    (["--heads", "L1H0,l1h0"], "L1H0 is listed twice; list each head once"),
    (["--kind", "induction"], "--kind induction needs --top K"),
    (["--kind", "sink", "--top", "0"], "--top 0 switches no head off"),
    (["--top", "3"], "say which heads"),
    ([], "say which heads: --heads L18H6,L17H4, or --kind induction --top 3"),
    (["--heads", "L0H0", "--kind", "sink", "--top", "1"], "either --heads or --kind"),
    (["--heads", "L0H0", "--text", "bank " * 200], "but the model has positions for 128"),
    (["--heads", "L0H0", "--text", "a"], "a loss needs a next token"),
    (["--heads", "L0H0", "--text", ""], "empty"),
    (["--heads", "L1H-1"], "L1H-1 has a negative number"),
    (["--kind", "induction", "--top", "-2"], "--top -2 switches no head off"),
    (["--kind", "sink", "--top", "7"], "7 heads switched off leave 5 others to draw the random "
                                       "control of as many from"),  # 12 heads: at most 6
    (["--heads", "L0H0,L0H1,L0H2,L0H3,L1H0,L1H1,L1H2"], "give at most 6"),
    (["--heads", "L0H0", "--how", "half"], "argument --how: invalid choice: 'half'"),
    (["--map", "--how", "half"], "argument --how: invalid choice: 'half'"),
])
def test_bad_input_is_one_line_and_exit_2(tiny_decoder, capsys, argv, message):
    code, out, err = run_cli(["ablate", "--model", str(tiny_decoder[0]), *argv], capsys)
    assert (code, out) == (2, "")
    assert message in err and err.count("\n") == 1, err


def test_an_encoder_is_refused(capsys):
    from attention_workshop.real import catalog

    try:
        catalog.minilm_folder()
    except WorkshopError:
        pytest.skip("MiniLM's weights are not installed")
    code, out, err = run_cli(["ablate", "--model", "minilm", "--heads", "L0H2"], capsys)
    assert (code, out) == (2, "") and "minilm is an encoder" in err


def test_parse_heads_by_hand():
    assert parse_heads("L18H6, l17h4,L0H0") == [(18, 6), (17, 4), (0, 0)]
    with pytest.raises(WorkshopError, match="not a head"):
        parse_heads("L18H6,,L1H1")
    assert np.array(parse_heads("L2H3")).tolist() == [[2, 3]]


def test_generate_ablate_writes_transformers_greedy_ids_under_the_hook(tiny_decoder, capsys):
    from interventions_reference import greedy

    folder, theirs = tiny_decoder
    heads = [(1, 2), (2, 0), (0, 1)]
    code, out, err = run_cli(["generate", "the river bank", "--model", str(folder), "--tokens",
                              "12", "--ablate", "L1H2,L2H0,L0H1", "--format", "json"], capsys)
    assert (code, err) == (0, "")
    data = json.loads(out)
    with intervened(theirs, 8, heads):
        expected = greedy(theirs, data["prompt_ids"], 12)
    assert data["new_ids"] == expected
    assert data["new_ids"] != greedy(theirs, data["prompt_ids"], 12)  # the heads mattered


@pytest.mark.parametrize(("heads", "message"), [
    ("L9H0", "--ablate: head L9H0 is past the model"),
    ("L1", "--ablate: 'L1' is not a head"),
    ("", "--ablate names no head"),
])
def test_generate_ablate_bad_heads(tiny_decoder, capsys, heads, message):
    code, out, err = run_cli(["generate", "the river bank", "--model", str(tiny_decoder[0]),
                              "--tokens", "2", "--ablate", heads], capsys)
    assert (code, out) == (2, "")
    assert message in err and err.count("\n") == 1, err
