"""Hostile names and surroundings: text with escape codes or newlines in every kind of
argument, an empty --out, odd quiz input, and the process's environment (a bad MPLBACKEND,
an ASCII-only standard output, a standard output on a full device).

A message holding a user's text shows it as `reading.printable` does (\\x1b, \\n, \\xe9):
one line, and nothing the terminal would act on. The environment cases run the command in a
subprocess, as a shell does.
"""

import os
import subprocess
import sys

import pytest
from hostile import TIMEOUT, assert_one_line_refusal
from real_folder import write_folder

from attention_workshop import cli, manifest

CLEAR = "\x1b[2J"  # clears the screen when printed raw


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "explore_weights.png").write_bytes(b"the previous figure")
    manifest.write(tmp_path / "out", {"explore": {"explore_weights.png": manifest.fingerprint(
        tmp_path / "out" / "explore_weights.png")}})  # explore's own: it may replace it
    (tmp_path / "a\nfile").write_text("a file whose name holds a newline")
    return tmp_path


# argv -> the message's words, with the user's text escaped
ESCAPED = {
    "quiz MODULE with an escape code": (["quiz", CLEAR], "no quiz for module '\\x1b[2J'"),
    "quiz MODULE with a newline": (["quiz", "1\n2"], "no quiz for module '1\\n2'"),
    "run --out under /proc": (["run", "--out", f"/proc/{CLEAR}x"],
                              "output folder '/proc/\\x1b[2Jx'"),
    "explore --out a file named with a newline": (["explore", "the bank", "--out", "a\nfile"],
                                                  "output folder 'a\\nfile' (it exists"),
    "explore --word": (["explore", "the bank", "--word", f"{CLEAR}bank"],
                       "--word '\\x1b[2Jbank' is not in the sentence"),
    "check-lesson FILE": (["check-lesson", f"{CLEAR}.txt", "--log", "none.log"],
                          "cannot read lesson '\\x1b[2J.txt'"),
    "quiz --answers": (["quiz", "1", "--answers", "x\ny.txt"],
                       "cannot read answers file 'x\\ny.txt'"),
    "real --model": (["real", "the bank", "--model", f"no{CLEAR}\nthere"],
                     "'no\\x1b[2J\\nthere'"),
    "quiz MODULE with a byte that is not UTF-8": (["quiz", "\udce9"],
                                                  "no quiz for module '\\xe9'"),
    "explore --word with a byte that is not UTF-8": (["explore", "the bank", "--word", "b\udcff"],
                                                     "--word 'b\\xff' is not in the sentence"),
    "explore --out ''": (["explore", "the bank", "--out", ""], "--out '' names no folder"),
    "run --out ''": (["run", "--out", ""], "--out '' names no folder"),
    "explorer --out ''": (["explorer", "--no-real", "--out", ""], "--out '' names no folder"),
}


@pytest.mark.parametrize("case", ESCAPED)
def test_user_text_in_a_message_is_escaped(case, workspace, capsys):
    argv, needle = ESCAPED[case]
    err = assert_one_line_refusal(argv, workspace, capsys, needle)
    assert "\x1b" not in err and err.count("\n") == 1


def test_argparse_s_own_message_is_escaped_too(capsys):
    assert cli.main(["explore", "the bank", "--format", CLEAR]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "\x1b" not in err
    assert "invalid choice: '\\x1b[2J'" in err


def test_a_lesson_named_with_a_byte_that_is_not_utf8_is_read_and_shown_escaped(workspace,
                                                                              capsys):
    name = os.fsdecode(b"caf\xe9.txt")  # as Python gives such a name from argv
    (workspace / name).write_text("No citations here.\n")
    (workspace / "good.log").write_text("[S1] head\n")
    assert cli.main(["check-lesson", name, "--log", "good.log"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "caf\\xe9.txt: no 'cross-check: results.log ...' citations found"


def test_real_with_an_empty_out_writes_nothing(workspace, capsys):
    folder = write_folder(workspace / "model", "bert")
    assert_one_line_refusal(["real", "the bank", "--model", folder, "--out", ""], workspace,
                            capsys, "--out '' names no folder")


def test_a_module_name_with_spaces_and_capitals_is_the_module(capsys):
    """quiz.resolve's docstring lists " Module1 ": the learner's form, read as Module 1."""
    assert cli.main(["quiz", " Module1 ", "--reveal"]) == 0
    spaced = capsys.readouterr().out
    assert cli.main(["quiz", "1", "--reveal"]) == 0
    assert spaced == capsys.readouterr().out and spaced.startswith("Module 1:")


@pytest.mark.parametrize("answer", ["12345678901234567890123456789.000", "9" * 60 + ".5",
                                    "0." + "4" * 98, "-" + "1" * 40 + "%"])
def test_a_long_numeric_answer_is_graded_not_a_crash(answer, tmp_path, capsys):
    """29 digits and more once raised decimal.InvalidOperation after the title was printed."""
    (tmp_path / "a.txt").write_text(f"3: {answer}\n")
    assert cli.main(["quiz", "1", "--answers", tmp_path / "a.txt"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert f"  wrong: 0.317 (you: {answer})" in out.splitlines()  # softmax([0, .54, .99])[1]


def run_script(argv, cwd, env=(), stdout=subprocess.PIPE):
    return subprocess.run([sys.executable, "-m", "attention_workshop", *argv], cwd=cwd,
                          stdout=stdout, stderr=subprocess.PIPE, timeout=TIMEOUT,
                          env={**os.environ, **dict(env)})


def test_a_bad_mplbackend_does_not_stop_the_figures(workspace):
    done = run_script(["explore", "the river bank", "--out", "out"], workspace,
                      {"MPLBACKEND": "nonsense"})
    assert done.returncode == 0, done.stderr.decode()
    assert (workspace / "out" / "explore_weights.png").read_bytes().startswith(b"\x89PNG")


def test_an_ascii_only_stdout_shows_other_characters_escaped(workspace):
    (workspace / "t.toml").write_text('[words]\n"café" = [0.1, 0.2, 0.3, 0.4]\n', "utf-8")
    done = run_script(["explore", "the café bank", "--table", "t.toml"], workspace,
                      {"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0, done.stderr.decode()
    out = done.stdout.decode("ascii")  # every byte ASCII
    assert "caf\\xe9" in out


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["explore", "the river bank"], ["quiz", "0", "--reveal"]],
                         ids=["explore", "quiz"])
def test_stdout_on_a_full_device_is_one_line(argv, workspace):
    with open("/dev/full", "w") as full:
        done = run_script(argv, workspace, stdout=full)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert err == ("attention-workshop: error: cannot write to standard output (No space left "
                   "on device); free some space, or send the output elsewhere\n")


@pytest.mark.parametrize("argv", [
    ["run", "--no-real", "--no-figures"], ["explore", "the river bank", "--format", "json"],
    ["explorer"]])
def test_the_wrote_lines_print_a_strange_path_on_one_line(tmp_path, capsys, argv):
    """A folder name with a newline and an ESC: every 'wrote PATH' line escapes it."""
    out = tmp_path / "a\nb\x1b[2Jc"
    assert cli.main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr()
    lines = [line for line in (printed.out + printed.err).splitlines() if "wrote" in line]
    assert lines and all("\x1b" not in line and "a\\nb" in line for line in lines)
