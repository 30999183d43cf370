"""Hostile input, round three (issue 31), the output side: a file of the learner's where a
command writes is never replaced (their own page, a link of that name, results.log, a
figure), a full disk leaves no stage behind, nothing is printed before a refusal; and the
new commands (ablate, train) hostile from the start.
"""

import os
import subprocess
import sys

import pytest
from hostile import SCRIPT, TIMEOUT, assert_one_line_refusal, tiny_gguf

from attention_workshop import cli

# --- stray output before a refusal ---

def test_tokens_past_the_room_left_print_nothing_before_the_refusal(tmp_path, capsys):
    """The "N prompt tokens; writing up to 256" line came on stdout before the refusal."""
    path = tiny_gguf(tmp_path / "m.gguf")  # 128 positions
    assert_one_line_refusal(["generate", "the bank", "--model", path, "--tokens", "200"],
                            tmp_path, capsys, "--tokens must be a whole number from 1 to")


# --- files of the user's: never replaced ---

OWN = "cannot write '{}': {} of that name is there that attention-workshop did not write " \
      "(or it changed since), and it is never replaced; move or rename it, or choose " \
      "another with --out DIR"


def generate_argv(tmp_path):
    return ["generate", "the bank", "--model", tiny_gguf(tmp_path / "m.gguf"), "--tokens", "2",
            "--out", "D"]


@pytest.fixture
def in_d(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "D").mkdir()
    (tmp_path / "D" / "notes.txt").write_text("the learner's")
    return tmp_path


def test_generate_does_not_replace_the_users_own_page(in_d, capsys):
    (in_d / "D" / "generation.html").write_text("<p>my own page</p>")
    assert_one_line_refusal(generate_argv(in_d), in_d, capsys, OWN.format("D/generation.html",
                                                                          "a file"))


def test_generate_does_not_replace_a_link_of_that_name(in_d, capsys):
    (in_d / "mine.html").write_text("<p>the file it points to</p>")
    (in_d / "D" / "generation.html").symlink_to(in_d / "mine.html")
    assert_one_line_refusal(generate_argv(in_d), in_d, capsys, OWN.format("D/generation.html",
                                                                          "a link"))
    assert (in_d / "D" / "generation.html").is_symlink()


def test_generate_replaces_its_own_page_but_not_once_the_user_changed_it(in_d, capsys):
    argv = generate_argv(in_d)
    assert cli.main(argv) == 0
    first = (in_d / "D" / "generation.html").read_bytes()
    assert cli.main(argv) == 0  # ours, untouched: replaced (by the same page)
    assert (in_d / "D" / "generation.html").read_bytes() == first
    capsys.readouterr()
    (in_d / "D" / "generation.html").write_bytes(first + b"<!-- my note -->")
    assert_one_line_refusal(argv, in_d, capsys, OWN.format("D/generation.html", "a file"))


@pytest.mark.parametrize(("argv", "name"), [
    (["run", "--no-real", "--no-figures"], "results.log"),
    (["explorer", "--no-real"], "explorer.html")], ids=["run", "explorer"])
def test_run_and_explorer_do_not_replace_the_users_own_file(argv, name, in_d, capsys):
    (in_d / "D" / name).write_text("my own\n")
    assert_one_line_refusal([*argv, "--out", "D"], in_d, capsys, OWN.format(f"D/{name}",
                                                                            "a file"))


@pytest.mark.parametrize("name", ["explore_weights.png", "head_view.html"])
def test_a_file_known_only_when_drawn_is_refused_at_the_commit(name, in_d, capsys):
    """explore's and real's names depend on the words: checked as the set is put in place,
    still before anything is printed."""
    from real_folder import write_folder

    (in_d / "D" / name).write_bytes(b"my own")
    argv = ["explore", "the river bank", "--out", "D"] if name.startswith("explore") else \
        ["real", "the river bank", "--model", write_folder(in_d / "model", "bert"), "--out", "D"]
    assert_one_line_refusal(argv, in_d, capsys, OWN.format(f"D/{name}", "a file"))


# --- a full disk: the stage is not left behind ---

def test_a_stage_whose_mark_cannot_be_written_is_removed(in_d, capsys, monkeypatch):
    """0 bytes free: the stage folder is made, its MARK file too, but writing it fails."""
    import errno
    import pathlib

    from attention_workshop import staging

    write_text = pathlib.Path.write_text

    def full(path, *args, **kwargs):
        if path.name == staging.MARK:
            path.touch()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return write_text(path, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "write_text", full)
    assert_one_line_refusal(generate_argv(in_d), in_d, capsys, "cannot write to output folder "
                            "'D' (No space left on device)")


def test_a_full_disk_leaves_no_stage(tmp_path):
    """generate --out on a tmpfs with 0 bytes free (a private mount namespace, as
    tests/test_hostile_outputs.py's full disk)."""
    import shutil

    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs unshare -m (root)")
    model = tiny_gguf(tmp_path / "m.gguf")
    disk = tmp_path / "disk"
    disk.mkdir()
    script = (f"mount -t tmpfs -o size=64k tmpfs {disk} || exit 99; mkdir {disk}/D; "
              f"echo mine > {disk}/D/notes.txt; dd if=/dev/zero of={disk}/fill bs=4k "
              f"2>/dev/null; '{sys.executable}' -m attention_workshop generate 'the bank' "
              f"--model {model} --tokens 2 --out {disk}/D > {tmp_path}/stdout "
              f"2> {tmp_path}/stderr; echo $? > {tmp_path}/rc; ls -A {disk}/D > {tmp_path}/ls")
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                          cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT)
    if done.returncode == 99:
        pytest.skip("cannot mount a tmpfs here")
    err = (tmp_path / "stderr").read_text()
    assert (tmp_path / "rc").read_text() == "2\n" and err.count("\n") == 1, err
    assert "No space left on device" in err, err
    assert (tmp_path / "ls").read_text() == "notes.txt\n"  # no .attention-workshop-new-XXXX


# --- the new surfaces: ablate ---

@pytest.mark.parametrize("choice", [["--heads", "L0H0,L0H1,L0H2,L0H3,L1H0,L1H1,L1H2"],
                                    ["--kind", "induction", "--top", "7"],
                                    ["--kind", "sink", "--top", str(10**21)]],
                         ids=["7 heads of 12", "top 7 of 12", "top 10^21"])
def test_ablate_more_heads_than_the_random_control_can_match(choice, tmp_path, capsys):
    """More than half the heads off left too few others for the random draws: numpy's
    ValueError from rng.choice, a traceback."""
    pytest.importorskip("torch")
    from head_reference import build_causal_gpt2

    build_causal_gpt2(tmp_path / "gpt2", n_layer=3)  # 3 layers x 4 heads
    capsys.readouterr()  # transformers' own lines while building it
    err = assert_one_line_refusal(["ablate", "--model", tmp_path / "gpt2", *choice], tmp_path,
                                  capsys, "the random control")
    assert "give at most 6" in err and "leave -" not in err, err  # 12 heads: half, no negatives


# --- the new surfaces: train ---

@pytest.mark.parametrize(("task", "name"), [("wiring", "learned_wiring.png"),
                                            ("induction", "induction_patterns.png")])
def test_train_refuses_the_users_own_figure_before_it_prints_anything(task, name, in_d,
                                                                      capsys):
    """Its progress lines came on stdout, then the refusal at the swap."""
    (in_d / "D" / name).write_bytes(b"my own")
    assert_one_line_refusal(["train", task, "--steps", "2", "--out", "D"], in_d, capsys,
                            OWN.format(f"D/{name}", "a file"))


def test_train_interrupted_leaves_the_folder_as_it_was(in_d):
    import signal
    import time

    script = SCRIPT
    proc = subprocess.Popen([script, "train", "induction", "--steps", "20000", "--out", "D"],
                            cwd=in_d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(600):  # until it prints its first progress line: training has begun
        time.sleep(0.05)
        if proc.poll() is not None or os.path.exists(in_d / "D") and any(
                p.name.startswith(".attention-workshop-new-") for p in (in_d / "D").iterdir()):
            break
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 130, err
    assert err == "attention-workshop: interrupted; 'D' is as it was (nothing in it changed)\n"
    assert sorted(p.name for p in (in_d / "D").iterdir()) == ["notes.txt"]
