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
    assert (out / "explorer.html").is_file()
    assert lines[-1] == f"wrote {out / 'explorer.html'}"


def page_numbers(browser, path):  # -> what the Module 6 panel shows at its last step
    from browser import cells, open_page

    page = (opened := open_page(browser, path)).page
    shown = {"source": page.text_content("#m6-source"),
             "parts": [page.locator(p).count() for p in ("#m6-toy-step", "#m6-step")]}
    for part in ("#m6-toy-step", "#m6-step"):
        if page.locator(part).count():
            page.focus(part)
            page.keyboard.press("End")
            shown[part] = page.text_content(f"{part}-value")
    if page.locator("#m6-step").count():
        shown["scores"] = cells(page, "#m6-scores")
        shown["now"] = page.text_content("#m6-now")
        shown["jump"] = (page.is_disabled("#m6-phase"), page.text_content("#m6-phase"))
    if page.locator("#m6-toy-step").count():
        shown["product"] = cells(page, "#m6-toy-now")
    assert not opened.errors
    return shown


def test_train_induction_out_writes_the_page_of_this_training(browser, tmp_path, capsys):
    """The page opens with Module 6's panel replaying this command's own seed and steps: its
    last step's scores are the command's JSON (its own report of the same training)."""
    out = tmp_path / "out"
    argv = ["train", "induction", "--steps", "60", "--seed", "3", "--format", "json"]
    assert cli.main([*argv, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert captured.err.splitlines()[-1] == f"wrote {out / 'explorer.html'}"
    shown = page_numbers(browser, out / "explorer.html")
    assert shown["source"].startswith("attention-workshop train induction --seed 3 --steps 60:")
    assert shown["parts"] == [0, 1]  # no toy: this command trained the transformer only
    assert report["step"] == [0, 25, 50, 60] and shown["#m6-step"] == "step 60 of 60"
    ind, prev = np.array(report["induction"][-1]), np.array(report["previous"][-1])
    assert shown["scores"] == [[f"{ind[lay, h]:.2f}", f"{prev[lay, h]:.2f}"]
                               for lay in range(2) for h in range(2)]
    assert shown["now"] == (f"Step 60 of 60: held-out loss {report['first_copy_loss'][-1]:.2f} "
                            f"nats on the first copy, {report['second_copy_loss'][-1]:.2f} on "
                            "the second.")
    # 60 steps grow no induction head (no layer-1 score past 0.5): no phase change is named
    assert max(max(scores[1]) for scores in report["induction"]) < 0.5
    assert shown["jump"] == (True, "no phase change in these steps: no induction head has "
                                   "formed (train longer)")


def test_train_wiring_out_writes_the_page_of_this_training(browser, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["train", "wiring", "--steps", "40", "--seed", "2", "--out", str(out),
                     "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(p.name for p in out.glob("[!.]*")) == ["explorer.html", "learned_wiring.png"]
    shown = page_numbers(browser, out / "explorer.html")
    assert shown["source"].startswith("attention-workshop train wiring --seed 2 --steps 40:")
    assert shown["parts"] == [1, 0] and shown["#m6-toy-step"] == "step 40 of 40"
    product = np.array(report["W_Q"]) @ np.array(report["W_K"]).T
    assert shown["product"] == [[f"{v:.3f}" if f"{v:.3f}" != "-0.000" else "0.000" for v in row]
                                for row in product]


def test_an_unwritable_out_is_one_line_exit_2_before_training(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("mine\n")
    assert cli.main(["train", "induction", "--out", str(blocker / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert "a-file" in captured.err and blocker.read_text() == "mine\n"


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


def test_a_learners_own_explorer_html_is_refused_before_training(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "explorer.html").write_text("my notes\n")
    assert cli.main(["train", "induction", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert "explorer.html" in captured.err
    assert sorted(p.name for p in out.iterdir()) == ["explorer.html"]
    assert (out / "explorer.html").read_text() == "my notes\n"
