"""staging.staged: a command's set of files replaced as a whole, or not at all.

Each test writes a previous set, then a new one through `staged`, and compares every byte
of the folder before and after (`tree`); files that are not the command's are never touched.
"""

import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from folders import tree

from attention_workshop import manifest, staging
from attention_workshop.errors import Interrupted, WorkshopError
from attention_workshop.writing import write_atomic

OLD = {"results.log": b"old log\n", "a.png": b"old a", "b.png": b"old b"}
NEW = {"results.log": b"new log\n", "a.png": b"new a"}  # b.png is no longer in the set
MINE = {"notes.txt": b"the learner's own notes", "explore_weights.png": b"explore's figure"}


def listed(sets):  # {command: {name: bytes}} -> the file list's bytes, by hand
    return json.dumps({command: {name: {"bytes": len(data), "sha256": hashlib.sha256(
        data).hexdigest()} for name, data in files.items()} for command, files in sets.items()},
        indent=1, sort_keys=True).encode() + b"\n"


def names(folder):  # {command: [file name]} as the file list has them
    return {command: sorted(files) for command, files in manifest.read(folder).items()}


def write_set(folder, files, command="run"):
    with staging.staged(folder, command) as stage:
        for name, data in files.items():
            write_atomic(stage.path / name, data)
    return stage


@pytest.fixture
def out(tmp_path):  # a folder holding OLD (as run's set) and the learner's own files
    folder = tmp_path / "out"
    write_set(folder, OLD)
    for name, data in MINE.items():
        (folder / name).write_bytes(data)
    return folder


def test_new_set_replaces_the_old_one_whole_and_keeps_other_files(out):
    stage = write_set(out, NEW)
    assert sorted(p.name for p in stage.written) == sorted(NEW)
    assert stage.removed == [out / "b.png"]
    assert tree(out) == {**NEW, **MINE, manifest.NAME: listed({"run": NEW})}


def test_another_commands_set_is_its_own(out):
    write_set(out, {"head_view.html": b"page"}, "real")
    write_set(out, {}, "real")  # real's new set is empty: only its own old file goes
    assert {n: tree(out)[n] for n in (*OLD, *MINE)} == {**OLD, **MINE}
    assert "head_view.html" not in tree(out)
    assert names(out) == {"run": sorted(OLD), "real": []}


def test_a_file_another_commands_set_also_holds_is_kept(out):
    # `explorer --out D` wrote explorer.html, which `run`'s old set lists too: a
    # `run --no-figures` that no longer writes it must not remove the explorer's page
    write_set(out, {**OLD, "explorer.html": b"run's page"})
    write_set(out, {"explorer.html": b"the explorer command's page"}, "explorer")
    stage = write_set(out, NEW)
    assert tree(out)["explorer.html"] == b"the explorer command's page"
    assert stage.removed == [out / "b.png"]
    assert names(out) == {"run": sorted(NEW), "explorer": ["explorer.html"]}
    write_set(out, {}, "explorer")  # now no set holds it: the explorer's next set removes it
    assert "explorer.html" not in tree(out)


def test_a_first_run_that_fails_leaves_no_folder(tmp_path):
    with pytest.raises(RuntimeError), staging.staged(tmp_path / "new", "run") as stage:
        write_atomic(stage.path / "results.log", "half")
        raise RuntimeError("a module failed")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("error", [RuntimeError("a module failed"), KeyboardInterrupt(),
                                   Interrupted(signal.SIGTERM), WorkshopError("bad input")])
def test_failure_or_interrupt_while_writing_changes_nothing(out, error):
    before = tree(out)
    with pytest.raises(type(error) if not isinstance(error, KeyboardInterrupt) else Interrupted) \
            as raised, staging.staged(out, "run") as stage:
        write_atomic(stage.path / "results.log", "new log\n")
        raise error
    assert tree(out) == before
    if isinstance(error, KeyboardInterrupt):
        assert raised.value.left == f"'{out}' is as it was (nothing in it changed)"
        assert raised.value.signum == getattr(error, "signum", signal.SIGINT)


def test_a_folder_in_the_way_is_refused_before_anything_changes(out):
    (out / "a.png").unlink()
    (out / "a.png").mkdir()
    (out / "a.png" / "inside.txt").write_text("kept")
    before = tree(out)
    with pytest.raises(WorkshopError, match=r"cannot write '.*a\.png': a folder of that name "
                                            r"is in the way; move it, or choose another"):
        write_set(out, NEW)
    assert tree(out) == before


def test_a_rename_that_fails_mid_commit_puts_every_file_back(out, monkeypatch):
    before = tree(out)
    real_replace, calls = os.replace, []

    def replace(src, dst):  # results.log, the second file of the set, cannot be replaced
        calls.append(dst)
        if dst == out / "results.log":
            raise PermissionError(errno.EPERM, "Operation not permitted")
        return real_replace(src, dst)

    monkeypatch.setattr(staging.os, "replace", replace)
    with pytest.raises(WorkshopError, match=r"cannot replace '.*results\.log' \(Operation not "
                                            r"permitted\); nothing in '.*' was changed"):
        write_set(out, NEW)
    assert out / "a.png" in calls  # a.png was replaced, then put back
    assert tree(out) == before


def test_an_immutable_file_is_refused_and_nothing_changes(out):
    done = subprocess.run(["chattr", "+i", str(out / "results.log")], capture_output=True)
    if done.returncode != 0:
        pytest.skip("chattr +i is not allowed here")
    try:
        before = tree(out)
        with pytest.raises(WorkshopError, match=r"cannot replace '.*results\.log' \(Operation "
                                                r"not permitted\)"):
            write_set(out, NEW)
        assert tree(out) == before
    finally:
        subprocess.run(["chattr", "-i", str(out / "results.log")], check=True)


def test_no_space_names_the_file_and_says_what_to_do(out, monkeypatch):
    before = tree(out)

    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    with pytest.raises(WorkshopError) as raised, staging.staged(out, "run") as stage:
        full(stage.path / "a.png", b"")
    assert str(raised.value) == (f"cannot write '{out / 'a.png'}' (No space left on device); "
                                 f"nothing in '{out}' was changed; free some space, or choose "
                                 "another with --out DIR")
    assert tree(out) == before


def test_an_interrupt_during_the_commit_waits_for_it_to_end(out, monkeypatch):
    real_finish = staging.finish

    def interrupted_finish(*args):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C just as the files are being renamed
        return real_finish(*args)

    monkeypatch.setattr(staging, "finish", interrupted_finish)
    with pytest.raises(Interrupted) as raised:
        write_set(out, NEW)
    assert raised.value.left.startswith(f"'{out}' holds the new set, complete")
    assert {n: tree(out).get(n) for n in (*OLD, *MINE)} == {**NEW, "b.png": None, **MINE}
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handlers restored


def stage_left_by_a_killed_run(out, kind, files):  # what a SIGKILL leaves at steps 2 and 3
    path = out / f"{kind}killed"
    path.mkdir()
    (path / staging.MARK).write_text("killed\n")
    for name, data in files.items():
        (path / name).write_bytes(data)
    return path


def test_the_next_run_removes_a_stage_a_killed_run_left(out):
    killed = stage_left_by_a_killed_run(out, staging.NEW, {"results.log": b"half"})
    with staging.staged(out, "run") as stage:
        assert not killed.exists()
        assert [p.name for p in out.iterdir() if p.name.startswith(".attention-workshop-")] \
            == [stage.path.name]


def test_the_next_run_finishes_a_commit_a_killed_run_left(out):
    """Killed after the commit point, with results.log already renamed in: the rest follows."""
    (out / "results.log").write_bytes(NEW["results.log"])
    done = stage_left_by_a_killed_run(out, staging.DONE, {
        "a.png": NEW["a.png"], manifest.NAME: listed({"run": NEW}),
        manifest.REMOVALS: json.dumps({"b.png": {"bytes": 5, "sha256": hashlib.sha256(
            b"old b").hexdigest()}}).encode()})
    (done / staging.ASIDE).mkdir()
    staging.recover(out)
    assert tree(out) == {**NEW, **MINE, manifest.NAME: listed({"run": NEW})}


def test_a_stage_whose_writer_still_runs_is_left_alone(out):
    live = stage_left_by_a_killed_run(out, staging.NEW, {"results.log": b"being written"})
    holder = subprocess.Popen(  # another process holds the stage's lock, as a live run does
        [sys.executable, "-c", "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); "
         "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); sys.stdin.read()",
         str(live)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        staging.recover(out)
        assert (live / "results.log").read_bytes() == b"being written"
    finally:
        holder.communicate("")
    staging.recover(out)  # its writer is gone: now it goes
    assert not live.exists()


def test_a_stage_just_made_is_never_taken_for_a_killed_runs(out, monkeypatch):
    """Two runs into one folder: the other run cleans up (recover) while this one has just
    made its stage. The stage is made and locked under the folder's lock, so the other run
    waits, then finds it locked and leaves it (it used to remove it: FileNotFoundError)."""
    made = staging.tempfile.mkdtemp
    other = []

    def mkdtemp(**kw):  # the other run starts its cleanup right after this stage is made
        path = made(**kw)
        code = ("import sys\nfrom pathlib import Path\nfrom attention_workshop import staging\n"
                "folder = Path(sys.argv[1])\nprint('ready', flush=True)\n"
                "with staging._locked(folder):\n    staging.recover(folder)\n"
                "print('recovered', flush=True)\n")
        proc = subprocess.Popen([sys.executable, "-c", code, str(out)], stdout=subprocess.PIPE,
                                text=True)
        assert proc.stdout.readline() == "ready\n"
        time.sleep(0.3)  # time enough to remove an unlocked stage
        other.append(proc)
        return path

    monkeypatch.setattr(staging.tempfile, "mkdtemp", mkdtemp)
    stage = write_set(out, NEW)
    out_text, _ = other[0].communicate(timeout=60)
    assert out_text == "recovered\n" and other[0].returncode == 0
    assert stage.committed and tree(out)["results.log"] == NEW["results.log"]


def without_a_list_the_set_is_not_ours(out):
    """results.log and a.png are no longer known as run's: not replaced, nothing changed;
    once the learner moves them away the new set goes in."""
    before = tree(out)
    with pytest.raises(WorkshopError, match=r"a\.png': a file of that name is there that "
                                            "attention-workshop did not write"):
        write_set(out, NEW)
    assert tree(out) == before
    for name in NEW:
        (out / name).unlink()
    write_set(out, NEW)


def test_a_damaged_file_list_is_taken_as_empty(out):
    (out / manifest.NAME).write_text('{"run": ["../../etc/passwd", "b.png"], "run": []}')
    without_a_list_the_set_is_not_ours(out)
    assert tree(out)["b.png"] == OLD["b.png"]  # not known as run's: kept
    assert names(out) == {"run": sorted(NEW)}


def test_no_space_for_the_file_list_is_one_line_too(out, monkeypatch):
    before = tree(out)

    def full(stage, sets):
        raise OSError(errno.ENOSPC, "No space left on device", str(stage / manifest.NAME))

    monkeypatch.setattr(manifest, "write", full)
    with pytest.raises(WorkshopError) as raised:
        write_set(out, NEW)
    assert str(raised.value) == (f"cannot write to output folder '{out}' (No space left on "
                                 "device); nothing in it was changed; free some space, or "
                                 "choose another with --out DIR")
    assert tree(out) == before


def test_an_interrupt_after_the_commit_says_the_set_is_in_place(out, capsys, monkeypatch):
    """Ctrl-C while `run` prints where its files went: the message must not say nothing was
    written (cli.main, as a user runs it; the interrupt comes from `say`)."""
    from attention_workshop import cli, workshop

    def interrupted_say(text):
        raise KeyboardInterrupt

    real_run = workshop.run_workshop
    monkeypatch.setattr(workshop, "run_workshop", lambda *a, **k: real_run(
        *a, **{**k, "say": interrupted_say, "figures": False, "real": False}))
    assert cli.main(["run", "--out", str(out)]) == 130
    assert capsys.readouterr().err == (f"attention-workshop: interrupted; '{out}' holds the new "
                                       "set, complete\n")
    assert tree(out)["results.log"].startswith(b"[S1]")


@pytest.mark.parametrize("kind", ["new", "done"])
def test_a_learners_folder_named_like_a_stage_is_kept(out, kind):
    """Once deleted (-new-) or emptied over the learner's files (-done-): a stage is ours only
    if it holds MARK naming it, never by its name alone."""
    mine = out / f".attention-workshop-{kind}-mine"
    mine.mkdir()
    (mine / "notes.txt").write_bytes(b"the learner's notes in their own folder")
    (mine / "results.log").write_bytes(b"a log the learner keeps")
    (mine / manifest.NAME).write_text('{"run": ["notes.txt"]}')
    before = tree(mine)
    write_set(out, NEW)
    assert tree(mine) == before
    assert {n: tree(out)[n] for n in (*NEW, *MINE)} == {**NEW, **MINE}


@pytest.mark.parametrize(("mark", "inside"), [(None, "notes.txt"), ("other\n", None),
                                             ("mine\n", "notes.txt"), ("mi", "notes.txt")])
def test_a_stage_named_folder_that_is_not_all_ours_is_kept(out, mark, inside):
    mine = out / ".attention-workshop-new-mine"
    mine.mkdir()
    if mark is not None:
        (mine / staging.MARK).write_text(mark)
    if inside is not None:
        (mine / inside).write_text("the learner's")
    before = tree(mine)
    staging.recover(out)
    if mark == "mine\n":  # marked as a stage of ours: a killed run's, removed whole
        assert not mine.exists()
    else:
        assert tree(mine) == before


@pytest.mark.parametrize("mark", [None, "", "ki"])
def test_a_stage_killed_as_it_was_made_is_removed(out, mark):
    """SIGKILL between making the stage and writing its whole MARK: empty, or the start of
    its MARK alone. Nothing of anyone's can be in it: the next run removes it."""
    begun = out / ".attention-workshop-new-kill"
    begun.mkdir()
    if mark is not None:
        (begun / staging.MARK).write_text(mark)
    staging.recover(out)
    assert not begun.exists()


def test_a_file_the_learner_changed_is_not_removed_with_the_old_set(out):
    (out / "b.png").write_bytes(b"the learner saved their own picture here")
    stage = write_set(out, NEW)  # b.png leaves run's set, but it is no longer what run wrote
    assert stage.removed == []
    assert tree(out)["b.png"] == b"the learner saved their own picture here"


@pytest.mark.parametrize("file_list", [
    '{"run": ["notes.txt", "explore_weights.png"]}',  # an older list: names alone
    json.dumps({"run": {"notes.txt": {"bytes": 5, "sha256": "0" * 64}}}),  # a forged one
], ids=["names alone", "a wrong fingerprint"])
def test_a_copied_or_edited_file_list_removes_no_file_of_the_learner(out, file_list):
    (out / manifest.NAME).write_text(file_list)
    without_a_list_the_set_is_not_ours(out)
    assert {n: tree(out)[n] for n in MINE} == MINE


def test_a_double_fault_says_what_the_folder_holds_and_the_next_run_completes_it(out,
                                                                              monkeypatch):
    """Every rename of the commit after the first fails, so a.png (moved in) cannot be moved
    back: the message names it, and the next command writing there puts the whole new set in."""
    real_replace, calls = os.replace, []

    def replace(src, dst):
        if ".attention-workshop-new-" in str(dst):
            return real_replace(src, dst)  # writing into the stage
        calls.append(dst)
        if len(calls) > 1:
            raise PermissionError(errno.EPERM, "Operation not permitted")
        return real_replace(src, dst)

    monkeypatch.setattr(staging.os, "replace", replace)
    with pytest.raises(WorkshopError) as raised:
        write_set(out, NEW)
    assert str(raised.value) == (
        f"cannot replace '{out / 'results.log'}' (Operation not permitted), and putting the "
        f"previous files back failed too: in '{out}', a.png now the new set's, the rest is as "
        f"it was; the next command writing to '{out}' completes the new set; choose another "
        "with --out DIR")
    now = tree(out)
    assert (now["a.png"], now["results.log"], now["b.png"]) == (NEW["a.png"], OLD["results.log"],
                                                                OLD["b.png"])  # as it says
    monkeypatch.setattr(staging.os, "replace", real_replace)
    write_set(out, {"explore_bank.png": b"explore's new figure"}, "explore")
    now = tree(out)
    assert {n: now.get(n) for n in (*OLD, *MINE, "explore_bank.png")} == {
        **NEW, "b.png": None, **MINE, "explore_bank.png": b"explore's new figure"}
    assert names(out) == {"run": sorted(NEW), "explore": ["explore_bank.png"]}
    assert not [p for p in out.iterdir() if p.name.startswith(".attention-workshop-") and
                p.name != manifest.NAME]  # no stage left


def test_a_failed_first_run_into_a_new_nested_path_leaves_no_parents(tmp_path):
    with pytest.raises(RuntimeError), staging.staged(tmp_path / "a" / "b" / "c", "run") as stage:
        write_atomic(stage.path / "results.log", "half")
        raise RuntimeError("a module failed")
    assert list(tmp_path.iterdir()) == []


def test_an_empty_out_is_refused():
    with pytest.raises(WorkshopError, match="--out '' names no folder"), \
            staging.staged("", "run"):
        pass
