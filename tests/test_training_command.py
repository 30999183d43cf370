"""`attention-workshop train`: run as a user runs it (cli.main in-process), its JSON against
the training functions, bad input refused in one line with exit 2 and nothing written."""

import json

import numpy as np
import pytest

from attention_workshop import cli
from attention_workshop.embeddings import SENT_RIVER, embed
from attention_workshop.training import induction, wiring


def test_wiring_json_is_the_training(capsys):
    assert cli.main(["train", "wiring", "--steps", "40", "--seed", "2", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    w_q, w_k, losses, _ = wiring.train(*wiring.start(seed=2),
                                       wiring.make_batch(wiring.sentences(wiring.TRAIN)), 40)
    assert report["step"] == list(range(41)) and report["loss"] == losses.tolist()
    assert report["W_Q"] == w_q.tolist() and report["W_K"] == w_k.tolist()
    learned = wiring.bank_weights(w_q, w_k, embed(SENT_RIVER)[None])[0][0, 2]
    assert report["bank"][SENT_RIVER]["learned"] == learned.tolist()
    np.testing.assert_allclose(report["bank"][SENT_RIVER]["wired"], [0.159, 0.5, 0.341],
                               atol=5e-4)  # Module 2's lesson numbers


def test_induction_text_shows_progress_and_writes_figures(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["train", "induction", "--steps", "30", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    _, snaps = induction.train(steps=30)
    assert [line.split()[0] for line in lines[1:4]] == ["0", "25", "30"]
    assert f"{snaps[-1].second_copy:5.2f}" in lines[3]
    assert lines[4].startswith("notice: ")
    assert sorted(p.name for p in out.iterdir() if p.suffix == ".png") == [
        "induction_forms.png", "induction_patterns.png"]


def test_induction_json_keys(capsys):
    assert cli.main(["train", "induction", "--steps", "25", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["step"] == [0, 25]
    assert np.shape(report["induction"]) == np.shape(report["previous"]) == (2, 2, 2)
    assert len(report["second_copy_loss"]) == len(report["loss"]) == 2


def exit_code(argv):  # main's return, or argparse's exit for a usage error
    try:
        return cli.main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize("argv", [["--steps", "0"], ["--steps", "-1"], ["--steps", "10**9"],
                                  ["--steps", "999999"], ["--seed", "1.5"], ["--seed", "-2"]])
def test_bad_input_is_one_line_exit_2_nothing_written(argv, tmp_path, capsys):
    out = tmp_path / "out"
    assert exit_code(["train", "induction", *argv, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert not out.exists()


def test_unknown_task_is_a_usage_error(capsys):
    assert exit_code(["train", "attention"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "invalid choice: 'attention'" in captured.err


def test_help_names_the_logs_defaults(capsys):
    """--help is built without numpy, so it spells the defaults out: they must be the log's."""
    assert exit_code(["train", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"{wiring.STEPS} for wiring and {induction.STEPS} for induction" in text
