"""`attention-workshop real SENTENCE --ablate L0H1,...` as a user runs it, on a tiny GPT-2 built
here: the JSON's attentions, a text table and --vs's cosines are transformers' with the same
heads zeroed by a pre-hook on c_proj (tests/interventions_reference.py); the text says which
heads are off; bad values are refused as generate refuses them (one line, exit 2)."""

import json

import numpy as np
import pytest
from head_reference import run_cli
from interventions_reference import intervened, reference

from attention_workshop.report import matrix_lines

torch = pytest.importorskip("torch")

HEADS = [(0, 1), (1, 2)]
D_HEAD = 8  # n_embd 32 over 4 heads




def test_json_attentions_are_the_ablated_runs(tiny_decoder, capsys):
    folder, theirs = tiny_decoder
    code, out, err = run_cli(["real", "the river bank", "--model", str(folder), "--ablate",
                              "L0H1,L1H2", "--format", "json"], capsys)
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert data["ablated"] == [[0, 1], [1, 2]]
    with intervened(theirs, D_HEAD, HEADS):
        ablated = reference(theirs, data["ids"])[0]  # [L, H, T, T]
    plain = reference(theirs, data["ids"])[0]
    ours = np.array(data["attentions"])
    np.testing.assert_allclose(ours, ablated, rtol=0, atol=1e-5)
    assert np.abs(ours[1:] - plain[1:]).max() > 1e-3  # the heads changed the later layers
    np.testing.assert_allclose(ours[0], plain[0], rtol=0, atol=1e-5)  # and not their own


def test_text_says_which_heads_are_off_and_shows_their_run(tiny_decoder, capsys):
    folder, theirs = tiny_decoder
    code, out, err = run_cli(["real", "the river bank", "--model", str(folder), "--ablate",
                              "L0H1,L1H2", "--layer", "2", "--head", "0"], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[1] == ("switched off (outputs zeroed): L0H1, L1H2; every number below is the "
                        "run without them")
    _, js, _ = run_cli(["real", "the river bank", "--model", str(folder), "--format", "json"],
                       capsys)
    data = json.loads(js)
    with intervened(theirs, D_HEAD, HEADS):
        ablated = reference(theirs, data["ids"])[0]
    table = matrix_lines(data["tokens"], data["tokens"], ablated[2, 0], indent=2,
                         label_width=7, width=8)
    start = lines.index(table[0])
    assert lines[start:start + len(table)] == table
    code, plain, _ = run_cli(["real", "the river bank", "--model", str(folder)], capsys)
    assert "switched off" not in plain


def test_vs_runs_both_sentences_without_the_heads(tiny_decoder, capsys):
    folder, theirs = tiny_decoder
    code, out, err = run_cli(["real", "the river bank", "--model", str(folder), "--ablate",
                              "L0H1,L1H2", "--vs", "the money bank", "--word", "bank",
                              "--format", "json"], capsys)
    assert (code, err) == (0, "")
    vs = json.loads(out)["vs"]
    other_ids = json.loads(run_cli(["real", "the money bank", "--model", str(folder),
                                    "--format", "json"], capsys)[1])["ids"]
    ids = json.loads(run_cli(["real", "the river bank", "--model", str(folder), "--format",
                              "json"], capsys)[1])["ids"]
    with intervened(theirs, D_HEAD, HEADS):
        # the word's vector: the mean of its tokens' hidden states [L + 1, D]
        a = reference(theirs, ids)[1][:, vs["positions"]].astype(np.float64).mean(axis=1)
        b = reference(theirs, other_ids)[1][:, vs["other_positions"]].astype(np.float64).mean(
            axis=1)
    cosines = (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    assert cosines[1:].min() < 0.999  # the sentences differ after the embeddings
    np.testing.assert_allclose(vs["cosines"], cosines, atol=1e-5)
    a = reference(theirs, ids)[1][:, vs["positions"]].astype(np.float64).mean(axis=1)
    b = reference(theirs, other_ids)[1][:, vs["other_positions"]].astype(np.float64).mean(axis=1)
    whole = (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    assert np.abs(whole - cosines).max() > 1e-3  # the heads' absence shows in the cosines


@pytest.mark.parametrize(("extra", "message"), [
    (["--ablate", "L9H0"], "--ablate: head L9H0 is past the model: it has layers 0-2"),
    (["--ablate", "L1"], "--ablate: 'L1' is not a head"),
    (["--ablate", "18:6"], "--ablate: '18:6' is not a head"),
    (["--ablate", ""], "--ablate names no head"),
    (["--ablate", "L-1H0"], "--ablate: L-1H0 has a negative number"),
    (["--ablate", "L0H0,l0h0"], "--ablate: L0H0 is listed twice"),
    (["--ablate", "L0H0", "--out", "OUT"], "--ablate shows the run with those heads off"),
])
def test_bad_ablate_is_one_line_exit_2_nothing_written(tiny_decoder, capsys, tmp_path, monkeypatch,
                                                       extra, message):
    monkeypatch.chdir(tmp_path)
    model = str(tiny_decoder[0])
    code, out, err = run_cli(["real", "the river bank", "--model", model, *extra], capsys)
    assert (code, out) == (2, "")
    assert message in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []


def test_the_api_takes_a_numpy_array_of_heads(tiny_decoder):
    from attention_workshop.real import load_model

    folder, theirs = tiny_decoder
    model = load_model(str(folder))
    ids = model.encode("the river bank")
    given = model.run(ids, ablate=np.array(HEADS))  # numpy's truthiness once made this fail
    assert np.array_equal(given.attentions, model.run(ids, ablate=HEADS).attentions)
    with intervened(theirs, D_HEAD, HEADS):
        np.testing.assert_allclose(given.attentions, reference(theirs, ids)[0], rtol=0,
                                   atol=1e-5)
