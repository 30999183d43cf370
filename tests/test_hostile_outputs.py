"""Hostile output folders for `run`, `explore`, `real` and check-lesson: a folder where a file
goes, an immutable file, a full disk, a file or a loop where the folder goes, no permission.

Each: exit 2, one stderr line naming the path and what to do, no traceback, nothing on
stdout, and the previous set (with the learner's own file) byte for byte as it was. Then a
few runs that must succeed where they once failed or hung.
"""

import os
import shutil
import subprocess
import sys
import tarfile

import pytest
from folders import tree
from hostile import TIMEOUT, assert_one_line_refusal, run_command, without_dac_override
from real_folder import write_folder

from attention_workshop import cli, manifest

PREVIOUS = {"results.log": b"the previous log\n", "scaling.png": b"the previous scaling",
            "pipeline.png": b"the previous pipeline", "explore_weights.png": b"previous",
            "explore_bank.png": b"previous bank", "head_view.html": b"the previous page",
            "real_layer0.png": b"the previous grid", "explorer.html": b"the previous page too",
            "my notes.txt": b"the learner's own"}
RUN = ["run", "--no-real"]
EXPLORE = ["explore", "the river bank", "--word", "bank"]
EXPLORER = ["explorer", "the money bank", "--no-real"]


# whose set each file of PREVIOUS is: the file list says they were written by a command (a
# file no list holds is the learner's, never replaced: tests/test_hostile_round3.py)
SETS = {"run": ["results.log", "scaling.png", "pipeline.png", "explorer.html"],
        "explore": ["explore_weights.png", "explore_bank.png"],
        "real": ["head_view.html", "real_layer0.png", "explorer.html"]}


@pytest.fixture
def workspace(tmp_path, monkeypatch):  # tmp_path/D holds a previous set of every command
    monkeypatch.chdir(tmp_path)
    (tmp_path / "D").mkdir()
    for name, data in PREVIOUS.items():
        (tmp_path / "D" / name).write_bytes(data)
    manifest.write(tmp_path / "D", {command: {n: manifest.fingerprint(tmp_path / "D" / n)
                                              for n in names} for command, names in SETS.items()})
    return tmp_path


def real_argv(workspace):
    return ["real", "the river bank", "--model", write_folder(workspace / "model", "bert")]


def in_the_way(workspace, name):  # a folder (with a file inside) where the set's file goes
    (workspace / "D" / name).unlink()
    (workspace / "D" / name).mkdir()
    (workspace / "D" / name / "inside.txt").write_text("kept")


@pytest.mark.parametrize(("command", "name"), [
    ("run", "results.log"), ("run", "scaling.png"), ("explore", "explore_weights.png"),
    ("explore", "explore_bank.png"), ("real", "head_view.html"), ("real", "real_layer0.png"),
    ("real", "explorer.html"), ("explorer", "explorer.html"),
])
def test_a_folder_where_a_file_goes(command, name, workspace, capsys):
    in_the_way(workspace, name)
    argv = {"run": RUN, "explore": EXPLORE, "explorer": EXPLORER}.get(command) or \
        real_argv(workspace)
    assert_one_line_refusal([*argv, "--out", "D"], workspace, capsys,
                            f"cannot write 'D/{name}': a folder of that name is in the way; "
                            "move it, or choose another with --out DIR")


@pytest.mark.parametrize(("command", "name"), [
    ("run", "results.log"), ("run", "pipeline.png"), ("explore", "explore_weights.png"),
    ("real", "head_view.html")])
def test_an_immutable_file(command, name, workspace, capsys):
    target = workspace / "D" / name
    if subprocess.run(["chattr", "+i", str(target)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not allowed here")
    try:
        argv = {"run": RUN, "explore": EXPLORE}.get(command) or real_argv(workspace)
        assert_one_line_refusal([*argv, "--out", "D"], workspace, capsys,
                                f"cannot replace 'D/{name}' (Operation not permitted); nothing "
                                "in 'D' was changed")
    finally:
        subprocess.run(["chattr", "-i", str(target)], check=True)


@pytest.mark.parametrize(("make", "needle"), [
    (lambda d: d.write_text("a file") and d, "cannot write to output folder 'out' (it exists "
     "and is not a folder)"),
    (lambda d: d.write_text("a file") and d / "sub", "(Not a directory)"),
    (lambda d: d.symlink_to(d.name) or d, "(it exists and is not a folder)"),  # a loop
    (lambda d: d.symlink_to("nowhere/at/all") or d, "(it exists and is not a folder)"),
    (lambda d: d.parent / ("o" * 300), "(File name too long)"),
], ids=["a file", "under a file", "a link loop", "a broken link", "300 characters"])
@pytest.mark.parametrize("command", ["run", "explore", "real"])
def test_no_folder_can_be_made_there(make, needle, command, workspace, capsys):
    out = make(workspace / "out")
    argv = {"run": RUN, "explore": EXPLORE}.get(command) or real_argv(workspace)
    err = assert_one_line_refusal([*argv, "--out", out.relative_to(workspace)], workspace,
                                  capsys, needle)
    assert err.endswith("; choose another with --out DIR\n")


@pytest.mark.skipif(os.name != "posix", reason="file modes")
@pytest.mark.parametrize("command", ["run", "explore"])
def test_a_folder_without_write_permission(command, workspace, capsys):
    (workspace / "D").chmod(0o555)
    try:
        assert_one_line_refusal([*({"run": RUN, "explore": EXPLORE}[command]), "--out", "D"],
                                workspace, capsys, "cannot write to output folder 'D' "
                                "(Permission denied); choose another with --out DIR",
                                subprocess_run=True)
    finally:
        (workspace / "D").chmod(0o755)


def test_check_lesson_in_a_read_only_folder_says_what_it_can_take(workspace, capsys):
    lesson = workspace / "lesson.txt"
    lesson.write_text("See (cross-check: results.log line 3).\n")
    workspace.chmod(0o555)
    try:
        err = assert_one_line_refusal(["check-lesson", lesson], workspace, capsys,
                                      "cannot write to output folder 'workshop-output' "
                                      "(Permission denied); give an existing log with --log "
                                      "PATH, or run check-lesson where you can write",
                                      subprocess_run=True)
    finally:
        workspace.chmod(0o755)
    assert "--out" not in err  # an option check-lesson does not have


def test_a_full_disk(workspace, tmp_path):
    """run --out on a 256 KB tmpfs holding the previous set (in a private mount namespace, so
    nothing outlives the test): the figures do not fit."""
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs unshare -m (root)")
    disk, after = tmp_path / "disk", tmp_path / "after"
    disk.mkdir()
    script = (f"mount -t tmpfs -o size=256k tmpfs {disk} || exit 99; cp -a D {disk}/D; "
              f"'{sys.executable}' -m attention_workshop run --no-real --out {disk}/D "
              f"> {disk}/stdout 2> {disk}/stderr; echo $? > {disk}/rc; "
              f"tar -C {disk} -cf {tmp_path}/after.tar .")
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                          cwd=workspace, capture_output=True, text=True, timeout=TIMEOUT)
    if done.returncode == 99:
        pytest.skip("cannot mount a tmpfs here")
    with tarfile.open(tmp_path / "after.tar") as tar:
        tar.extractall(after, filter="data")
    err = (after / "stderr").read_text()
    assert (after / "rc").read_text() == "2\n" and (after / "stdout").read_text() == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "(No space left on device); nothing in" in err and "free some space, or choose " \
        "another with --out DIR" in err, err
    assert tree(after / "D") == tree(workspace / "D")  # the previous set, byte for byte


def test_other_files_in_the_folder_are_kept(workspace, capsys):
    """A run replaces its own set; the learner's notes and other commands' files stay."""
    assert cli.main([*EXPLORE, "--out", "D"]) == 0
    capsys.readouterr()
    now = tree(workspace / "D")
    for name in ("results.log", "scaling.png", "head_view.html", "my notes.txt"):
        assert now[name] == PREVIOUS[name]
    assert now["explore_weights.png"].startswith(b"\x89PNG")


def test_a_fifo_named_like_the_file_list_does_not_hang(workspace, capsys):
    for name in (manifest.NAME, "explore_weights.png", "explore_bank.png"):  # no list: explore
        (workspace / "D" / name).unlink()  # could not replace its own previous figures
    os.mkfifo(workspace / "D" / manifest.NAME)
    code, _, err = run_command([*EXPLORE, "--out", "D"], workspace, capsys, subprocess_run=True)
    assert code == 0, err


def test_a_300_character_word_gets_a_short_file_name(workspace, capsys):
    word = "w" * 300
    (workspace / "t.toml").write_text(f'[words]\n{word} = [0.1, 0.2, 0.3, 0.4]\n'
                                      'bank = [0.3, 0.3, 0.9, 0.0]\n')
    argv = ["explore", f"{word} bank", "--table", "t.toml", "--word", word, "--out", "D"]
    assert cli.main(argv) == 0, capsys.readouterr().err
    names = [p.name for p in (workspace / "D").glob("explore_ww*.png")]
    assert len(names) == 1 and len(names[0]) < 70 and names[0].startswith("explore_" + "w" * 40)


def test_a_read_only_run_lets_root_bypass_nothing(workspace):
    """The helper the permission tests rely on really drops root's override (or skips)."""
    if os.geteuid() != 0:
        pytest.skip("not root")
    (workspace / "secret").write_text("x")
    (workspace / "secret").chmod(0)
    probe = subprocess.run([sys.executable, "-c", "open('secret').read()"], cwd=workspace,
                           capture_output=True, preexec_fn=without_dac_override, timeout=TIMEOUT)
    assert probe.returncode != 0


def test_labels_with_dollars_draw_as_typed(workspace, capsys, monkeypatch):
    """Math text once broke on "$5 ... $3" (a traceback after half the figures were written)."""
    from attention_workshop.figures import toy

    words = ["$5", "#12", "$\\alpha_{", "and", "$3"]
    table = "".join(f'"{w}" = [{i / 10}, 0.1, 0.2, 0.3]\n' for i, w in enumerate(words))
    (workspace / "t.toml").write_text("[words]\n" + table.replace("\\", "\\\\"))
    drawn, save = [], toy.save
    monkeypatch.setattr(toy, "save", lambda fig, path: drawn.append(fig) or save(fig, path))
    argv = ["explore", " ".join(words), "--table", "t.toml", "--word", "$3", "--out", "D"]
    assert cli.main(argv) == 0, capsys.readouterr().err
    weights, lives = drawn
    shown = [t.get_text() for t in weights.axes[0].get_yticklabels()]
    assert shown == [w.lower() for w in words]  # explore lower-cases words
    assert not any(t.get_parse_math() for fig in drawn for t in fig.findobj(match=type(
        weights.axes[0].title)))
    assert lives.axes[0].get_title() == '$3\'s three lives in "$5 #12 $\\alpha_{ and $3"'


def test_one_layer_one_head_one_token_still_draws(workspace, capsys):
    folder = write_folder(workspace / "model", "gpt2", n_layer=1, n_head=1)
    assert cli.main(["real", "bank", "--model", str(folder), "--out", "D"]) == 0
    out, err = capsys.readouterr()
    assert "tokens (1): bank" in out
    assert (workspace / "D" / "real_layer0.png").read_bytes().startswith(b"\x89PNG")
    assert err.splitlines() == ["wrote D/real_layer0.png", "wrote D/head_view.html",
                                "wrote D/explorer.html"]


def test_real_from_to_with_a_300_character_word(workspace, capsys):
    from attention_workshop.errors import WorkshopError
    from attention_workshop.real import catalog

    try:
        catalog.minilm_folder()
    except WorkshopError:
        pytest.skip("MiniLM's weights are not installed")
    word = "river" * 60
    assert cli.main(["real", f"the {word} bank", "--from", "bank", "--to", word, "--out",
                     "D"]) == 0, capsys.readouterr().err
    names = [p.name for p in (workspace / "D").glob("real_bank_*_heads.png")]
    assert len(names) == 1 and len(names[0]) < 80
