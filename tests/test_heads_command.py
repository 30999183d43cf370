"""`attention-workshop heads` as a user runs it: JSON and text against transformers' own
attentions on the same ids, progress lines, and one-line errors."""

import io
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from head_reference import minilm_bert, reference_scores, torch_run
from real_folder import write_folder

from attention_workshop import cli
from attention_workshop.commands import heads as heads_command
from attention_workshop.real import catalog
from attention_workshop.real.analysis import head_patterns

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def minilm():  # -> the installed MiniLM's folder, or skip
    from attention_workshop.errors import WorkshopError

    try:
        return catalog.minilm_folder()
    except WorkshopError:
        pytest.skip("MiniLM's weights are not installed")


def run_cli(argv, capsys):  # -> (exit code, stdout, stderr)
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_commands_kinds_are_head_patterns_kinds():
    assert heads_command.KINDS == tuple(head_patterns.KINDS)
    assert heads_command.SEEDS == head_patterns.SEEDS


@pytest.mark.parametrize("kind", list(head_patterns.KINDS))
def test_json_scores_equal_transformers_attentions_on_its_ids(minilm, kind, capsys):
    code, out, err = run_cli(["heads", "--model", "minilm", "--kind", kind, "--top", "4",
                              "--seeds", "1", "--format", "json"], capsys)
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert sorted(data) == sorted(["model", "kind", "ids", "seeds", "layers", "heads", "chance",
                                   "scores", "spread", "top", "loss_first", "loss_second"])
    assert data["seeds"] == [0] and not np.any(data["spread"])  # one sequence: no spread
    assert data["chance"] == pytest.approx(1 / 101, abs=1e-12)  # an encoder's row: T tokens
    assert (data["model"], data["kind"], data["layers"], data["heads"]) == ("minilm", kind, 6, 12)
    ids = data["ids"]
    assert len(ids) == 101 and ids[0] == 101  # [CLS], then 50 ids twice
    assert ids[1:51] == ids[51:] and not {0, 100, 101, 102, 103} & set(ids[1:])
    attentions, _ = torch_run(minilm_bert(), ids)
    expected = reference_scores(attentions, ids, kind, lead=1)
    np.testing.assert_allclose(data["scores"], expected, rtol=0, atol=1e-4)
    best = sorted((-expected[lay, h], lay, h) for lay in range(6) for h in range(12))[:4]
    got = [(t["layer"], t["head"]) for t in data["top"]]
    assert got == [(lay, h) for _, lay, h in best]
    assert data["loss_first"] is None and data["loss_second"] is None  # an encoder


def test_text_has_the_ranked_table_the_grid_and_says_why_no_loss(minilm, capsys):
    code, out, _ = run_cli(["heads", "--model", "minilm", "--kind", "previous", "--top", "3",
                            "--seeds", "1", "--grid"], capsys)
    assert code == 0
    lines = out.splitlines()
    ids = head_patterns.repeated_ids(30522, {0, 100, 101, 102, 103}, lead=101)
    attentions, _ = torch_run(minilm_bert(), ids)
    expected = reference_scores(attentions, ids, "previous", lead=1)
    assert lines[1] == "previous: each token -> the token just before it"
    assert lines[2] == "on [CLS] + 50 random tokens repeated once (seed 0): 101 ids each " \
                       "(--format json lists them)"
    start = lines.index("  rank  layer  head  score") + 1
    order = sorted((-expected[lay, h], lay, h) for lay in range(6) for h in range(12))
    shown = lines[start:start + 3]
    for n, (line, (score, lay, h)) in enumerate(zip(shown, order[:3], strict=True)):
        assert line.split() == [str(n + 1), str(lay), str(h), f"{-score:.3f}"]
    grid = lines.index("every head (rows: layers, columns: heads):") + 1
    assert lines[grid].split() == [f"H{h}" for h in range(12)]
    for lay in range(6):
        row = lines[grid + 1 + lay].split()
        assert row[0] == f"L{lay}"
        np.testing.assert_allclose([float(v) for v in row[1:]], expected[lay], atol=0.00051)
    assert lines[4] == "chance (a head spreading every row evenly over what it sees): 0.010"
    assert lines[-3].startswith("no copy loss: minilm is an encoder")
    assert not any(line.startswith("note:") for line in lines)  # previous heads exist in it
    lay, h = order[0][1:]
    assert lines[-1] == ('one head on a sentence: attention-workshop real "the river bank" '
                         f"--model minilm --layer {lay} --head {h}")


class Terminal(io.StringIO):  # a stderr that says it is a terminal
    def isatty(self):
        return True


def test_progress_goes_to_stderr_only_on_a_terminal(minilm, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert cli.main(["heads", "--kind", "sink", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "sink"  # stdout stays pure JSON
    assert sys.stderr.getvalue().splitlines() == [
        f"loading model 'minilm' from {minilm} ...",  # sink's default: MiniLM has sinks
        "scoring 6 layers x 12 heads by 'sink' on 5 sequences ..."]


@pytest.mark.parametrize(("argv", "message"), [
    (["--kind", "copy"], "argument --kind: invalid choice: 'copy'"),
    (["--kind", "sink", "--top", "0"], "--top 0 shows no head; give a number of heads, at "
                                       "least 1"),
    (["--kind", "sink", "--top", "-3"], "--top -3 shows no head"),
    (["--kind", "sink", "--top", "many"], "argument --top: invalid int value: 'many'"),
    (["--top", "3"], "the following arguments are required: --kind"),
    (["--kind", "sink", "--seeds", "0"], "--seeds 0 is out of range: give 1 to 100 random "
                                         "sequences"),
    (["--kind", "sink", "--seeds", "101"], "--seeds 101 is out of range"),
])
def test_bad_options_are_one_line_and_exit_2(argv, message, capsys):
    code, out, err = run_cli(["heads", *argv], capsys)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and message in err


@pytest.mark.parametrize(("sizes", "message"), [
    ({"vocab_size": 300}, "the head patterns need 100 positions (50 random tokens repeated "
                          "once), but"),
    ({}, "the model has 9 ordinary tokens, but the head patterns need 50 different ones"),
])
def test_a_model_too_small_for_the_sequence_is_one_line(tmp_path, sizes, message, capsys):
    folder = write_folder(tmp_path / "m", "gpt2", **sizes)  # 6 positions
    code, out, err = run_cli(["heads", "--model", str(folder), "--kind", "induction"], capsys)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and message in err


@pytest.mark.skipif(shutil.which("attention-workshop") is None, reason="script not installed")
def test_the_installed_script(minilm):
    done = subprocess.run(["attention-workshop", "heads", "--kind", "sink", "--top", "2",
                           "--format", "json"], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    assert len(json.loads(done.stdout)["top"]) == 2


def test_a_causal_model_shows_its_copy_loss(tmp_path, capsys):
    from head_reference import build_causal_gpt2

    reference = build_causal_gpt2(tmp_path / "gpt2")
    code, out, _ = run_cli(["heads", "--model", str(tmp_path / "gpt2"), "--kind", "induction",
                            "--seeds", "1", "--format", "json"], capsys)
    data = json.loads(out)
    ids = data["ids"]
    attentions, logits = torch_run(reference, ids)
    np.testing.assert_allclose(data["scores"], reference_scores(attentions, ids, "induction", 0),
                               rtol=0, atol=1e-4)
    assert data["chance"] == pytest.approx(sum(1 / (i + 1) for i in range(50, 100)) / 50)
    targets, cross = torch.tensor(ids), torch.nn.functional.cross_entropy
    first = cross(logits[0:49], targets[1:50]).item()
    second = cross(logits[50:99], targets[51:100]).item()
    assert (data["loss_first"], data["loss_second"]) == pytest.approx((first, second), abs=1e-4)
    code, out, _ = run_cli(["heads", "--model", str(tmp_path / "gpt2"), "--kind", "induction",
                            "--seeds", "1"], capsys)
    assert code == 0
    assert f"copying: next-token loss {first:.2f} nats on the first half (new tokens), " \
           f"{second:.2f} on the repeat" in " ".join(out.splitlines())


def test_several_sequences_give_the_mean_the_spread_and_the_top_k_only(tmp_path, capsys):
    """--seeds 3: "ids" is a list of the 3 sequences, "scores" the mean of transformers'
    scores on them, "spread" their sample standard deviation; the text shows the top K rows
    with their spread and how often each sequence's top head was the same, and no grid."""
    import statistics

    from head_reference import build_causal_gpt2

    reference = build_causal_gpt2(tmp_path / "gpt2", 2, 4, seed=3)
    argv = ["heads", "--model", str(tmp_path / "gpt2"), "--kind", "previous", "--top", "3",
            "--seeds", "3"]
    code, out, _ = run_cli([*argv, "--format", "json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["seeds"] == [0, 1, 2] and len(data["ids"]) == 3
    theirs = [reference_scores(torch_run(reference, ids)[0], ids, "previous", 0)
              for ids in data["ids"]]
    cells = np.stack(theirs)  # [3, 2, 4]
    mean = [[statistics.fmean(cells[:, lay, h]) for h in range(4)] for lay in range(2)]
    spread = [[statistics.stdev(cells[:, lay, h]) for h in range(4)] for lay in range(2)]
    np.testing.assert_allclose(data["scores"], mean, rtol=0, atol=1e-4)
    np.testing.assert_allclose(data["spread"], spread, rtol=0, atol=1e-4)
    code, out, _ = run_cli(argv, capsys)
    lines = out.splitlines()
    start = lines.index("  rank  layer  head  score  spread") + 1
    order = sorted((-mean[lay][h], lay, h) for lay in range(2) for h in range(4))[:3]
    for n, (line, (m, lay, h)) in enumerate(zip(lines[start:start + 3], order, strict=True)):
        assert line.split() == [str(n + 1), str(lay), str(h), f"{-m:.3f}",
                                f"{spread[lay][h]:.3f}"]
    assert lines[start + 3] == ""  # the top 3, nothing more: no grid without --grid
    assert "every head (rows: layers, columns: heads" not in out
    firsts = [tuple(int(i) for i in np.unravel_index(np.argmax(t), t.shape)) for t in theirs]
    shown = next(line for line in lines if line.startswith("each sequence on its own"))
    for lay, h in set(firsts):  # each sequence's own top head, and on how many it was top
        assert f"L{lay} H{h} on {firsts.count((lay, h))}" in shown.split("; its second")[0]


def test_a_decoder_kind_with_no_model_scores_smollm2_and_an_encoder_says_it_has_none(
        minilm, capsys):
    assert [heads_command.model_for(k) for k in KIND_ORDER] == ["smollm2", "smollm2", "minilm"]
    assert heads_command.model_for("induction", "minilm") == "minilm"
    code, out, _ = run_cli(["heads", "--model", "minilm", "--kind", "induction", "--seeds", "1",
                            "--top", "2"], capsys)
    note = [line for line in out.splitlines() if line.startswith("note:")]
    assert code == 0 and len(note) == 1 and "--model smollm2" in note[0]
    assert "encoder" in note[0]


KIND_ORDER = ("induction", "previous", "sink")
