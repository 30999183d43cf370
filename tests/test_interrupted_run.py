"""`run --out D` interrupted or killed at many moments: D is never a mix of two runs.

D starts with a previous complete set (from `run --no-real --figure-format svg`, so it
differs from what the killed `run` writes: no Module 3-5 lines or figures, and svg files where
the run writes png) and a file of the learner's own. After Ctrl-C (to the whole process
group, as a terminal sends it) or SIGTERM, D must be byte for byte the previous set, with no
stray file, and stderr one line saying so; after a SIGKILL the set is still the previous one
(a hidden stage may be left), and the next `run` cleans up and writes the complete new set.
Moments are times after the start (the full `run`: its first seconds load and run the real
models) and states watched in D: the stage exists, results.log is staged, figures are half
drawn. The states are the staging's own, the same whatever modules ran, so those runs skip
the real models (`--no-real`: results.log staged after ~3 s instead of ~10 s on a Zen 3).
"""

import os
import re
import signal
import subprocess
import sys
import time

import pytest
from folders import tree

from attention_workshop import staging

pytest.importorskip("tokenizers")
TIMEOUT = 120  # seconds for one run: a hang fails the test
USER_FILE = {"my notes.txt": b"notes the learner keeps beside the figures"}


def options_for(moment):  # -> run's options: the full run at a time, --no-real at a state
    return () if isinstance(MOMENTS[moment], float) else ("--no-real",)


def run_command(out, *options):
    return subprocess.Popen([sys.executable, "-m", "attention_workshop", "run", "--out", str(out),
                             *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def finished(out, *options):  # the set a run that nothing stops writes into a new folder
    done = run_command(out, *options)
    _, err = done.communicate(timeout=TIMEOUT)
    assert done.returncode == 0, err
    return tree(out)


@pytest.fixture(scope="module")
def all_sets(tmp_path_factory):  # -> (previous set, {options: the complete set they write})
    base = tmp_path_factory.mktemp("sets")
    previous = finished(base / "previous", "--no-real", "--figure-format", "svg")
    return previous, {(): finished(base / "complete"),
                      ("--no-real",): finished(base / "quick", "--no-real")}


def sets_for(all_sets, options):  # -> (previous set, the complete set of a run with options)
    return all_sets[0], all_sets[1][options]


def staged_files(out):  # the files in the stage of a run in progress, or None if none yet
    stages = [p for p in out.glob(".attention-workshop-new-*") if p.is_dir()]
    return sorted(p.name for p in stages[0].iterdir()) if stages else None


MOMENTS = {  # name -> (seconds after the start, or a test of what D shows)
    "0.2 s": 0.2, "0.5 s": 0.5, "1 s": 1.0, "2 s": 2.0, "3 s": 3.0,
    "stage made": lambda files: files is not None,
    "log staged": lambda files: files is not None and "results.log" in files,
    "figures half drawn": lambda files: files is not None and sum(
        name.endswith(".png") for name in files) >= 3,
}


def start_and_stop(tmp_path, sets, moment, how):  # -> (D, the process, its stderr)
    out = tmp_path / "D"
    _copy_previous(sets, out)
    proc = run_command(out, *options_for(moment))
    when = MOMENTS[moment]
    start = time.monotonic()
    while proc.poll() is None and time.monotonic() - start < TIMEOUT:
        if callable(when) and when(staged_files(out)) or not callable(when) and \
                time.monotonic() - start >= when:
            break
        time.sleep(0.005)
    if how == signal.SIGINT:
        with _gone_ok():
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole group
    else:
        with _gone_ok():
            proc.send_signal(how)  # SIGTERM, SIGKILL: the main process only
    proc.stdout_text, err = proc.communicate(timeout=TIMEOUT)
    deadline = time.monotonic() + 10
    while _group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.02)  # the drawing child must not outlive the run (it would keep writing)
    assert not _group_alive(proc.pid), "a process of the killed run is still running"
    return out, proc, err


def _copy_previous(sets, out):
    previous, _ = sets
    out.mkdir()
    for name, data in {**previous, **USER_FILE}.items():
        (out / name).write_bytes(data)


class _gone_ok:  # the run may have ended just before the signal: nothing to stop then
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return kind is ProcessLookupError


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def assert_whole(out, proc, err, sets):
    """D holds exactly one complete set, and the process said which."""
    previous, complete = sets
    now = tree(out)
    assert now.pop("my notes.txt") == USER_FILE["my notes.txt"]  # the learner's file is kept
    if proc.returncode == 0:  # it finished before the signal came
        assert now == complete
        return "finished"
    assert now == previous or now == complete, "a mixed set"
    if proc.returncode < 0:  # the signal's own action: Python had not started the command,
        if now == previous:  # or the command had ended and Python was closing down
            return "killed early"
        assert proc.stdout_text.endswith("or attention-workshop quiz 1\n")  # run's last line
        return "killed as it ended"
    assert err.count("\n") == 1 and "Traceback" not in err, err
    if now == previous:
        assert proc.returncode in (128 + signal.SIGINT, 128 + signal.SIGTERM), err
        assert err in (f"attention-workshop: interrupted; '{out}' is as it was (nothing in "
                       "it changed)\n",  # or before the command began to write anything:
                       "attention-workshop: interrupted; nothing was written\n")
        return "interrupted"
    assert re.fullmatch(r"attention-workshop: interrupted; '.*' holds the new set, complete"
                        r"( \(.*\))?\n", err), err
    return "interrupted after the commit"


STOPS = [(signal.SIGINT, moment) for moment in MOMENTS] + [
    (signal.SIGTERM, moment) for moment in ("1 s", "stage made", "log staged",
                                            "figures half drawn")]


@pytest.mark.parametrize(("how", "moment"), STOPS,
                         ids=[f"{signal.Signals(how).name}-{moment}" for how, moment in STOPS])
def test_interrupt_leaves_the_previous_set_byte_for_byte(tmp_path, all_sets, how, moment):
    sets = sets_for(all_sets, options_for(moment))
    out, proc, err = start_and_stop(tmp_path, sets, moment, how)
    outcome = assert_whole(out, proc, err, sets)
    if callable(MOMENTS[moment]):  # D showed the run in progress: it was stopped mid-run
        assert outcome == "interrupted", (outcome, err)
    elif MOMENTS[moment] <= 1.0:  # mid-run too, unless Python itself was still starting
        assert outcome in ("interrupted", "killed early"), (outcome, err)
    assert staged_files(out) is None  # no stage left, and no other hidden file
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == [".attention-workshop.json"]


@pytest.mark.parametrize("moment", ["0.5 s", "2 s", "log staged", "figures half drawn"])
def test_after_a_sigkill_the_next_run_cleans_up_and_writes_the_whole_set(tmp_path, all_sets,
                                                                         moment):
    sets = sets_for(all_sets, options_for(moment))
    previous, complete = sets
    out, proc, err = start_and_stop(tmp_path, sets, moment, signal.SIGKILL)
    if proc.returncode == 0:
        assert tree(out) == {**complete, **USER_FILE}
    else:
        assert proc.returncode == -signal.SIGKILL and err == ""
        visible = {k: v for k, v in tree(out).items() if not k.startswith(".attention-workshop-")}
        committed = list(out.glob(staging.DONE + "*"))  # killed inside the commit itself
        # the previous set; or the new one, killed as it ended; or a commit the next run ends
        assert visible in ({**previous, **USER_FILE}, {**complete, **USER_FILE}) or committed
    again = subprocess.run([sys.executable, "-m", "attention_workshop", "run", "--out", str(out),
                            *options_for(moment)], capture_output=True, text=True, timeout=TIMEOUT)
    assert again.returncode == 0, again.stderr
    assert tree(out) == {**complete, **USER_FILE}  # nothing left over, nothing missing


def test_two_runs_into_one_folder_both_finish_whole(tmp_path, all_sets):
    """Their commits take turns (a lock on D): D ends as one complete set, never a mix."""
    _, complete = all_sets
    out = tmp_path / "D"
    first, second = run_command(out), run_command(out, "--no-real")
    for proc in (first, second):
        _, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0, err
    assert tree(out) in (complete[()], complete[("--no-real",)])  # whichever committed last
