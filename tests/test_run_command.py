"""`attention-workshop run` as a user runs it: files written, bad input refused, nothing lost."""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys

import pytest
from fresh import fresh_python

from attention_workshop import cli, manifest, writing
from attention_workshop.modules import module2
from attention_workshop.workshop import run_workshop

FIGURES = ("bank_split.png", "weights_heatmaps.png", "bank_three_lives.png", "pipeline.png",
           "scaling.png", "learned_wiring.png", "induction_forms.png", "induction_patterns.png")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_run_writes_log_and_figures_and_says_where(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["run", "--out", str(out), "--no-real"]) == 0
    printed = capsys.readouterr().out
    assert f"{out / 'results.log'}" in printed
    for name in FIGURES:
        data = (out / name).read_bytes()
        assert data.startswith(PNG_MAGIC)
        assert str(out / name) in printed
    assert len((out / "results.log").read_text().splitlines()) >= 80
    # no temporary file left; the one hidden file lists the set the next run replaces
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == [".attention-workshop.json"]
    listed = json.loads((out / ".attention-workshop.json").read_text())
    assert listed == {"run": {name: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                              for name in ["results.log", "explorer.html", *FIGURES]
                              for data in [(out / name).read_bytes()]}}  # what it wrote


def test_unwritable_out_is_one_line_and_exit_2(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert cli.main(["run", "--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err and "Traceback" not in err


def test_unknown_option_is_one_line_and_exit_2(capsys):
    assert cli.main(["run", "--colour"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--colour" in err


def test_failed_run_leaves_the_previous_log_untouched(tmp_path, monkeypatch):
    (tmp_path / "results.log").write_text("a good log\n")
    manifest.write(tmp_path, {"run": {"results.log": manifest.fingerprint(
        tmp_path / "results.log")}})  # written by a run (a log of the learner's is never replaced)

    def broken():
        raise RuntimeError("interrupted")

    monkeypatch.setattr(module2, "scaling_experiment", broken)
    with pytest.raises(RuntimeError):
        run_workshop(tmp_path, figures=False, real=False, say=lambda _: None)
    assert (tmp_path / "results.log").read_text() == "a good log\n"


def test_write_atomic_keeps_old_file_when_the_rename_fails(tmp_path, monkeypatch):
    target = tmp_path / "results.log"
    target.write_text("old\n")

    def no_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(writing.os, "replace", no_replace)
    with pytest.raises(OSError):
        writing.write_atomic(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["results.log"]


@pytest.mark.skipif(shutil.which("attention-workshop") is None, reason="script not installed")
def test_installed_script_and_module_entry_point(tmp_path):
    out = tmp_path / "o"
    done = subprocess.run(["attention-workshop", "run", "--no-figures", "--no-real", "--out",
                           str(out)], capture_output=True, text=True, check=True)
    assert "results.log" in done.stdout
    helped = subprocess.run([sys.executable, "-m", "attention_workshop", "--help"],
                            capture_output=True, text=True, check=True)
    assert "run" in helped.stdout


def test_help_does_not_import_heavy_packages():
    code = ("import sys; from attention_workshop import cli; cli.build_parser(); "
            "heavy = [m for m in ('numpy', 'matplotlib', 'torch', 'safetensors', 'tokenizers') "
            "if m in sys.modules]; print(heavy)")
    assert fresh_python(code) == "[]"


def test_the_script_leaves_its_objects_to_the_exit(tmp_path):
    """cli.program (the script, python -m): main, then every object frozen out of the cycle
    collector's sight, so that the exit frees them without visiting each first."""
    argv = ["attention-workshop", "run", "--no-figures", "--no-real", "--out", str(tmp_path)]
    code = (f"import gc, sys; from attention_workshop import cli; sys.argv = {argv!r}; "
            "frozen = gc.get_freeze_count(); code = cli.program(); "
            "print(code, frozen, gc.get_freeze_count() > 10_000)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.splitlines()[-1] == "0 0 True"
    assert (tmp_path / "results.log").is_file()


def test_figure_files_are_imported_in_a_thread_while_the_modules_compute():
    """run_workshop starts figures.preload() first: matplotlib loads beside the modules."""
    code = ("import sys, threading; from attention_workshop import figures; "
            "before = 'matplotlib' in sys.modules; thread = figures.preload(); "
            "thread.join(); print(before, thread is not threading.main_thread(), "
            "all(f'attention_workshop.figures.{n}' in sys.modules for n in figures.FILES))")
    assert fresh_python(code).split() == ["False", "True", "True"]


def test_failed_run_writes_no_figures_and_leaves_no_staging(tmp_path, monkeypatch):
    def broken():
        raise RuntimeError("interrupted")

    monkeypatch.setattr(module2, "scaling_experiment", broken)
    with pytest.raises(RuntimeError):
        run_workshop(tmp_path, figures=True, real=False, say=lambda _: None)
    assert list(tmp_path.iterdir()) == []


def test_figures_are_drawn_here_when_the_second_process_fails(tmp_path, monkeypatch):
    from attention_workshop.figures import parallel

    def crash(jobs):
        if os.getpid() != parent:
            os._exit(3)  # the child dies before drawing anything
        return [draw() for _, _, draw in jobs]

    parent = os.getpid()
    monkeypatch.setattr(parallel, "can_fork", lambda: True)
    monkeypatch.setattr(parallel, "run_jobs", crash)
    paths = run_workshop(tmp_path, figures=True, real=False, say=lambda _: None)
    assert sorted(p.name for p in paths[1:]) == sorted((*FIGURES, "explorer.html"))
    for name in FIGURES:
        assert (tmp_path / name).read_bytes().startswith(PNG_MAGIC)
    hidden = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert hidden == [".attention-workshop.json"]  # the set's list; no stage, no temporary file


def test_an_interrupt_as_the_drawing_process_forks_stops_the_run_and_the_child(tmp_path,
                                                                             monkeypatch):
    """Ctrl-C coming as os.fork ends (inside fork's own hooks Python would print it and go on)
    stops the run: Interrupted, nothing written, and the child already gone."""
    from attention_workshop import interrupts
    from attention_workshop.errors import Interrupted
    from attention_workshop.figures import parallel

    real_fork, children = os.fork, []

    def fork():
        pid = real_fork()
        if pid:
            children.append(pid)
            signal.raise_signal(signal.SIGINT)  # in the parent, as the fork returns
        return pid

    monkeypatch.setattr(parallel, "can_fork", lambda: True)
    monkeypatch.setattr(os, "fork", fork)
    with interrupts.raised(), pytest.raises(Interrupted):
        run_workshop(tmp_path, real=False, say=lambda _: None)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ChildProcessError):  # stopped and waited for before the error came
        os.waitpid(children[0], os.WNOHANG)


def test_figures_from_the_second_process_equal_those_drawn_here(tmp_path, monkeypatch):
    from attention_workshop.figures import parallel

    monkeypatch.setattr(parallel, "can_fork", lambda: True)
    run_workshop(tmp_path / "two", real=False, say=lambda _: None)
    monkeypatch.setattr(parallel, "can_fork", lambda: False)
    run_workshop(tmp_path / "one", real=False, say=lambda _: None)
    for name in (*FIGURES, "explorer.html"):
        assert (tmp_path / "two" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()


def test_split_shares_the_work_longest_first():
    from attention_workshop.figures.parallel import split

    here, there = split([(1, "a", None), (3, "b", None), (2, "c", None), (2, "d", None)])
    assert [j[1] for j in here] == ["b", "a"] and [j[1] for j in there] == ["c", "d"]


def test_failed_run_removes_the_folder_it_created(tmp_path, monkeypatch):
    def broken():
        raise RuntimeError("interrupted")

    monkeypatch.setattr(module2, "scaling_experiment", broken)
    with pytest.raises(RuntimeError):
        run_workshop(tmp_path / "new", figures=True, real=False, say=lambda _: None)
    assert list(tmp_path.iterdir()) == []


def test_a_closed_pipe_is_not_a_traceback():
    pytest.importorskip("tokenizers")
    words = " ".join(["the river bank"] * 15)  # ~2 MB of JSON: far more than a pipe holds
    done = subprocess.run(
        f"'{sys.executable}' -m attention_workshop real '{words}' --format json | head -c 10",
        shell=True, capture_output=True, text=True, check=True)
    assert done.stdout.startswith("{")
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_run_ends_with_what_each_file_shows(tmp_path, capsys):
    """One line per written file, from the figures registry: its name, what it shows, and the
    lesson section it goes with; the results.log lines it cites by number lie in that module's
    section or an earlier one (Module 2's bank_three_lives compares with Module 1's line 46)."""
    import re

    from attention_workshop.figures import registry

    out = tmp_path / "out"
    assert cli.main(["run", "--out", str(out), "--no-real"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("what each file shows, and the lesson section it goes with:")
    listed = [line for line in lines[start + 1:] if line.startswith("  ")]
    shown = {line.split()[0]: line.split(None, 1)[1] for line in listed}
    assert set(shown) == {"results.log", *FIGURES, "explorer.html"}
    assert shown["explorer.html"].startswith("Modules 1-2 and 6: build a sentence")
    assert "Module 3" not in "\n".join(listed) and "1-3" not in "\n".join(listed)
    log = (out / "results.log").read_text().splitlines()
    for name, drawing in registry().items():
        assert drawing.about.startswith(("Module ", "Modules ")), name
        if name in shown:  # Modules 3-5 did not run: a page that can show them says so
            expected = drawing.about.replace("Modules 1-6:", "Modules 1-2 and 6:")
            assert shown[name] == expected
        modules = {int(n) for n in re.findall(r"\d", drawing.about.split(",")[0].split("(")[0])}
        cited = drawing.about.split("log ")[-1].split(")")[0] if "log " in drawing.about else ""
        if cited.startswith("[S"):  # counted in a section: test_module_insertion checks those
            continue
        for a, b in re.findall(r"(\d+)(?:-(\d+))?", cited):
            for number in (int(a), int(b or a)):
                header = next(line for line in reversed(log[:number]) if "Module " in line
                              and line.startswith("[S"))
                assert int(header.split("Module ")[1][0]) <= max(modules), (name, number)


def test_a_page_names_only_the_modules_it_was_drawn_from():
    from attention_workshop.figures import about, registry
    from attention_workshop.modules import module3, module4, module5, module6

    full = registry()["explorer.html"].about
    rest = full.removeprefix("Modules 1-6: ")
    assert full.startswith("Modules 1-6: ") and about("explorer.html") == full
    assert about("explorer.html", [module3.Result, module4.Result, module5.Result]) == (
        "Modules 1-2 and 6: " + rest)
    assert about("explorer.html", [module3.Result, module4.Result, module5.Result,
                                   module6.Result]) == "Modules 1-2: " + rest
    assert about("explorer.html", [module3.Result]) == "Modules 1-2 and 4-6: " + rest
    # a figure that never reads Module 3 keeps its line whatever was skipped
    assert about("scaling.png", [module3.Result]) == registry()["scaling.png"].about
